/**
 * The pending screen's buttons that no first QR needs, in the chunk loaded once that QR is on screen
 * (src/later.ts): "I need more time", share, and "Salvar QR Code".
 */
import { kit } from '../kit.ts';
import { preloadSave } from '../share.ts';
import type { PendingScreen } from './pending.ts';

/** Offered in a code's last two minutes when a new code can be had; disabled while one is on its way. */
export function moreTimeButton({ t, moreTime, busy }: PendingScreen) {
  const { html, nothing } = kit;
  return moreTime ? html`<button part="more-time-button" class="secondary" ?disabled=${busy} @click=${moreTime}>${t.moreTime}</button>` : nothing;
}

/** Phones, with the QR drawn (the caller checks that). Drawn, its chunk loads now, not on the tap. */
export function saveButton({ t, save }: PendingScreen) {
  const { html, nothing } = kit;
  if (save) preloadSave();
  return save ? html`<button part="save-button" class="secondary" @click=${save}>${t.save}</button>` : nothing;
}

/**
 * Pay from another device, or ask someone to pay: the code (with a line saying what to do with it)
 * and the hosted page's link, through the system's share sheet. Not rendered where the browser has no
 * Web Share API (most desktops) or refuses this data.
 */
export function shareButton({ t, payment, amount, sharer, share }: PendingScreen) {
  const { html, nothing } = kit;
  // The field's label says what to do with the code: "Pix Copia e Cola" is where a bank app takes it.
  const data: ShareData = { text: `${amount}, ${t.codeLabel}:\n${payment.brcode}` };
  if (payment.checkout_url) data.url = payment.checkout_url;
  return sharer && sharer.canShare?.(data) !== false
    ? html`<button part="share-button" class="secondary" @click=${() => share(data)}>${t.share}</button>`
    : nothing;
}
