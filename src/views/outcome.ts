/**
 * The screens of a code's end, and of a renewal the proxy cannot decide yet: in the chunk loaded once
 * the first QR is on screen (src/later.ts); no first QR needs them.
 */
import { renewalsLeft } from '../controllers/session-later.ts';
import type { Session } from '../controllers/session-shape.ts';
import { kit } from '../kit.ts';
import type { Translation } from '../locales/index.ts';
import type { EndScreen } from '../screens.ts';
import { renderPaid } from './paid.ts';
import type { ScreenContext } from './context.ts';

/** The screen `screen` for the element's parts `c`. */
export function renderEnd(screen: EndScreen, c: ScreenContext) {
  const t = c.i18n.t;
  const renderers: Record<EndScreen, () => unknown> = {
    paid: () => renderPaid(c),
    expired: () => renderExpired(t, c.session),
    canceled: () => renderCanceled(t),
    unverified: () => renderUnverified(t),
  };
  return renderers[screen]();
}

export function renderCanceled(t: Translation) {
  return kit.statusLine(t.canceled, t.canceledHint);
}

/** While a new code can be had, a "generate a new code" button; else why none is offered (the proxy refused, or none is left). */
export function renderExpired(t: Translation, session: Session) {
  const { html, statusLine } = kit;
  return renewalsLeft(session) > 0
    ? html`${statusLine(t.expired, t.expiredHint)} <button part="renew-button" @click=${() => void session.start(true)}>${t.renew}</button>`
    : statusLine(t.expired, session.phase === 'exhausted' ? t.renewalsExhausted : t.renewLimit);
}

/**
 * A new code was asked for while an earlier one may still be paid, and the proxy cannot tell yet
 * (503 status_unverified): no new code, no "expired for good", and the customer told not to pay
 * again; the session asks again by itself after the proxy's Retry-After.
 */
export function renderUnverified(t: Translation) {
  return kit.statusLine(t.unverified, t.unverifiedHint);
}
