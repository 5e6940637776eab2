/**
 * `renderPaymentRequest`: the checkout's payment asked for by the page itself, as its HTML is parsed,
 * for a page whose widget asks for its payment (the plain `<pix-checkout endpoint checkout>`, no
 * `payment-from`, no server render). A `<link rel="preload">` cannot do it: preloads are GETs, and the
 * checkout's payment call is a POST (it issues the payment). So a short inline script sends the same
 * request the widget sends (`POST {endpoint}/checkouts/:id/payment`, no body), in parallel with the
 * widget's script's download instead of after it, and leaves the answer, read whole
 * (src/api/client.ts's `Answer`: status, Retry-After, text), under `self[EARLY_REQUESTS]` by the
 * request's absolute URL; the widget takes it (src/early.ts) and asks nothing more. A request nobody
 * takes costs nothing but the payment it issued, which the widget would have issued anyway.
 *
 * The first screen: the request asks the proxy for the payment's screen too (`?render=`, src/shared/first-screen.ts
 * `FIRST_SCREEN`), and the script puts it into the element as its shadow root as soon as both are
 * there, with the server render's copy handler (server/merchant/copy-handler.ts): the QR and a working
 * copy button on screen before the widget's script has arrived, which takes them over as it takes
 * over a server render (on such a page the widget's script defines the element once that screen is
 * painted, src/define.ts). Only into an element that shows nothing yet (the widget has not drawn it)
 * and that it would render the same (this checkout, no payment of its own, the same locale, the
 * default mode and layout); anything else is left to the widget. The answer the widget reads is the proxy's without it.
 *
 * Plain ES2017 and no import: a merchant's server in any language can write the same bytes
 * (docs/widget.md has them).
 */
import { FIRST_SCREEN, FIRST_SCREEN_HOLD_MS, FIRST_SCREENS_PAINTED, widgetLocale } from '../../src/shared/first-screen.ts';
import { EARLY_REQUESTS, CHECKOUT_PATHS, fillPath, underEndpoint } from '../../src/shared/wire.ts';
import { COPY_HANDLER } from './copy-handler.ts';
import { escapeHtml } from './html.ts';
import { requireSet } from './not-set.ts';

export interface RenderPaymentRequestOptions {
  /** The proxy's browser API as the page reaches it, e.g. `/api` (the element's `endpoint`). */
  endpoint: string;
  /** Your Content-Security-Policy's nonce for this response, when `script-src` has no 'unsafe-inline'. */
  nonce?: string;
  /** The element's `locale` attribute as the page writes it (default: none, pt-BR): the first screen is rendered in its language. */
  locale?: string;
  /**
   * Put the payment's first screen into the element before the widget's script arrives (default
   * true). False: the request alone, e.g. for an element in `mode="link"`, or a page under Trusted
   * Types (the screen is set as HTML).
   */
  firstScreen?: boolean;
}

/** JSON inside a <script> element: `<` escaped, so nothing in it can end the element early. */
const scriptJson = (value: unknown) => JSON.stringify(value).replace(/</g, '\\u003c');

/**
 * The `<script>` to put in the page's `<head>`, for the checkout the page's `<pix-checkout checkout>`
 * names: first in the head, before any stylesheet (a classic script waits for the stylesheets above
 * it, which would hold the request until they are in). The `pix-checkout:request` mark says when it
 * was sent, `pix-checkout:first-screen` when its screen was put on the page.
 */
export function renderPaymentRequest(checkoutId: string, options: RenderPaymentRequestOptions): string {
  requireSet(checkoutId, 'renderPaymentRequest', 'checkoutId', { what: "the checkout's id, as the element's checkout attribute has it" });
  requireSet(options?.endpoint, 'renderPaymentRequest', 'endpoint', { what: "the proxy's browser API as the page reaches it, e.g. /api" });
  const url = scriptJson(underEndpoint(options.endpoint, fillPath(CHECKOUT_PATHS.checkoutPayment, { id: checkoutId })));
  const nonce = options.nonce ? ` nonce="${escapeHtml(options.nonce)}"` : '';
  const answer = `{status:r.status,retryAfter:r.headers.get("retry-after"),text}`;
  if (options.firstScreen === false)
    return `<script${nonce}>(()=>{const q=self.${EARLY_REQUESTS}||(self.${EARLY_REQUESTS}={}),u=new URL(${url},location.href).href;if(!q[u]){performance.mark("pix-checkout:request");(q[u]=fetch(u,{method:"POST"}).then(r=>r.text().then(text=>(${answer})))).catch(()=>{})}})()</script>`;
  const tag = options.locale ?? 'pt-BR';
  const field = FIRST_SCREEN.field;
  // Into an element that shows nothing yet (no shadow root: the widget has not drawn it), and only
  // where the widget would render the same; `o` runs at the answer and, if the page is still being
  // parsed then, once more when it is.
  const put =
    `const o=()=>{try{for(const e of document.getElementsByTagName("pix-checkout"))` +
    `if(e.getAttribute("checkout")===${scriptJson(checkoutId)}&&!e.shadowRoot&&(e.getAttribute("locale")||"pt-BR")===${scriptJson(tag)}` +
    `&&(e.getAttribute("mode")||"full")=="full"&&(e.getAttribute("layout")||"auto")=="auto"&&!e.hasAttribute("payment")&&!e.hasAttribute("payment-from")){` +
    `const c=new CSSStyleSheet;c.replaceSync(s.css);const h=e.attachShadow({mode:"open"});h.adoptedStyleSheets=[c];h.innerHTML=s.html;(${COPY_HANDLER})(e,s.texts);performance.mark("pix-checkout:first-screen")}}catch(x){}};` +
    `o();if(document.readyState=="loading")document.addEventListener("DOMContentLoaded",o)`;
  // The widget's script defines the element once these screens are painted (src/define.ts): each
  // answer in, or FIRST_SCREEN_HOLD_MS, then a frame (none on a hidden page).
  const painted =
    `self.${FIRST_SCREENS_PAINTED}=Promise.all([self.${FIRST_SCREENS_PAINTED},Promise.race([p,new Promise(r=>setTimeout(r,${FIRST_SCREEN_HOLD_MS}))])])` +
    `.then(()=>new Promise(r=>document.hidden?r():requestAnimationFrame(()=>setTimeout(r))))`;
  return (
    `<script${nonce}>(()=>{const q=self.${EARLY_REQUESTS}||(self.${EARLY_REQUESTS}={}),u=new URL(${url},location.href).href;if(!q[u]){performance.mark("pix-checkout:request");` +
    `const p=(q[u]=fetch(u+"?${FIRST_SCREEN.param}=${widgetLocale(tag)}",{method:"POST"}).then(r=>r.text().then(text=>{const a=${answer};` +
    `try{const j=JSON.parse(text),s=j.${field};if(s){delete j.${field};a.text=JSON.stringify(j);${put}}}catch(x){}return a}))).catch(()=>{});${painted}}})()</script>`
  );
}
