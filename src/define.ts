/** The script-tag entry: registers `<pix-checkout>` (once, even if the script is loaded twice). */
import { PixCheckout } from './pix-checkout.ts';

export { PixCheckout };
export * from './events.ts';

if (!customElements.get('pix-checkout')) customElements.define('pix-checkout', PixCheckout);

declare global {
  interface HTMLElementTagNameMap {
    'pix-checkout': PixCheckout;
  }
}
