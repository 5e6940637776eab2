/**
 * The screens of a code's end, and of a renewal the proxy cannot decide yet: in the chunk loaded once
 * the first QR is on screen (src/later.ts); no first QR needs them.
 */
import { kit } from '../kit.ts';
import type { Translation } from '../locales/index.ts';

export function renderCanceled(t: Translation) {
  return kit.statusLine(t.canceled, t.canceledHint);
}

/** With `renew` a "generate a new code" button; without, why none is offered (`exhausted`: the proxy refused). */
export function renderExpired(t: Translation, renew: (() => void) | null, exhausted: boolean) {
  const { html, statusLine } = kit;
  return renew
    ? html`${statusLine(t.expired, t.expiredHint)} <button part="renew-button" @click=${renew}>${t.renew}</button>`
    : statusLine(t.expired, exhausted ? t.renewalsExhausted : t.renewLimit);
}

/**
 * A new code was asked for while an earlier one may still be paid, and the proxy cannot tell yet
 * (503 status_unverified): no new code, no "expired for good", and the customer told not to pay
 * again; the session asks again by itself after the proxy's Retry-After.
 */
export function renderUnverified(t: Translation) {
  return kit.statusLine(t.unverified, t.unverifiedHint);
}
