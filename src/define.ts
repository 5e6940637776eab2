/**
 * The script-tag entry and `import 'pix-checkout'`: registers `<pix-checkout>` (once, even if the
 * script is loaded twice) and exports the class, its events and types.
 */
import { PixCheckout } from './pix-checkout.ts';

export * from './element.ts';

if (!customElements.get('pix-checkout')) customElements.define('pix-checkout', PixCheckout);

declare global {
  interface HTMLElementTagNameMap {
    'pix-checkout': PixCheckout;
  }
}
