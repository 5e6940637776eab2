/**
 * What every framework typing (react.ts, vue.ts) says about `<pix-checkout>`, derived from the element
 * itself so that a property or an event added there reaches every framework with no edit here.
 */
import type * as events from '../events.ts';
import type { PixCheckout } from '../pix-checkout.ts';

type Declared = (typeof PixCheckout)['properties'];

/**
 * The properties a template may set: every reactive property of the element that is not internal
 * state (`{state: true}`), i.e. each attribute (`endpoint`, `checkout`, `amount`, …, `theme`) plus
 * the object-valued `texts` and `environment`, typed as the element types them.
 */
export type PixCheckoutProperties = Partial<
  Pick<PixCheckout, Extract<{ [K in keyof Declared]: Declared[K] extends { state: boolean } ? never : K }[keyof Declared], keyof PixCheckout>>
>;

type EventClass = (typeof events)[keyof typeof events];

/** Each event the element fires, by name: `{'pix-paid': PixPaidEvent, …}`. */
export type PixCheckoutEventMap = { [C in EventClass as C['type']]: InstanceType<C> };
