/**
 * The widget's screens and custom states, from one list: the `Screen` type, the `:state()` names
 * the element sets (src/controllers/screen.ts) and what the element renders for each
 * (src/pix-checkout.ts, a record over `Screen`, so a screen without its renderer does not compile).
 * The element's `@cssstate` JSDoc, which the custom-elements manifest is made from, is checked
 * against STATE_DESCRIPTIONS (test/node/widget-states.test.ts).
 */

/** What the customer sees; each is also the element's custom state while shown (`:state(paid)`). */
export const SCREENS = ['loading', 'pending', 'paid', 'expired', 'canceled', 'error', 'unverified'] as const;
export type Screen = (typeof SCREENS)[number];
/** The screens of a code's end, and of a renewal the proxy cannot decide yet: the later chunk's. */
export type EndScreen = 'paid' | 'expired' | 'canceled' | 'unverified';

/** The custom states: the screens, and `reconnecting` beside `pending`. */
export const STATES = [...SCREENS, 'reconnecting'] as const;
export type PixState = (typeof STATES)[number];

/** Each state as the element's JSDoc (`@cssstate name - text`) documents it; not in the bundle (no run-time reader). */
export const STATE_DESCRIPTIONS: Record<PixState, string> = {
  loading: 'A payment is being created or resumed.',
  pending: 'Waiting for the customer to pay.',
  paid: 'Paid (as the proxy reports; confirm on your server).',
  expired: 'The code expired unpaid.',
  canceled: 'The payment was canceled.',
  error: 'Creating or loading the payment failed.',
  unverified: 'A new code was refused while an earlier one may still be paid: confirming it, asking again by itself.',
  reconnecting: 'Status checks are failing or the browser is offline.',
};
