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

/**
 * `self[FIRST_SCREENS_PAINTED]`: settles once the first screens a page's head asked for are painted,
 * or are not coming (FIRST_SCREEN_HOLD_MS after the request, no answer yet): the widget's script
 * defines the element then (src/define.ts).
 */
export const FIRST_SCREENS_PAINTED = 'pixCheckoutScreens';
/**
 * How long after the page's request the element's definition waits for its first screen. The
 * answer's tasks wait for the page's first layout on a slow phone (at 4x, answers in by 500 ms went
 * in at 600-800): 250 ms let the widget define itself first in 1 run of 7, past it the widget shows
 * its loading screen.
 */
export const FIRST_SCREEN_HOLD_MS = 1000;

/** The widget's other language for a BCP 47 tag: `en*` English, `es*` Spanish; null for anything else (pt-BR, no tag, another language), Brazilian Portuguese. */
export function otherLanguage(tag: string | null | undefined): 'en' | 'es' | null {
  const lang = (tag ?? '').toLowerCase();
  return lang.startsWith('en') ? 'en' : lang.startsWith('es') ? 'es' : null;
}

/** The widget's locale for a BCP 47 tag (otherLanguage, or pt-BR). */
export const widgetLocale = (tag: string | null | undefined): FirstScreenLocale => otherLanguage(tag) ?? 'pt-BR';

/** `first_screen`: the shadow root's styles and markup, and the texts of its copy button's inline handler. */
export interface FirstScreen {
  css: string;
  html: string;
  texts: { copy: string; copied: string; failed: string };
}

/** How long a copy button says "copied" before offering to copy again: the widget's, and the page's handler before it. */
export const COPIED_FOR_MS = 4000;
