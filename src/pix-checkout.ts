import { LitElement, html, nothing } from 'lit';
import { ProxyClient, ProxyError } from './api/client.ts';
import { StatusController } from './controllers/status.ts';
import { PixCreatedEvent, PixErrorEvent, PixPaidEvent, PixStatusChangeEvent } from './events.ts';
import { ptBR } from './locales/pt-BR.ts';
import type { Translation } from './locales/translation.ts';
import { qrPath, type QrPath } from './qr.ts';
import { parseBrCode } from './shared/brcode.ts';
import type { PaymentView } from './shared/contract.ts';
import { isFinalStatus } from './shared/status.ts';
import { styles } from './pix-checkout.styles.ts';

type Phase = 'idle' | 'loading' | 'ready' | 'error';

/**
 * A Pix payment: the QR code drawn locally, the copy-and-paste code with a copy button, and the live
 * status, until the payment is paid, expired or canceled.
 *
 * @element pix-checkout
 * @fires pix-created - A payment was created; detail: `{payment}`.
 * @fires pix-status-change - The status changed; detail: `{payment, previous}`.
 * @fires pix-paid - The payment is paid; detail: `{payment}`. Confirm it on your server before shipping.
 * @fires pix-error - Something failed; detail: `{code, message, fields?}`.
 * @slot header - Content above the payment.
 * @slot footer - Content below the payment.
 * @csspart base - The wrapper.
 * @csspart qr - The QR code (SVG).
 * @csspart code - The copy-and-paste code field.
 * @csspart copy-button - The copy button.
 * @csspart status - The status line.
 * @cssproperty --pix-accent - Buttons and links.
 * @cssproperty --pix-color - Text.
 * @cssproperty --pix-background - Background.
 * @cssproperty --pix-radius - Corner radius.
 */
export class PixCheckout extends LitElement {
  static override styles = styles;

  static override properties = {
    endpoint: { type: String },
    amount: { type: Number },
    description: { type: String },
    phase: { state: true },
    payment: { state: true },
    problem: { state: true },
    announcement: { state: true },
  };

  /** Base URL of the proxy's browser API, e.g. `/api` or `https://shop.example/api`. */
  declare endpoint: string;
  /** Value in reais (open-amount mode), e.g. `10.5`. */
  declare amount: number | undefined;
  /** Text printed on the customer's proof of payment (at most 50 characters). */
  declare description: string | undefined;

  declare protected phase: Phase;
  declare protected payment: PaymentView | null;
  declare protected problem: string | null;
  declare protected announcement: string;

  protected t: Translation = ptBR;
  private qr: { code: string; path: QrPath | null } | null = null;
  private creating: AbortController | null = null;

  private readonly status = new StatusController(this, {
    read: (reference, signal) => this.client().getPayment(reference, signal),
    onView: (view) => this.applyView(view),
    onError: (error) => this.fail(error, false),
  });

  constructor() {
    super();
    this.endpoint = '';
    this.phase = 'idle';
    this.payment = null;
    this.problem = null;
    this.announcement = '';
  }

  override connectedCallback(): void {
    super.connectedCallback();
    if (this.phase === 'idle') void this.start();
    // Moved in the DOM (frameworks do this): pick up following where disconnecting stopped it.
    else if (this.phase === 'ready' && this.payment && !isFinalStatus(this.payment.status)) this.status.follow(this.payment.reference);
  }

  override disconnectedCallback(): void {
    super.disconnectedCallback();
    this.creating?.abort();
    this.creating = null;
    if (this.phase === 'loading') this.phase = 'idle';
  }

  private client(): ProxyClient {
    return new ProxyClient(this.endpoint);
  }

  /** Creates the payment and starts following its status. */
  async start(): Promise<void> {
    if (!this.endpoint || this.amount === undefined) return;
    this.creating?.abort();
    const creating = new AbortController();
    this.creating = creating;
    this.phase = 'loading';
    this.problem = null;
    try {
      const body = this.description ? { value: this.amount, description: this.description } : { value: this.amount };
      const payment = await this.client().createPayment(body, creating.signal);
      if (creating.signal.aborted) return;
      this.payment = payment;
      this.phase = 'ready';
      this.dispatchEvent(new PixCreatedEvent({ payment }));
      if (!isFinalStatus(payment.status)) this.status.follow(payment.reference);
    } catch (error) {
      if (creating.signal.aborted) return;
      this.fail(error, true);
    } finally {
      if (this.creating === creating) this.creating = null;
    }
  }

  private applyView(view: PaymentView): void {
    const previous = this.payment?.status;
    this.payment = view;
    this.problem = null;
    if (previous === undefined || previous === view.status) return;
    this.announcement = this.statusText(view);
    this.dispatchEvent(new PixStatusChangeEvent({ payment: view, previous }));
    if (view.status === 'paid') this.dispatchEvent(new PixPaidEvent({ payment: view }));
  }

  private fail(error: unknown, fatal: boolean): void {
    const detail =
      error instanceof ProxyError
        ? { code: error.code, message: error.message, ...(error.fields ? { fields: error.fields } : {}) }
        : { code: 'internal', message: String(error) };
    this.problem = fatal ? this.t.error : this.t.reconnecting;
    if (fatal) this.phase = 'error';
    this.dispatchEvent(new PixErrorEvent(detail));
  }

  private statusText(view: PaymentView): string {
    return this.t[view.status];
  }

  private formatValue(value: number): string {
    return new Intl.NumberFormat('pt-BR', { style: 'currency', currency: 'BRL' }).format(value);
  }

  /** The QR path for the current code, computed once per code; null when the code is not valid. */
  private qrFor(code: string): QrPath | null {
    if (this.qr?.code !== code) {
      this.qr = { code, path: parseBrCode(code).ok ? qrPath(code) : null };
    }
    return this.qr.path;
  }

  private async copy(): Promise<void> {
    const code = this.payment?.brcode;
    if (!code) return;
    let copied = false;
    try {
      await navigator.clipboard.writeText(code);
      copied = true;
    } catch {
      // Clipboard API refused (no permission, iframe without clipboard-write): select the text instead.
      const field = this.renderRoot.querySelector('textarea');
      field?.select();
      copied = document.execCommand?.('copy') ?? false;
    }
    this.announcement = copied ? this.t.copied : this.t.copyFailed;
  }

  override render() {
    return html`<div part="base">
      <slot name="header"></slot>
      ${this.renderBody()}
      <p class="sr-only" role="status" aria-live="polite">${this.announcement}</p>
      <slot name="footer"></slot>
    </div>`;
  }

  private renderBody() {
    if (this.phase === 'loading' || this.phase === 'idle') return html`<p part="status">${this.t.loading}</p>`;
    if (this.phase === 'error' || !this.payment) {
      return html`<p part="status" role="alert">${this.problem ?? this.t.error}</p>
        <button part="retry-button" @click=${() => void this.start()}>${this.t.retry}</button>`;
    }
    const payment = this.payment;
    const amount = this.formatValue(payment.value);
    if (payment.status === 'paid') {
      return html`<p part="status">${this.t.paid}</p>
        <p class="amount">${amount}</p>`;
    }
    if (payment.status !== 'pending') return html`<p part="status">${this.statusText(payment)}</p>`;

    const path = this.qrFor(payment.brcode);
    return html`<p class="amount">${amount}</p>
      <p part="status">${this.problem ?? this.t.pending}</p>
      ${path
        ? html`<svg part="qr" role="img" aria-label=${this.t.qrAlt(amount)} viewBox="0 0 ${path.size} ${path.size}" shape-rendering="crispEdges"><rect width="100%" height="100%" fill="#fff"></rect><path d=${path.d} fill="#000"></path></svg>`
        : html`<p class="hint" role="alert">${this.t.invalidCode}</p>
            <img part="qr" src=${payment.qr_code_url} alt=${this.t.qrAlt(amount)} />`}
      <label class="hint" for="code">${this.t.codeLabel}</label>
      <textarea id="code" part="code" readonly rows="4" .value=${payment.brcode}></textarea>
      <button part="copy-button" @click=${() => void this.copy()}>${this.t.copy}</button>
      <a part="checkout-link" href=${payment.checkout_url} target="_blank" rel="noopener">${this.t.openCheckout}</a>
      ${nothing}`;
  }
}
