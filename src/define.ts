/**
 * The script-tag entry and `import 'pix-checkout'`: registers `<pix-checkout>` (once, even if the
 * script is loaded twice) and exports the class, its events and types.
 */
// First: the checkout payments of the page's elements are asked for before the rest is evaluated.
import './start-early.ts';
import { pageScreens } from './early.ts';
import { PixCheckout } from './pix-checkout.ts';

export * from './element.ts';

const define = () => customElements.get('pix-checkout') || customElements.define('pix-checkout', PixCheckout);
if (pageScreens) void pageScreens.then(define);
else define();

declare global {
  interface HTMLElementTagNameMap {
    'pix-checkout': PixCheckout;
  }
}
