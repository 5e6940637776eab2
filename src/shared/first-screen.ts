/**
 * What a script-tag page's head (server/merchant/payment-request.ts), the proxy and the widget agree
 * on for the first screen the head puts on the page before the widget's script arrives.
 */

/**
 * The first screen a script-tag page's head asks for with its payment (renderPaymentRequest): `?render=`
 * one of `locales` on the checkout's payment call adds `field` to a 2xx answer, the element's shadow root
 * for that payment rendered by the proxy (server/ssr/render.ts), which the page's script puts into the
 * plain element before the widget's script has arrived. The widget never reads it: the page's script
 * takes it out of the answer it leaves for the widget.
 */
export const FIRST_SCREEN = { param: 'render', field: 'first_screen', locales: ['pt-BR', 'en', 'es'] } as const;
export type FirstScreenLocale = (typeof FIRST_SCREEN.locales)[number];

/** The widget's language for a BCP 47 tag: `en*` English, `es*` Spanish, anything else (pt-BR, no tag, another language) Brazilian Portuguese. */
export function widgetLocale(tag: string | null | undefined): FirstScreenLocale {
  const lang = (tag ?? '').toLowerCase();
  return lang.startsWith('en') ? 'en' : lang.startsWith('es') ? 'es' : 'pt-BR';
}

/** `first_screen`: the shadow root's styles and markup, and the texts of its copy button's inline handler. */
export interface FirstScreen {
  css: string;
  html: string;
  texts: { copy: string; copied: string; failed: string };
}

/** How long a copy button says "copied" before offering to copy again: the widget's, and the page's handler before it. */
export const COPIED_FOR_MS = 4000;
