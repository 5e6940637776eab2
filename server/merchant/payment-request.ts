/**
 * `renderPaymentRequest`: the checkout's payment asked for by the page itself, as its HTML is parsed,
 * for a page whose widget asks for its payment (the plain `<pix-checkout endpoint checkout>`, no
 * `payment-from`, no server render). A `<link rel="preload">` cannot do it: preloads are GETs, and the
 * checkout's payment call is a POST (it issues the payment). So a few hundred bytes of inline script
 * send the same request the widget sends (`POST {endpoint}/checkouts/:id/payment`, no body), in
 * parallel with the widget's script's download instead of after it, and leave the answer, read whole
 * (src/api/client.ts's `Answer`: status, Retry-After, text), under `self[EARLY_REQUESTS]` by the
 * request's absolute URL; the widget takes it (src/early.ts) and asks nothing more. A request nobody takes costs nothing but the payment it issued, which the widget
 * would have issued anyway. Plain ES2017 and no import: a merchant's server in any language can
 * write the same bytes (docs/widget.md has them).
 */
import { EARLY_REQUESTS, CHECKOUT_PATHS, fillPath, underEndpoint } from '../../src/shared/wire.ts';
import { escapeHtml } from './html.ts';
import { requireSet } from './not-set.ts';

export interface RenderPaymentRequestOptions {
  /** The proxy's browser API as the page reaches it, e.g. `/api` (the element's `endpoint`). */
  endpoint: string;
  /** Your Content-Security-Policy's nonce for this response, when `script-src` has no 'unsafe-inline'. */
  nonce?: string;
}

/**
 * The `<script>` to put in the page's `<head>`, for the checkout the page's `<pix-checkout checkout>`
 * names: first in the head, before any stylesheet (a classic script waits for the stylesheets above
 * it, which would hold the request until they are in). The `pix-checkout:request` mark says when it was sent.
 */
export function renderPaymentRequest(checkoutId: string, options: RenderPaymentRequestOptions): string {
  requireSet(checkoutId, 'renderPaymentRequest', 'checkoutId', { what: "the checkout's id, as the element's checkout attribute has it" });
  requireSet(options?.endpoint, 'renderPaymentRequest', 'endpoint', { what: "the proxy's browser API as the page reaches it, e.g. /api" });
  // JSON inside a <script> element: `<` escaped, so nothing in it can end the element early.
  const url = JSON.stringify(underEndpoint(options.endpoint, fillPath(CHECKOUT_PATHS.checkoutPayment, { id: checkoutId }))).replace(/</g, '\\u003c');
  const nonce = options.nonce ? ` nonce="${escapeHtml(options.nonce)}"` : '';
  return `<script${nonce}>(()=>{const q=self.${EARLY_REQUESTS}||(self.${EARLY_REQUESTS}={}),u=new URL(${url},location.href).href;if(!q[u]){performance.mark("pix-checkout:request");(q[u]=fetch(u,{method:"POST"}).then(r=>r.text().then(text=>({status:r.status,retryAfter:r.headers.get("retry-after"),text})))).catch(()=>{})}})()</script>`;
}
