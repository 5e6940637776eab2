/**
 * `renderPixCheckout`, from pix-checkout-server/render: the merchant's server renders `<pix-checkout>`
 * with its checkout's payment already inside, as declarative shadow DOM (Lit's own SSR,
 * @lit-labs/ssr), so the QR code, the copy-and-paste code, the amount, who is paid and the time left
 * are in the page's first paint, before any script runs. The widget's script, when it arrives, adopts
 * that markup with no request for the payment (src/pix-checkout.ts) and follows its status live.
 *
 * What it needs from the merchant's server: the checkout's current payment (`CheckoutView.payment`:
 * create the checkout with `issue_payment: true`, or `checkouts.retrieve(id)` when the page is asked
 * for), and the page served fresh (`Cache-Control: no-store`): the markup holds a payment's state at
 * one moment.
 */
import { render } from '@lit-labs/ssr';
import { collectResult } from '@lit-labs/ssr/lib/render-result.js';
import { html, nothing, type CSSResult } from 'lit';
import { loadLater } from '../../src/load-later.ts';
import { loadLocale } from '../../src/locales/index.ts';
import { PixCheckout } from '../../src/pix-checkout.ts';
import { PaymentView, type CheckoutView } from '../../src/shared/contract.ts';
import type { FirstScreen, FirstScreenLocale } from '../../src/shared/first-screen.ts';
import { COPY_HANDLER } from '../merchant/copy-handler.ts';
import { escapeHtml } from '../merchant/html.ts';
import { requireSet } from '../merchant/not-set.ts';
import { renderPaymentRequest } from '../merchant/payment-request.ts';
// A page that leaves the payment to the widget asks for it in its head: the same entry has that helper.
export { renderPaymentRequest, type RenderPaymentRequestOptions } from '../merchant/payment-request.ts';
import { minifyCss } from './css.ts';

export interface RenderPixCheckoutOptions {
  /** The proxy's browser API as the page reaches it, e.g. `/api` (the element's `endpoint`). */
  endpoint: string;
  /** `pt-BR` (default), `en` or `es`: the element's `locale`, rendered in that language. */
  locale?: string;
  /**
   * The page's request headers (Node's, Fetch's or Express's): the server cannot see the screen, so
   * the layout is guessed from them (`isPhoneRequest`, `sharesFrom`). A wrong guess is corrected when
   * the script runs, with one layout change then. `phone` and `share` override a guess.
   */
  headers?: RequestHeaders;
  /** The customer is on a phone: the code before the QR, and the phone's buttons. Default: `isPhoneRequest(headers)`. */
  phone?: boolean;
  /** The browser has the Web Share API (the share button). Default: `sharesFrom(headers)`. */
  share?: boolean;
  /** The element's `layout`, `theme` and `mode` attributes (defaults: auto, auto, full). */
  layout?: 'auto' | 'phone' | 'desktop';
  theme?: 'auto' | 'light' | 'dark';
  mode?: 'full' | 'link';
  /** The element's `id`, for the page's own script and styles. */
  id?: string;
  /**
   * Your Content-Security-Policy's nonce for this response, when `style-src` or `script-src` has no
   * 'unsafe-inline': the rendered widget's styles are a `<style>` element, and its copy button's
   * handler (until the widget's script takes over) a small inline `<script>` after the element,
   * which the policy must allow. (Once the script runs, the widget's styles are constructed
   * stylesheets, which CSP does not govern.)
   */
  nonce?: string;
}

/** The checkout's fields the render reads; a `CheckoutView` from the proxy has them. */
export type RenderableCheckout = Pick<CheckoutView, 'checkout_id' | 'payment' | 'renewals_left'>;

if (!customElements.get('pix-checkout')) customElements.define('pix-checkout', PixCheckout);
/** The element's styles, minified on the first render. */
let styles: string | undefined;

/** Stands for the browser's share sheet on the server: a page is rendered with the share button it will have. */
const SHARE_SHEET = { share: () => Promise.resolve() };

/** Request headers as Node, Fetch or Express give them. */
export type RequestHeaders = Headers | Record<string, string | string[] | undefined>;

const header = (headers: RequestHeaders, name: string) => {
  const value = headers instanceof Headers ? headers.get(name) : headers[name];
  return (Array.isArray(value) ? value[0] : value) ?? undefined;
};

/**
 * `<pix-checkout>` for the checkout, as HTML: with its payment inside (declarative shadow DOM) when
 * the checkout has one, else the plain element, which asks the proxy for it when its script runs.
 * Put the widget's script on the page as for any `<pix-checkout>` (`<script type="module" src=".../pix-checkout.js">`).
 */
export async function renderPixCheckout(checkout: RenderableCheckout, options: RenderPixCheckoutOptions): Promise<string> {
  requireSet(checkout, 'renderPixCheckout', 'checkout', { what: 'the CheckoutView your server created (issue_payment: true) or retrieved' });
  requireSet(options?.endpoint, 'renderPixCheckout', 'endpoint', { what: "the proxy's browser API as the page reaches it, e.g. /api" });
  const locale = options.locale ?? 'pt-BR';
  const parsed = checkout.payment ? PaymentView.safeParse(checkout.payment) : null;
  if (parsed && !parsed.success) throw new TypeError(`renderPixCheckout: checkout.payment is not a payment view (${parsed.error.issues[0]?.message})`);
  // Only the fields the browser contract has (PaymentView strips the rest); a checkout's payment
  // says whether another code may be issued (the "I need more time" offer).
  const payment = parsed ? { ...parsed.data, renewable: parsed.data.renewable ?? checkout.renewals_left > 0 } : null;
  // Without a payment the element renders nothing of its own: the plain tag, and the page asks for its
  // payment as it is parsed (renderPaymentRequest, after it), which its script takes when it runs.
  if (!payment) {
    const attributes = {
      id: options.id,
      endpoint: options.endpoint,
      checkout: checkout.checkout_id,
      locale,
      layout: options.layout,
      theme: options.theme,
      mode: options.mode,
    };
    return `<pix-checkout${Object.entries(attributes)
      .filter(([, value]) => value !== undefined)
      .map(([name, value]) => ` ${name}="${escapeHtml(value!)}"`)
      .join(
        '',
      )}></pix-checkout>${renderPaymentRequest(checkout.checkout_id, { endpoint: options.endpoint, nonce: options.nonce, locale, firstScreen: options.mode !== 'link' && (options.layout ?? 'auto') === 'auto' })}`;
  }
  const { markup, texts } = await renderElement(checkout.checkout_id, payment, { ...options, locale });
  if (options.mode === 'link') return markup;
  const nonce = options.nonce ? ` nonce="${escapeHtml(options.nonce)}"` : '';
  return `${markup}<script${nonce}>(${COPY_HANDLER})(document.currentScript.previousElementSibling,${JSON.stringify(texts).replace(/</g, '\\u003c')})</script>`;
}

/** The element with its payment inside (declarative shadow DOM), its styles minified, and its copy button's texts. */
async function renderElement(
  checkoutId: string,
  payment: PaymentView,
  options: RenderPixCheckoutOptions & { locale: string },
): Promise<{ markup: string; texts: FirstScreen['texts'] }> {
  // English and Spanish texts are modules of their own: loaded once, then at hand for every render.
  const t = await loadLocale(options.locale);
  // The screens of a code's end (paid, expired, canceled) and the buttons no first QR needs are the later chunk's.
  await loadLater();
  const headers = options.headers ?? {};
  const phone = options.phone ?? (options.layout === 'phone' || (options.layout !== 'desktop' && isPhoneRequest(headers)));
  const share = options.share ?? sharesFrom(headers);
  // prettier-ignore
  const element = html`<pix-checkout id=${options.id ?? nothing} endpoint=${options.endpoint} checkout=${checkoutId} locale=${options.locale} layout=${options.layout ?? nothing} theme=${options.theme ?? nothing} mode=${options.mode ?? nothing} payment=${JSON.stringify(payment)} .phoneScreen=${phone} .environment=${{ share: share ? SHARE_SHEET : null }}></pix-checkout>`;
  const markup = (await collectResult(render(element)))
    // The widget's styles as the script-tag build carries them (minified once).
    .replace(/<style>[^]*?<\/style>/, () => `<style${options.nonce ? ` nonce="${escapeHtml(options.nonce)}"` : ''}>${minifiedStyles()}</style>`);
  // The code field's text is a property in the browser (`.value`), which SSR does not write: it goes
  // into the field's markup here, so the code can be selected and copied before any script runs.
  const withCode = markup.replace(
    /(<textarea\b[^>]*\bpart="code"[^>]*>)(<\/textarea>)/,
    (_all, open: string, close: string) => `${open}${escapeHtml(payment.brcode)}${close}`,
  );
  return { markup: withCode, texts: { copy: t.copy, copied: t.copied, failed: t.copyFailed } };
}

const minifiedStyles = () => (styles ??= minifyCss(PixCheckout.elementStyles.map((style) => (style as CSSResult).cssText).join('')).trim());

/**
 * The first screen of a checkout's payment (src/shared/first-screen.ts `FirstScreen`), for the proxy's answer
 * to a script-tag page's head (renderPaymentRequest): the element's shadow root as the server render
 * writes it, its styles apart (the page's script adopts them as a constructed style sheet, which a
 * page's Content-Security-Policy for styles does not refuse), with the layout guessed from the page's
 * request headers as the server render guesses it. The widget takes it over as it takes over the
 * server render's markup.
 */
export async function renderFirstScreen(payment: PaymentView, options: { locale: FirstScreenLocale; headers: RequestHeaders }): Promise<FirstScreen> {
  const { markup, texts } = await renderElement('', payment, { endpoint: '', locale: options.locale, headers: options.headers });
  const open = /<template shadowroot(?:mode)?="open"[^>]*>/.exec(markup);
  const close = markup.lastIndexOf('</template>');
  if (!open || close < open.index) throw new Error('renderFirstScreen: the render has no declarative shadow root');
  // Lit's hydration markers (comments, `<?>`) go: the widget replaces this markup, it does not hydrate it.
  const html = markup
    .slice(open.index + open[0].length, close)
    .replace(/<style>[^]*?<\/style>/, '')
    .replace(/<!--\/?lit-[^]*?-->|<\?>/g, '');
  return { css: minifiedStyles(), html, texts };
}

/**
 * Whether a request comes from a phone, from its headers: the `Sec-CH-UA-Mobile` client hint
 * (Chromium) when sent, else a phone's User-Agent.
 */
export function isPhoneRequest(headers: RequestHeaders): boolean {
  const hint = header(headers, 'sec-ch-ua-mobile');
  if (hint === '?1') return true;
  if (hint === '?0') return false;
  return /Mobi|Android|iPhone|iPod/i.test(header(headers, 'user-agent') ?? '');
}

/**
 * Whether the browser that sent these headers has the Web Share API (`navigator.share`), from its
 * User-Agent: Safari (iOS, iPadOS, macOS), Chromium browsers on Android, Windows, ChromeOS and macOS,
 * Firefox on Android; not Firefox on desktops, nor Chromium on Linux. A guess: the widget's script
 * decides, and a wrong guess moves what is below the button once.
 */
export function sharesFrom(headers: RequestHeaders): boolean {
  const ua = header(headers, 'user-agent') ?? '';
  if (/Android|iPhone|iPad|iPod/i.test(ua)) return true;
  if (/Firefox\//.test(ua)) return false;
  if (/(Chrome|CriOS|Edg)\//.test(ua)) return /Windows|CrOS|Macintosh/.test(ua);
  return /Macintosh/.test(ua) && /Version\/[\d.]+.*Safari\//.test(ua);
}
