import { LitElement, html, isServer, type PropertyValues } from 'lit';
import { ClipboardController } from './controllers/clipboard.ts';
import { environmentOf, type PixEnvironment } from './controllers/environment.ts';
import { LocaleController } from './controllers/locale.ts';
import { PhoneScreenController } from './controllers/phone-screen.ts';
import { PaymentSessionController } from './controllers/payment-session.ts';
import type { PaymentView } from './shared/contract.ts';
import { ScreenController } from './controllers/screen.ts';
import { TakeoverController } from './controllers/takeover.ts';
import { paymentInPage } from './early.ts';
import { PixCopyEvent } from './events.ts';
import type { Translation } from './locales/index.ts';
import { later } from './load-later.ts';
import { markOnce } from './marks.ts';
import { qrPath } from './qr.ts';
import type { Screen } from './screens.ts';
import { styles } from './pix-checkout.styles.ts';
import { CodeOnScreen } from './views/code.ts';
import { renderScreen } from './views/screens.ts';

/** What the customer sees; also the element's custom state (`:state(paid)`): src/screens.ts lists them. */
export type PixScreen = Screen;

/**
 * A Pix payment: the QR code drawn locally, the copy-and-paste code with a copy button, a countdown to
 * the code's expiry and the live status, until the payment is paid, expired or canceled.
 *
 * @element pix-checkout
 * @fires pix-created - A payment is on screen; detail: `{payment, resumed, renewal}`.
 * @fires pix-status-change - The status changed; detail: `{payment, previous}`.
 * @fires pix-paid - The payment is paid; detail: `{payment}`. Confirm it on your server before shipping.
 * @fires pix-expired - The code expired unpaid; detail: `{payment, renewalsLeft}`.
 * @fires pix-canceled - The payment was canceled; detail: `{payment}`.
 * @fires pix-copy - The customer pressed copy; detail: `{copied, method}`.
 * @fires pix-save - The customer saved the QR as an image ("Salvar QR Code"); detail: `{method}`, `share` or `download`.
 * @fires pix-error - Something failed; detail: `{code, message, fields?, fatal}` (`renewals_exhausted`, not fatal: no new code; `share_failed`, not fatal: the share sheet, or saving the QR, failed).
 * @slot header - Content above the payment.
 * @slot footer - Content below the payment.
 * @slot paid - Replaces the "you paid R$ x" line of the paid screen.
 * @csspart base - The wrapper.
 * @csspart amount - The value, in BRL.
 * @csspart favoured - "Paying LOJA X" under the amount: who is being paid.
 * @csspart status - The status line (focused when the screen changes while focus is in the widget).
 * @csspart hint - Secondary text under the status.
 * @csspart countdown - The time left.
 * @csspart progress - The bar of time left.
 * @csspart more-time-button - "I need more time": a new code now, offered in a code's last two minutes when one can be had.
 * @csspart qr - The QR code: inline SVG, or the service's image when the code could not be checked.
 * @csspart scan-hint - The text under the QR code.
 * @csspart code-label - The label of the code field.
 * @csspart code - The copy-and-paste code field.
 * @csspart copy-button - The copy button.
 * @csspart copy-hint - Shown when copying failed: copy by hand.
 * @csspart share-button - Shares the code and the hosted page's link (Web Share API; only where the browser has it).
 * @csspart save-button - "Salvar QR Code": saves the QR, the amount and who is paid as an image (phone layout only).
 * @csspart checkout-link - The link to the service's hosted payment page.
 * @csspart renew-button - "Generate a new code" on the expired screen.
 * @csspart retry-button - "Try again" on the error screen.
 * @csspart receipt - The paid screen's receipt: amount, who was paid, date and time, reference.
 * @csspart print-button - "Print or save receipt" on the paid screen.
 * @cssproperty --pix-accent - Buttons, links, the progress bar.
 * @cssproperty --pix-on-accent - Text on accent-coloured buttons.
 * @cssproperty --pix-color - Text.
 * @cssproperty --pix-background - Background.
 * @cssproperty --pix-muted-color - Secondary text.
 * @cssproperty --pix-border-color - Field and card borders.
 * @cssproperty --pix-success-color - The paid status.
 * @cssproperty --pix-danger-color - Errors and expiry.
 * @cssproperty --pix-radius - Corner radius.
 * @cssproperty --pix-font-family - Font.
 * @cssproperty --pix-qr-size - Largest side of the QR code.
 * @cssstate loading - A payment is being created or resumed.
 * @cssstate pending - Waiting for the customer to pay.
 * @cssstate paid - Paid (as the proxy reports; confirm on your server).
 * @cssstate expired - The code expired unpaid.
 * @cssstate canceled - The payment was canceled.
 * @cssstate error - Creating or loading the payment failed.
 * @cssstate unverified - A new code was refused while an earlier one may still be paid: confirming it, asking again by itself.
 * @cssstate reconnecting - Status checks are failing or the browser is offline.
 */
export class PixCheckout extends LitElement {
  static override styles = styles;

  static override properties = {
    endpoint: { type: String },
    checkout: { type: String },
    payment: { type: Object, noAccessor: true },
    paymentFrom: { type: String, attribute: 'payment-from' },
    amount: { type: Number },
    description: { type: String },
    locale: { type: String, reflect: true },
    renewals: { type: Number },
    mode: { type: String, reflect: true },
    layout: { type: String, reflect: true },
    theme: { type: String, reflect: true },
    texts: { attribute: false },
    environment: { attribute: false },
    announcement: { state: true },
    timeAnnouncement: { state: true },
  };

  /** Base URL of the proxy's browser API, e.g. `/api` or `https://shop.example/api`. */
  declare endpoint: string;
  /**
   * The checkout's id (`co_…`), from the merchant's server: checkout mode, the recommended one. The
   * server fixed the amount; the widget sends none, and ignores `amount`, `description` and `renewals`.
   */
  declare checkout: string | null | undefined;
  /**
   * The id of a `<script type="application/json">` element in the page holding the payment the
   * merchant's server already has (its checkout's `payment`): shown at once, as the `payment`
   * attribute would be, for pages whose server writes the payment but not the widget's markup. A
   * missing element or one that holds no payment view changes nothing: the payment is asked for.
   */
  declare paymentFrom: string | undefined;
  /** Value in reais (open-amount mode, when there is no `checkout`), e.g. `10.5`. */
  declare amount: number | undefined;
  /** Text printed on the customer's proof of payment (at most 50 characters; open-amount mode). */
  declare description: string | undefined;
  /** `pt-BR` (default), `en` or `es` (any tag starting so). */
  declare locale: string;
  /**
   * Open-amount mode: how many new codes the customer may generate after one expires (default 2; 0
   * hides the button). In checkout mode the proxy's PIX_RENEWALS decides.
   */
  declare renewals: number;
  /** `full` (default), or `link`: only a link to the service's hosted payment page, then the result. */
  declare mode: 'full' | 'link';
  /** `auto` (default: copy first on narrow or touch screens, QR first otherwise), `phone` or `desktop`. */
  declare layout: 'auto' | 'phone' | 'desktop';
  /** `auto` (default: follows prefers-color-scheme), `light` or `dark`. */
  declare theme: 'auto' | 'light' | 'dark';
  /** Texts merged over the locale's, e.g. `{paid: 'Obrigado!'}`. */
  declare texts: Partial<Translation>;
  /** Time, network, clipboard, Web Share and storage; replace parts in tests (see src/controllers/environment.ts). */
  declare environment: Partial<PixEnvironment>;

  declare protected announcement: string;
  declare protected timeAnnouncement: string;

  readonly #phone = new PhoneScreenController(this);
  readonly #code = new CodeOnScreen();
  readonly #takeover: TakeoverController;
  /** A payment given to show (the `payment` property or attribute), until it is shown. */
  #given: PaymentView | null = null;

  readonly #env = environmentOf(() => this.environment);
  readonly #i18n = new LocaleController(this);
  readonly #clipboard = new ClipboardController(this, this.#env);
  readonly #session = new PaymentSessionController(this, {
    env: this.#env,
    i18n: this.#i18n,
    clipboard: this.#clipboard,
    announce: (text) => (this.announcement = text),
  });

  constructor() {
    super();
    // Custom states, performance marks and focus after each update: it works through the update callbacks alone.
    new ScreenController(this, this.#session);
    this.#takeover = new TakeoverController(this);
    this.endpoint = '';
    this.locale = 'pt-BR';
    this.renewals = 2;
    this.mode = 'full';
    this.layout = 'auto';
    this.theme = 'auto';
    this.texts = {};
    this.environment = {};
    this.announcement = '';
    this.timeAnnouncement = '';
  }

  /**
   * The payment on screen (null before one). Set it (or the `payment` attribute, as JSON) to the
   * payment the merchant's server already holds (its checkout's `payment`): it is shown at once, with
   * no request for it, and its status followed live. A server-rendered widget (`renderPixCheckout`,
   * pix-checkout-server/render) carries it; its `pix-created` may fire before the page's own script
   * listens, so a page reads this on start.
   */
  get payment(): PaymentView | null {
    return this.#session.payment ?? this.#given;
  }
  set payment(payment: PaymentView | null | undefined) {
    this.#given = payment ?? null;
    this.requestUpdate('payment');
  }

  /** A phone's screen, as the merchant's server guessed it (pix-checkout-server/render); the browser asks its own. */
  protected set phoneScreen(phone: boolean) {
    this.#phone.matches = phone;
  }

  /** What the customer sees now. */
  get screen(): PixScreen {
    return this.#session.screen;
  }

  /**
   * Shows the checkout's payment: the one saved for this page (after a reload) or a new one. With
   * `renew`, always a new one (the customer asked for a new code after the last expired).
   */
  start(renew = false): Promise<void> {
    return this.#session.start(renew);
  }

  override connectedCallback(): void {
    super.connectedCallback();
    // Lit's SSR calls it only when asked to (litSsrCallConnectedCallback): the server has no screen.
    if (isServer) return;
    // Performance marks: bench/widget-timing.ts reads them (connected -> QR painted, paid shown).
    performance.mark('pix-checkout:connected');
    if (!this.#given && !this.#session.payment && !this.#takeover.serverMarkup) this.#given = paymentInPage(this, this.paymentFrom);
  }

  #copy(): void {
    const code = this.#session.payment?.brcode;
    if (!code) return;
    // Synchronously inside the click: the Clipboard API needs the tap's user activation.
    void this.#clipboard.copyCode(code, this.renderRoot.querySelector('textarea')).then((method) => {
      const copied = method !== 'manual';
      this.announcement = copied ? this.#i18n.t.copied : this.#i18n.t.copyFailed;
      this.dispatchEvent(new PixCopyEvent({ copied, method }));
    });
  }

  /** Resolves once rendered and, with a payment on screen, once its status is followed (a chunk of its own). */
  protected override async getUpdateComplete(): Promise<boolean> {
    const complete = await super.getUpdateComplete();
    await this.#session.followed;
    // The later chunk's arrival renders once more (the buttons and screens it brings).
    return (this.isUpdatePending ? await super.getUpdateComplete() : true) && complete;
  }

  protected override createRenderRoot() {
    this.#takeover.claim();
    return super.createRenderRoot();
  }

  /**
   * A server-rendered widget keeps the server's markup, and a given payment waits, until the page's
   * language is at hand: no flash of another. The first screen a page's head put in
   * (renderPaymentRequest) stays until the payment it shows is here to take its place: no loading
   * screen in between.
   */
  protected override shouldUpdate(changed: PropertyValues<this>): boolean {
    if (changed.has('locale') || changed.has('texts')) this.#i18n.applyTexts();
    if (this.#takeover.serverMarkup && !this.#given && this.screen === 'loading') {
      this.#session.startIfNew();
      return false;
    }
    return !(this.#takeover.serverMarkup || this.#given) || this.#i18n.hasTranslation;
  }

  protected override willUpdate(changed: PropertyValues<this>): void {
    // The server calls willUpdate alone (no shouldUpdate); in the browser shouldUpdate took the language.
    if (isServer && (changed.has('locale') || changed.has('texts'))) this.#i18n.applyTexts();
    // The merchant's server's payment: shown as is, with no request for it.
    // The same payment again (a framework setting the attribute anew) changes nothing: the stream follows it.
    if (this.#given && this.#given.reference !== this.#session.payment?.reference) this.#session.adopt(this.#given);
    this.#given = null;
    // A new endpoint, checkout, amount or description (the last two in open-amount mode) is a new checkout.
    this.#session.startIfNew();
    // Once the later chunk is here (the first announcement is minutes away).
    const said = later?.announceTimeLeft(this.#session, this.#i18n.t);
    if (said) this.timeAnnouncement = said;
  }

  protected override firstUpdated(): void {
    markOnce('pix-checkout:rendered');
    // A payment given with the page is on screen already: nothing to wait for, nothing to warm up.
    if (this.#session.payment) return;
    // The payment's request is already on the wire (willUpdate started it): a page's own currency
    // tag needs Intl, whose first formatter loads the locale's data (tens of ms on a phone-class
    // CPU): built now, while we wait, not between the answer and the QR (src/money.ts covers ours).
    this.#i18n.formatMoney(0);
    // The QR encoder's first run is its slowest (the engine compiles it as it goes): a small symbol
    // now, while the request is out, halves the real one's time once the answer is here.
    qrPath('pix-checkout');
  }

  override render() {
    const screen = this.screen;
    return html`<div part="base" class=${screen} aria-busy=${screen === 'loading'}>
      <slot name="header"></slot>
      ${renderScreen(screen, {
        host: this,
        copyFirst: this.layout === 'phone' || (this.layout !== 'desktop' && this.#phone.matches),
        i18n: this.#i18n,
        session: this.#session,
        code: this.#code,
        clipboard: this.#clipboard,
        env: this.#env(),
        copy: () => this.#copy(),
      })}
      <p class="sr-only" role="status">${this.announcement}</p>
      <p class="sr-only" aria-live="polite">${this.timeAnnouncement}</p>
      <slot name="footer"></slot>
    </div>`;
  }
}
