import { html, nothing } from 'lit';
import type { CopyState } from '../controllers/clipboard.ts';
import { formatTimeLeft } from '../controllers/countdown.ts';
import type { Connection } from '../controllers/status.ts';
import type { Translation } from '../locales/index.ts';
import type { QrPath } from '../qr.ts';
import type { PaymentView } from '../shared/contract.ts';
import type { ScreenContext } from './context.ts';
import { statusLine } from './status.ts';

/** What the pending screen shows, and what its buttons do. */
export interface PendingScreen {
  t: Translation;
  payment: PaymentView;
  /** The value, formatted in the texts' language. */
  amount: string;
  receiver: string | null;
  seconds: number;
  /** Share of the code's lifetime left, 0 to 1. */
  fraction: number;
  connection: Connection;
  mode: 'full' | 'link';
  /** The copy-and-paste code before the QR code (phones: the customer cannot scan their own screen). */
  copyFirst: boolean;
  /** The QR path of the payment's code, encoded on first use; null when the code fails its check. */
  qr: () => QrPath | null;
  copyState: CopyState;
  copy: () => void;
  /**
   * The buttons no first QR needs (more time, share, save: src/views/pending-extras.ts), drawn once
   * the chunk loaded after that QR is here (src/later.ts); null until then. They read the element's
   * parts (`context`) for what they do.
   */
  extras: PendingExtras | null;
  context: ScreenContext;
}

export interface PendingExtras {
  moreTimeButton(s: PendingScreen): unknown;
  shareButton(s: PendingScreen): unknown;
  /** Phones, with the QR drawn (the caller checks the QR). */
  saveButton(s: PendingScreen): unknown;
}

export function renderPending(s: PendingScreen) {
  const { t, payment, amount, seconds } = s;
  const head = html`<p part="amount">${amount}</p>
    ${s.receiver ? html`<p part="favoured">${t.paying(s.receiver)}</p>` : nothing}
    ${statusLine(s.connection === 'offline' ? t.offline : s.connection === 'reconnecting' ? t.reconnecting : t.pending)}
    <p part="countdown" role="timer">${t.expiresIn} <time datetime="PT${seconds}S">${formatTimeLeft(seconds)}</time></p>
    <progress part="progress" aria-hidden="true" max="1000" .value=${Math.round(s.fraction * 1000)}></progress>
    ${s.extras?.moreTimeButton(s) ?? nothing}`;
  // A partner that gives no hosted page (or image) gets no empty link (or broken image).
  const link = payment.checkout_url
    ? html`<a part="checkout-link" class=${s.mode === 'link' ? 'button' : ''} href=${payment.checkout_url} target="_blank" rel="noopener">${t.openCheckout}</a>`
    : nothing;
  if (s.mode === 'link' && payment.checkout_url) return html`${head}${link}`;

  const path = s.qr();
  const qr = html`<figure class="qr">
    ${
      path
        ? html`<svg part="qr" role="img" aria-label=${t.qrAlt(amount)} viewBox="0 0 ${path.size} ${path.size}" shape-rendering="crispEdges">
            <rect width="100%" height="100%" fill="#fff"></rect>
            <path d=${path.d} fill="#000"></path>
          </svg>`
        : html`<p part="hint" role="alert">${t.invalidCode}</p>
            ${payment.qr_code_url ? html`<img part="qr" src=${payment.qr_code_url} alt=${t.qrAlt(amount)} />` : nothing}`
    }
    <figcaption part="scan-hint">${t.scanHint}</figcaption>
  </figure>`;
  const failed = s.copyState === 'failed';
  const copy = html`<div class="copy">
    <label part="code-label" for="code">${t.codeLabel}</label>
    <textarea id="code" part="code" readonly rows="3" spellcheck="false" aria-describedby=${failed ? 'copy-hint' : nothing} .value=${payment.brcode}></textarea>
    <button part="copy-button" class=${s.copyState} @click=${s.copy}>${s.copyState === 'copied' ? t.copied : t.copy}</button>
    ${failed ? html`<p part="copy-hint" id="copy-hint">${t.copyFailed}</p>` : nothing} ${s.extras?.shareButton(s) ?? nothing}
    ${path ? (s.extras?.saveButton(s) ?? nothing) : nothing}
  </div>`;
  return html`${head}${s.copyFirst ? html`${copy}${qr}` : html`${qr}${copy}`}${link}`;
}
