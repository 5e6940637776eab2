/**
 * The pending screen's buttons that no first QR needs, in the chunk loaded once that QR is on screen
 * (src/later.ts): "I need more time", share, and "Salvar QR Code". What they do is built here, from
 * the element's parts (the screen's `context`).
 */
import { askMoreTime, moreTimeOffered } from '../controllers/session-later.ts';
import { kit } from '../kit.ts';
import { preloadSave, save, share } from '../share.ts';
import type { PendingScreen } from './pending.ts';

/** Offered in a code's last two minutes when a new code can be had; disabled while one (or the first) is on its way. */
export function moreTimeButton({ t, seconds, context: { session } }: PendingScreen) {
  const { html, nothing } = kit;
  return moreTimeOffered(session, seconds)
    ? html`<button part="more-time-button" class="secondary" ?disabled=${!!session.creating} @click=${() => void askMoreTime(session)}>${t.moreTime}</button>`
    : nothing;
}

/** Phones (the copy-and-paste code first), with the QR drawn (the caller checks that). Drawn, its chunk loads now, not on the tap. */
export function saveButton({ t, payment, amount, receiver, qr, context: { host, env, copyFirst } }: PendingScreen) {
  const { html, nothing } = kit;
  if (!copyFirst) return nothing;
  preloadSave();
  const lines = [amount, receiver && t.paying(receiver)];
  return html`<button part="save-button" class="secondary" @click=${() => save(host, env, qr()!, lines, payment.reference)}>${t.save}</button>`;
}

/**
 * Pay from another device, or ask someone to pay: the code (with a line saying what to do with it)
 * and the hosted page's link, through the system's share sheet. Not rendered where the browser has no
 * Web Share API (most desktops) or refuses this data.
 */
export function shareButton({ t, payment, amount, context: { host, env } }: PendingScreen) {
  const { html, nothing } = kit;
  // The field's label says what to do with the code: "Pix Copia e Cola" is where a bank app takes it.
  const data: ShareData = { text: `${amount}, ${t.codeLabel}:\n${payment.brcode}` };
  if (payment.checkout_url) data.url = payment.checkout_url;
  const sharer = env.share;
  return sharer && sharer.canShare?.(data) !== false
    ? html`<button part="share-button" class="secondary" @click=${() => share(host, env, data)}>${t.share}</button>`
    : nothing;
}
