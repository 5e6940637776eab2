/**
 * `import 'pix-checkout/react'`: `<pix-checkout>` in React 19's JSX, type-checked. At run time this
 * entry is `pix-checkout` itself (it registers the element, one module for both imports); for the types
 * alone, `import type {} from 'pix-checkout/react'`.
 *
 * React 19 sets a prop as the element's property when the element has it (`amount={10.5}`,
 * `texts={{…}}`), and `on` + an event's exact name adds a listener for it (`onpix-paid`: lowercase,
 * as the event is named).
 */
import type { DetailedHTMLProps, HTMLAttributes } from 'react';
import type { PixCheckout } from '../pix-checkout.ts';
import type { PixCheckoutEventMap, PixCheckoutProperties } from './element-types.ts';

export * from '../define.ts';
export type { PixCheckoutEventMap, PixCheckoutProperties } from './element-types.ts';

/** `onpix-paid`, `onpix-error`, …: React 19 calls `addEventListener('pix-paid', listener)`. */
export type PixCheckoutReactEvents = {
  [K in keyof PixCheckoutEventMap as `on${K}`]?: (event: PixCheckoutEventMap[K]) => void;
};

/** The props of `<pix-checkout>` in JSX: HTML's own (`id`, `className`, `ref`, …), the element's properties, its events. */
export type PixCheckoutReactProps = DetailedHTMLProps<HTMLAttributes<PixCheckout>, PixCheckout> & PixCheckoutProperties & PixCheckoutReactEvents;

declare module 'react' {
  // eslint-disable-next-line @typescript-eslint/no-namespace -- React's JSX types live in this namespace
  namespace JSX {
    interface IntrinsicElements {
      'pix-checkout': PixCheckoutReactProps;
    }
  }
}
