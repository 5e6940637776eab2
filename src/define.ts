/**
 * The script-tag entry and `import 'pix-checkout'`: registers `<pix-checkout>` (once, even if the
 * script is loaded twice) and exports the class, its events and types.
 */
// First: the checkout payments of the page's elements are asked for before the rest is evaluated.
import './start-early.ts';
import { FIRST_SCREENS_PAINTED } from './shared/first-screen.ts';
import { PixCheckout } from './pix-checkout.ts';

export * from './element.ts';

const define = () => customElements.get('pix-checkout') || customElements.define('pix-checkout', PixCheckout);
// A page whose head puts the first screen in (renderPaymentRequest): defined once that screen is
// painted, so that its frame waits for none of this script's work.
const screens = (self as { [FIRST_SCREENS_PAINTED]?: Promise<unknown> })[FIRST_SCREENS_PAINTED];
if (screens) void screens.then(define);
else define();

declare global {
  interface HTMLElementTagNameMap {
    'pix-checkout': PixCheckout;
  }
}
