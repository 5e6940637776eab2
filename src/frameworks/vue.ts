/**
 * `import 'pix-checkout/vue'`: `<pix-checkout>` in Vue 3, type-checked in `.vue` templates (vue-tsc,
 * through `GlobalComponents`) and in Vue TSX. At run time this entry is `pix-checkout` itself (it
 * registers the element, one module for both imports); for the types alone,
 * `import type {} from 'pix-checkout/vue'`. Vue's compiler must still be told that `pix-checkout` is
 * a custom element (`isCustomElement`).
 *
 * Vue sets a binding as the element's property when the element has it (`:amount="10.5"`,
 * `:texts="…"`), and `@pix-paid` (TSX: `onPix-paid`) listens to the `pix-paid` event.
 */
import type { EmitFn, HTMLAttributes, PublicProps } from 'vue';
import type { PixCheckout } from '../pix-checkout.ts';
import type { PixCheckoutEventMap, PixCheckoutProperties } from './element-types.ts';

export * from '../define.ts';
export type { PixCheckoutEventMap, PixCheckoutProperties } from './element-types.ts';

/**
 * What vue-tsc reads for `<pix-checkout>` in a template: a component whose `$props` are HTML's
 * attributes and the element's properties, and whose `$emit` are its events (the shape Vue's guide
 * gives for custom elements). A template ref is the element itself; `$props` and `$emit` exist for the
 * type check only.
 */
export type PixCheckoutVueComponent = new () => PixCheckout & {
  /** @deprecated Not on the element: for the template type check only. */
  $props: HTMLAttributes & PixCheckoutProperties & PublicProps;
  /** @deprecated Not on the element: for the template type check only. */
  $emit: EmitFn<{ [K in keyof PixCheckoutEventMap]: (event: PixCheckoutEventMap[K]) => void }>;
};

/** `<pix-checkout>` in Vue TSX: HTML's attributes, the element's properties, `onPix-paid`-style listeners. */
export type PixCheckoutVueAttributes = HTMLAttributes &
  PixCheckoutProperties & {
    [K in keyof PixCheckoutEventMap as `on${Capitalize<K>}`]?: (event: PixCheckoutEventMap[K]) => void;
  };

declare module 'vue' {
  interface GlobalComponents {
    'pix-checkout': PixCheckoutVueComponent;
  }
  interface IntrinsicElementAttributes {
    'pix-checkout': PixCheckoutVueAttributes;
  }
}
