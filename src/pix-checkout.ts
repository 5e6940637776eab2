import { LitElement, html, nothing, svg, type PropertyValues } from 'lit';
import { ProxyClient, ProxyError } from './api/client.ts';
import { ClipboardController } from './controllers/clipboard.ts';
import { CountdownController, announcementSlot, formatTimeLeft, splitSeconds } from './controllers/countdown.ts';
import { defaultEnvironment, type PixEnvironment } from './controllers/environment.ts';
import { StatusController, type Connection } from './controllers/status.ts';
import { PixCanceledEvent, PixCopyEvent, PixCreatedEvent, PixErrorEvent, PixExpiredEvent, PixPaidEvent, PixStatusChangeEvent } from './events.ts';
import { loadLocale, localeFor, ptBR, type Translation } from './locales/index.ts';
import { formatBrl } from './money.ts';
import { qrPath, type QrPath } from './qr.ts';
import { checkBrCode, type BrCodeCheck } from './shared/brcode.ts';
import type { PaymentView } from './shared/contract.ts';
import { styles } from './pix-checkout.styles.ts';

/** `exhausted`: checkout mode, the proxy will issue no new code (409 renewals_exhausted); shown as expired. */
type Phase = 'idle' | 'loading' | 'ready' | 'error' | 'exhausted';
/** What the customer sees; also the element's custom state (`:state(paid)`). */
export type PixScreen = 'loading' | 'pending' | 'paid' | 'expired' | 'canceled' | 'error';

/** What survives a reload in sessionStorage (open-amount mode): the payment on screen and the renewals used. */
interface Saved {
  reference: string;
  renewals: number;
}

/** Narrow or touch screens: the customer cannot scan their own screen, so copy comes first. */
const PHONE_QUERY = '(max-width: 40rem), (pointer: coarse)';

/**
 * Seconds left on a pending code when "I need more time" is offered (WCAG 2.2.1 Timing Adjustable asks
 * for at least 20 s of warning and a simple action to extend; two minutes leave time to act on it).
 */
const MORE_TIME_AT_S = 120;

/**
 * The first-QR phases (request sent, payment answered, QR encoded) as Performance marks, once per
 * page: bench/widget-timing.ts reads them to show where connected -> QR painted goes. Only the first
 * of each counts, so a renewal or a second widget does not move the figure.
 */
function markOnce(name: string): void {
  if (performance.getEntriesByName(name, 'mark').length === 0) performance.mark(name);
}

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
 * @fires pix-error - Something failed; detail: `{code, message, fields?, fatal}` (`renewals_exhausted`, not fatal: no new code; `share_failed`, not fatal: the share sheet failed).
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
 * @cssstate reconnecting - Status checks are failing or the browser is offline.
 */
export class PixCheckout extends LitElement {
  static override styles = styles;

  static override properties = {
    endpoint: { type: String },
    checkout: { type: String },
    amount: { type: Number },
    description: { type: String },
    locale: { type: String, reflect: true },
    renewals: { type: Number },
    mode: { type: String, reflect: true },
    layout: { type: String, reflect: true },
    theme: { type: String, reflect: true },
    texts: { attribute: false },
    environment: { attribute: false },
    phase: { state: true },
    payment: { state: true },
    announcement: { state: true },
    timeAnnouncement: { state: true },
    connection: { state: true },
    phoneScreen: { state: true },
  };

  /** Base URL of the proxy's browser API, e.g. `/api` or `https://shop.example/api`. */
  declare endpoint: string;
  /**
   * The checkout's id (`co_…`), from the merchant's server: checkout mode, the recommended one. The
   * server fixed the amount; the widget sends none, and ignores `amount`, `description` and `renewals`.
   */
  declare checkout: string | null | undefined;
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

  declare protected phase: Phase;
  declare protected payment: PaymentView | null;
  declare protected announcement: string;
  declare protected timeAnnouncement: string;
  declare protected connection: Connection;
  declare protected phoneScreen: boolean;

  protected t: Translation = ptBR;
  /** The page's language is on screen: false while its texts load (src/locales/index.ts). */
  private fluent = true;
  /** Settles once the page's language is on screen; a payment or an error waits for it. */
  private speaking: Promise<void> = Promise.resolve();
  private renewalsUsed = 0;
  private startedKey: string | null = null;
  private creating: AbortController | null = null;
  /** The code on screen, checked once: its QR path (drawn on first use) and its merchant name. */
  private code: { brcode: string; check: BrCodeCheck; path?: QrPath | null } | null = null;
  /** The reference whose "I need more time" offer was announced (once per code). */
  private offered: string | null = null;
  /** When this widget first showed the payment paid (epoch ms; 0 before): the receipt's time without `paid_at`. */
  private paidSeen = 0;
  /** Screen and reference last shown: focus follows the news when either changes under it. */
  private shownView: string | null = null;
  private shownScreen: PixScreen | null = null;
  private focusInside = false;
  private lastSlot: string | null = null;
  private media: MediaQueryList | null = null;
  private money: [string, Intl.NumberFormat] | null = null;
  private readonly internals: ElementInternals | null;

  private readonly env = (): PixEnvironment => ({ ...defaultEnvironment(), ...this.environment });

  private readonly status = new StatusController(this, {
    client: () => this.client(),
    env: this.env,
    onView: (view) => this.applyView(view),
    onError: (error) => this.fail(error, false),
    onConnection: (connection) => (this.connection = connection),
  });
  private readonly countdown = new CountdownController(
    this,
    () => this.env().clock,
    () => this.status.checkNow(),
  );
  private readonly clipboard = new ClipboardController(this, this.env);

  constructor() {
    super();
    this.endpoint = '';
    this.locale = 'pt-BR';
    this.renewals = 2;
    this.mode = 'full';
    this.layout = 'auto';
    this.theme = 'auto';
    this.texts = {};
    this.environment = {};
    this.phase = 'idle';
    this.payment = null;
    this.announcement = '';
    this.timeAnnouncement = '';
    this.connection = 'live';
    this.phoneScreen = false;
    this.internals = typeof this.attachInternals === 'function' ? this.attachInternals() : null;
  }

  /** What the customer sees now. */
  get screen(): PixScreen {
    if (this.phase === 'error') return 'error';
    if (this.phase === 'exhausted') return 'expired';
    return this.phase === 'ready' && this.payment ? this.payment.status : 'loading';
  }

  override connectedCallback(): void {
    super.connectedCallback();
    // Performance marks: bench/widget-timing.ts reads them (connected -> QR painted, paid shown).
    performance.mark('pix-checkout:connected');
    this.media = matchMedia(PHONE_QUERY);
    this.media.addEventListener('change', this.onMedia);
    this.onMedia();
    // Removed while creating: start again now that it is back.
    if (this.phase === 'idle') this.startedKey = null;
  }

  override disconnectedCallback(): void {
    super.disconnectedCallback();
    this.media?.removeEventListener('change', this.onMedia);
    this.creating?.abort();
    this.creating = null;
    if (this.phase === 'loading') this.phase = 'idle';
  }

  private readonly onMedia = () => {
    this.phoneScreen = this.media?.matches ?? false;
  };

  private client(): ProxyClient {
    return new ProxyClient(this.endpoint, this.env().fetch);
  }

  /**
   * One checkout on one page: a change of key shows another payment; in open-amount mode, the key
   * under which a reload finds its payment again (checkout mode needs none: the proxy answers the same).
   */
  private resumeKey(): string | null {
    const id = this.checkout;
    if (!this.endpoint || (id == null && this.amount == null)) return null;
    const endpoint = new URL(this.endpoint, location.href).href;
    return `pix-checkout:${endpoint}|${id != null ? `checkout:${id}` : `${this.amount}|${this.description ?? ''}`}`;
  }

  private loadSaved(key: string): Saved | null {
    try {
      const saved = JSON.parse(this.env().storage?.getItem(key) ?? 'null') as Saved | null;
      return saved && typeof saved.reference === 'string' && Number.isInteger(saved.renewals) ? saved : null;
    } catch {
      return null;
    }
  }

  private save(key: string, saved: Saved): void {
    try {
      this.env().storage?.setItem(key, JSON.stringify(saved));
    } catch {
      // Storage full or blocked: the payment still works, it just will not resume after a reload.
    }
  }

  /**
   * Shows the checkout's payment: the one saved for this page (after a reload) or a new one. With
   * `renew`, always a new one (the customer asked for a new code after the last expired).
   */
  async start(renew = false): Promise<void> {
    const key = this.resumeKey();
    if (!key) return;
    this.startedKey = key;
    this.creating?.abort();
    const creating = new AbortController();
    this.creating = creating;
    this.status.stop();
    this.countdown.stop();
    this.clipboard.reset();
    this.phase = 'loading';
    this.payment = null;
    this.connection = 'live';
    const client = this.client();
    const id = this.checkout;
    const saved = renew || id != null ? null : this.loadSaved(key);
    let renewals = renew ? this.renewalsUsed + 1 : (saved?.renewals ?? 0);
    markOnce('pix-checkout:request');
    try {
      let payment: PaymentView | null = null;
      let resumed = false;
      if (id != null) {
        // Checkout mode: the proxy answers the checkout's live payment (the same one after a reload), or
        // issues the next one once it expired; it alone decides the amount and the number of renewals.
        const answer = await client.checkoutPayment(id, creating.signal);
        payment = answer.payment;
        resumed = !answer.created && !renew;
        // Asked for a new code but got the current one (an earlier code was paid after all).
        if (renew && !answer.created) renewals--;
      } else if (saved) {
        payment = await client.getPayment(saved.reference, creating.signal).catch((error: unknown) => {
          // Gone from the proxy (or never valid): make a new one rather than show an error.
          if (error instanceof ProxyError && (error.code === 'not_found' || error.code === 'invalid_reference')) return null;
          throw error;
        });
        resumed = payment !== null;
      }
      payment ??= await client.createPayment({ value: this.amount!, description: this.description }, creating.signal);
      if (creating.signal.aborted) return;
      markOnce('pix-checkout:payment');
      // Shown in the page's language, whose texts loaded beside the request.
      await this.speaking;
      if (creating.signal.aborted) return;
      this.show(payment, resumed, renewals);
    } catch (error) {
      if (creating.signal.aborted) return;
      await this.speaking;
      if (creating.signal.aborted) return;
      // Checkout mode: the last code expired and the proxy will issue no other. Not an error screen:
      // the expired one, without the button.
      const exhausted = error instanceof ProxyError && error.code === 'renewals_exhausted';
      if (exhausted) {
        this.phase = 'exhausted';
        this.announcement = this.t.renewalsExhausted;
      }
      this.fail(error, !exhausted);
    } finally {
      if (this.creating === creating) this.creating = null;
    }
  }

  /** Puts a payment on screen and follows it while pending; `renewals`: codes generated after the first. */
  private show(payment: PaymentView, resumed: boolean, renewals: number): void {
    this.renewalsUsed = renewals;
    if (this.checkout == null) this.save(this.startedKey!, { reference: payment.reference, renewals });
    this.phase = 'ready';
    this.payment = payment;
    this.countdown.set(payment.created_at, payment.expires_at, payment.server_time);
    if (payment.status === 'pending') this.status.follow(payment.reference);
    else this.status.stop();
    this.dispatchEvent(new PixCreatedEvent({ payment, resumed, renewal: renewals }));
    // Already final (paid before a reload, or a late-paid earlier code): the page hears the outcome
    // the same way as when it happens on screen.
    this.fireOutcome(payment);
  }

  /**
   * "I need more time": a new code now, while this one still works, which stays on screen until the
   * answer (the button disabled meanwhile). A payment made at the last second wins: the proxy confirms
   * that no code of the checkout was paid before it issues another, and answers the paid one if one
   * was; in open-amount mode the proxy checks nothing, so the widget reads this payment first. A
   * failure leaves this code on screen, announced, with the button back (gone once no code is left).
   */
  private async moreTime(): Promise<void> {
    const current = this.payment;
    if (!current || this.creating) return;
    const creating = new AbortController();
    const { signal } = creating;
    this.creating = creating;
    this.requestUpdate();
    const client = this.client();
    const id = this.checkout;
    try {
      let payment: PaymentView;
      let created = true;
      if (id != null) ({ payment, created } = await client.checkoutPayment(id, signal, { renew: true }));
      else {
        payment = await client.getPayment(current.reference, signal);
        if (payment.status === 'pending') payment = await client.createPayment({ value: this.amount!, description: this.description }, signal);
        else created = false;
      }
      // Paid meanwhile (the stream can tell between the check and the answer): that screen stays.
      if (signal.aborted || this.screen === 'paid') return;
      if (payment.reference === current.reference) this.applyView(payment);
      else this.show(payment, false, this.renewalsUsed + +created);
    } catch (error) {
      if (signal.aborted) return;
      if (error instanceof ProxyError && error.code === 'renewals_exhausted') this.payment = { ...this.payment!, renewable: false };
      this.announcement = this.t.moreTimeFailed;
      this.fail(error, false);
    } finally {
      if (this.creating === creating) this.creating = null;
      this.requestUpdate();
    }
  }

  private applyView(view: PaymentView): void {
    const previous = this.payment?.status;
    // Status reads carry no `renewable` (only a checkout's answers do): keep the last one known.
    this.payment = { ...this.payment, ...view };
    this.countdown.set(view.created_at, view.expires_at, view.server_time);
    if (previous === undefined || previous === view.status) return;
    this.announcement = this.t[view.status];
    this.dispatchEvent(new PixStatusChangeEvent({ payment: view, previous }));
    this.fireOutcome(view);
  }

  /** pix-paid, pix-expired or pix-canceled for a payment in that status; nothing while pending. */
  private fireOutcome(view: PaymentView): void {
    if (view.status === 'paid') this.dispatchEvent(new PixPaidEvent({ payment: view }));
    else if (view.status === 'expired') this.dispatchEvent(new PixExpiredEvent({ payment: view, renewalsLeft: this.renewalsLeft() }));
    else if (view.status === 'canceled') this.dispatchEvent(new PixCanceledEvent({ payment: view }));
  }

  /** Checkout mode: 1 while the widget offers a new code (the proxy decides), 0 once it refused one. */
  private renewalsLeft(): number {
    if (this.checkout != null) return this.phase === 'exhausted' ? 0 : 1;
    return Math.max(0, (Number.isFinite(this.renewals) ? this.renewals : 0) - this.renewalsUsed);
  }

  private fail(error: unknown, fatal: boolean): void {
    const detail =
      error instanceof ProxyError
        ? { code: error.code, message: error.message, ...(error.fields ? { fields: error.fields } : {}), fatal }
        : { code: 'internal', message: String(error), fatal };
    if (fatal) {
      this.phase = 'error';
      this.announcement = '';
    }
    this.dispatchEvent(new PixErrorEvent(detail));
  }

  /** Called in the tap itself (share() needs the user's activation). A dismissed sheet (AbortError) is no failure. */
  private share(data: ShareData): void {
    this.env()
      .share?.share(data)
      .catch((error: unknown) => {
        if ((error as Error | null)?.name !== 'AbortError')
          this.dispatchEvent(new PixErrorEvent({ code: 'share_failed', message: String(error), fatal: false }));
      });
  }

  private copy(): void {
    const code = this.payment?.brcode;
    if (!code) return;
    // Synchronously inside the click: the Clipboard API needs the tap's user activation.
    void this.clipboard.copy(code, this.renderRoot.querySelector('textarea')).then((method) => {
      const copied = method !== 'manual';
      this.announcement = copied ? this.t.copied : this.t.copyFailed;
      this.dispatchEvent(new PixCopyEvent({ copied, method }));
    });
  }

  private formatValue(value: number): string {
    const own = formatBrl(value, this.t.tag);
    if (own !== null) return own;
    if (this.money?.[0] !== this.t.tag)
      this.money = [this.t.tag, new Intl.NumberFormat(this.t.tag, { style: 'currency', currency: 'BRL', currencyDisplay: 'narrowSymbol' })];
    return this.money[1].format(value);
  }

  /** The code's check, once per code. */
  private codeFor(brcode: string): NonNullable<PixCheckout['code']> {
    if (this.code?.brcode !== brcode) {
      markOnce('pix-checkout:check');
      this.code = { brcode, check: checkBrCode(brcode) };
      markOnce('pix-checkout:checked');
    }
    return this.code;
  }

  /** The QR path for the current code, computed once per code; null when the code fails the BR Code check. */
  private qrFor(brcode: string): QrPath | null {
    const code = this.codeFor(brcode);
    if (code.path === undefined && code.check.ok) {
      markOnce('pix-checkout:encode');
      code.path = qrPath(brcode);
      markOnce('pix-checkout:encoded');
    }
    return (code.path ??= null);
  }

  /**
   * Who is being paid. First the proxy's `favoured`: the receiver's registered name, which the payer's
   * bank app shows before the payment is confirmed. While the proxy has not read it (null) or is too
   * old to send it, the merchant name inside the code (field 59): the partner wrote it there for the
   * same receiver, and it is what a bank app has of the receiver when it reads the code itself. Null
   * when neither exists (or the code fails the check).
   */
  private receiver(payment: PaymentView): string | null {
    const { check } = this.codeFor(payment.brcode);
    return payment.favoured || (check.ok && check.code.merchantName) || null;
  }

  /** "I need more time" is offered in a pending code's last two minutes, when a new code can be had. */
  private offersMoreTime(seconds: number): boolean {
    return 0 < seconds && seconds <= MORE_TIME_AT_S && (this.checkout != null ? this.payment!.renewable === true : this.renewalsLeft() > 0);
  }

  /**
   * The texts for `locale`, merged under the page's `texts`. pt-BR is at hand; English and Spanish
   * are loaded the first time (a chunk each), meanwhile the loading screen shows no text and the
   * payment waits for them (`speaking`): the request is already on the wire, so they load beside it.
   */
  private applyLocale(): void {
    const tag = this.locale;
    const base = localeFor(tag);
    this.fluent = base !== undefined;
    if (base) {
      this.t = { ...base, ...this.texts };
      this.speaking = Promise.resolve();
      return;
    }
    this.speaking = loadLocale(tag).then((translation) => {
      // The locale changed meanwhile: its own load decides.
      if (this.locale !== tag) return;
      this.t = { ...translation, ...this.texts };
      this.fluent = true;
      this.requestUpdate();
    });
  }

  protected override willUpdate(changed: PropertyValues<this>): void {
    if (changed.has('locale') || changed.has('texts')) this.applyLocale();
    // A new endpoint, checkout, amount or description (the last two in open-amount mode) is a new checkout.
    const key = this.resumeKey();
    if (key && key !== this.startedKey && this.isConnected) void this.start();
    this.focusInside ||= !!this.shadowRoot?.activeElement;
    const seconds = this.screen === 'pending' ? this.countdown.seconds : null;
    if (seconds === null) this.lastSlot = null;
    else {
      const slot = announcementSlot(seconds);
      if (this.lastSlot !== null && slot !== this.lastSlot && seconds > 0) {
        this.timeAnnouncement = this.t.timeLeft(...splitSeconds(seconds));
      }
      this.lastSlot = slot;
    }
    // Announced once per code, with the time left, when the offer appears (or is already due on arrival).
    const reference = this.payment?.reference ?? null;
    if (this.offersMoreTime(seconds ?? 0) && this.offered !== reference) {
      this.offered = reference;
      this.timeAnnouncement = `${this.t.timeLeft(...splitSeconds(seconds!))} ${this.t.moreTimeOffer}`;
    }
    this.paidSeen = this.screen === 'paid' ? this.paidSeen || this.env().clock.now() : 0;
  }

  protected override firstUpdated(): void {
    markOnce('pix-checkout:rendered');
    // The payment's request is already on the wire (willUpdate started it): a page's own currency
    // tag needs Intl, whose first formatter loads the locale's data (tens of ms on a phone-class
    // CPU): built now, while we wait, not between the answer and the QR (src/money.ts covers ours).
    this.formatValue(0);
    // The QR encoder's first run is its slowest (the engine compiles it as it goes): a small symbol
    // now, while the request is out, halves the real one's time once the answer is here.
    qrPath('pix-checkout');
  }

  protected override updated(): void {
    const screen = this.screen;
    const states = this.internals?.states;
    if (states) {
      for (const name of ['loading', 'pending', 'paid', 'expired', 'canceled', 'error', 'reconnecting']) {
        const on = name === screen || (name === 'reconnecting' && screen === 'pending' && this.connection !== 'live');
        try {
          if (on) states.add(name);
          else states.delete(name);
        } catch {
          // Chromium before 125 only accepted `--name` states; styling by state is then unavailable.
        }
      }
    }
    if (screen !== this.shownScreen && (screen === 'pending' || screen === 'paid')) {
      const mark = `pix-checkout:${screen === 'paid' ? 'paid' : 'qr'}`;
      requestAnimationFrame(() => performance.mark(mark));
    }
    this.shownScreen = screen;
    const view = `${screen} ${this.payment?.reference}`;
    if (view !== this.shownView) {
      // Focus was in the widget (the copy, retry or more-time button, now gone): keep it here, on the news.
      if (this.shownView !== null && this.focusInside) {
        this.renderRoot.querySelector<HTMLElement>('[part~="status"]')?.focus();
      }
      this.shownView = view;
      this.focusInside = false;
    }
  }

  override render() {
    const screen = this.screen;
    return html`<div part="base" class=${screen} aria-busy=${screen === 'loading'}>
      <slot name="header"></slot>
      ${this.renderScreen(screen)}
      <p class="sr-only" role="status">${this.announcement}</p>
      <p class="sr-only" aria-live="polite">${this.timeAnnouncement}</p>
      <slot name="footer"></slot>
    </div>`;
  }

  private statusLine(text: string, hint?: string | typeof nothing) {
    return html`<p part="status" tabindex="-1">${text}</p>
      ${hint ? html`<p part="hint">${hint}</p>` : nothing}`;
  }

  private renderScreen(screen: PixScreen) {
    const t = this.t;
    // No text until the page's language is at hand: never a flash of another.
    if (screen === 'loading') return html`<p part="status" tabindex="-1" class="loading">${this.fluent ? t.loading : nothing}</p>`;
    if (screen === 'error') {
      return html`<p part="status" tabindex="-1" role="alert">${t.error}</p>
        <button part="retry-button" @click=${() => void this.start()}>${t.retry}</button>`;
    }
    if (screen === 'canceled') return this.statusLine(t.canceled, t.canceledHint);
    if (screen === 'expired') {
      return this.renewalsLeft() > 0
        ? html`${this.statusLine(t.expired, t.expiredHint)} <button part="renew-button" @click=${() => void this.start(true)}>${t.renew}</button>`
        : this.statusLine(t.expired, this.phase === 'exhausted' ? t.renewalsExhausted : t.renewLimit);
    }
    const payment = this.payment!;
    const amount = this.formatValue(payment.value);
    if (screen === 'paid') return this.renderPaid(payment, amount);
    return this.renderPending(payment, amount);
  }

  /** The paid screen: a receipt the customer can print or save (printed black on white, without buttons). */
  private renderPaid(payment: PaymentView, amount: string) {
    const t = this.t;
    const receiver = this.receiver(payment);
    // The proxy's time of payment, else when this widget saw it paid; shown in the customer's time zone.
    const when = new Date(Date.parse(payment.paid_at ?? '') || this.paidSeen);
    const row = (label: string, value: unknown) =>
      html`<dt>${label}</dt>
        <dd>${value}</dd>`;
    return html`${this.statusLine(t.paid)}<slot name="paid"><p part="amount">${t.paidAmount(amount)}</p></slot>
      <dl part="receipt">
        ${row(t.receiptAmount, amount)} ${receiver ? row(t.receiptTo, receiver) : nothing}
        ${row(
          t.receiptWhen,
          html`<time datetime=${when.toISOString()}>${new Intl.DateTimeFormat(t.tag, { dateStyle: 'medium', timeStyle: 'long' }).format(when)}</time>`,
        )}
        ${row(t.receiptReference, payment.reference)}
      </dl>
      <button part="print-button" class="secondary" @click=${() => window.print()}>${t.print}</button>`;
  }

  private renderPending(payment: PaymentView, amount: string) {
    const t = this.t;
    const seconds = this.countdown.seconds ?? 0;
    const receiver = this.receiver(payment);
    const head = html`<p part="amount">${amount}</p>
      ${receiver ? html`<p part="favoured">${t.paying(receiver)}</p>` : nothing}
      ${this.statusLine(this.connection === 'offline' ? t.offline : this.connection === 'reconnecting' ? t.reconnecting : t.pending)}
      <p part="countdown" role="timer">${t.expiresIn} <time datetime="PT${seconds}S">${formatTimeLeft(seconds)}</time></p>
      <progress part="progress" aria-hidden="true" max="1000" .value=${Math.round(this.countdown.fraction * 1000)}></progress>
      ${
        this.offersMoreTime(seconds)
          ? html`<button part="more-time-button" class="secondary" ?disabled=${!!this.creating} @click=${() => void this.moreTime()}>${t.moreTime}</button>`
          : nothing
      }`;
    // A partner that gives no hosted page (or image) gets no empty link (or broken image).
    const link = payment.checkout_url
      ? html`<a part="checkout-link" class=${this.mode === 'link' ? 'button' : ''} href=${payment.checkout_url} target="_blank" rel="noopener"
          >${t.openCheckout}</a
        >`
      : nothing;
    if (this.mode === 'link' && payment.checkout_url) return html`${head}${link}`;

    const path = this.qrFor(payment.brcode);
    const qr = html`<figure class="qr">
      ${
        path
          ? html`<svg part="qr" role="img" aria-label=${t.qrAlt(amount)} viewBox="0 0 ${path.size} ${path.size}" shape-rendering="crispEdges">
              ${svg`<rect width="100%" height="100%" fill="#fff"></rect><path d=${path.d} fill="#000"></path>`}
            </svg>`
          : html`<p part="hint" role="alert">${t.invalidCode}</p>
              ${payment.qr_code_url ? html`<img part="qr" src=${payment.qr_code_url} alt=${t.qrAlt(amount)} />` : nothing}`
      }
      <figcaption part="scan-hint">${t.scanHint}</figcaption>
    </figure>`;
    const failed = this.clipboard.state === 'failed';
    const copy = html`<div class="copy">
      <label part="code-label" for="code">${t.codeLabel}</label>
      <textarea
        id="code"
        part="code"
        readonly
        rows="3"
        spellcheck="false"
        aria-describedby=${failed ? 'copy-hint' : nothing}
        .value=${payment.brcode}
      ></textarea>
      <button part="copy-button" class=${this.clipboard.state} @click=${() => this.copy()}>${this.clipboard.state === 'copied' ? t.copied : t.copy}</button>
      ${failed ? html`<p part="copy-hint" id="copy-hint">${t.copyFailed}</p>` : nothing} ${this.renderShare(payment, amount)}
    </div>`;
    const phoneFirst = this.layout === 'phone' || (this.layout !== 'desktop' && this.phoneScreen);
    return html`${head}${phoneFirst ? html`${copy}${qr}` : html`${qr}${copy}`}${link}`;
  }

  /**
   * Pay from another device, or ask someone to pay: the code (with a line saying what to do with it)
   * and the hosted page's link, through the system's share sheet. Not rendered where the browser has no
   * Web Share API (most desktops) or refuses this data.
   */
  private renderShare(payment: PaymentView, amount: string) {
    const sharer = this.env().share;
    // The field's label says what to do with the code: "Pix Copia e Cola" is where a bank app takes it.
    const data: ShareData = { text: `${amount}, ${this.t.codeLabel}:\n${payment.brcode}` };
    if (payment.checkout_url) data.url = payment.checkout_url;
    return sharer && sharer.canShare?.(data) !== false
      ? html`<button part="share-button" class="secondary" @click=${() => this.share(data)}>${this.t.share}</button>`
      : nothing;
  }
}
