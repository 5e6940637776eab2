import type { ReactiveControllerHost } from 'lit';
import { loadLocale, localeFor, ptBR, type Translation } from '../locales/index.ts';
import { formatBrl } from '../money.ts';

/** The element whose texts these are: its `locale` and the page's own `texts`. */
export interface LocaleHost extends ReactiveControllerHost {
  readonly locale: string;
  readonly texts: Partial<Translation>;
}

/**
 * The texts for the element's `locale`, merged under the page's `texts`, and the formats of that
 * language. pt-BR is at hand; English and Spanish are loaded the first time (a chunk each,
 * src/locales/index.ts), meanwhile the loading screen shows no text and the payment waits for them
 * (`localeReady`): the request is already on the wire, so they load beside it. It needs none of the
 * host's lifecycle callbacks (the element calls `applyTexts` when its `locale` or `texts` change), so it is
 * not added to the host: it only asks it to render once a language has loaded.
 */
export class LocaleController {
  /** The texts on screen. */
  t: Translation = ptBR;
  /** The page's language is on screen: false while its texts load. */
  hasTranslation = true;
  /** Settles once the page's language is on screen; a payment or an error waits for it. */
  localeReady: Promise<void> = Promise.resolve();
  #money: [string, Intl.NumberFormat] | null = null;

  readonly #host: LocaleHost;

  constructor(host: LocaleHost) {
    this.#host = host;
  }

  /** Takes the host's `locale` and `texts` (call when either changed). */
  applyTexts(): void {
    const host = this.#host;
    const tag = host.locale;
    const base = localeFor(tag);
    this.hasTranslation = base !== undefined;
    if (base) {
      // The locale under the page's texts, by inheritance: pt-BR's later texts, added to it when their
      // chunk arrives (src/load-later.ts), are this widget's at once.
      this.t = Object.assign(Object.create(base) as Translation, host.texts);
      this.localeReady = Promise.resolve();
      return;
    }
    this.localeReady = loadLocale(tag).then((translation) => {
      // The locale changed meanwhile: its own load decides.
      if (host.locale !== tag) return;
      this.t = Object.assign(Object.create(translation) as Translation, host.texts);
      this.hasTranslation = true;
      host.requestUpdate();
    });
  }

  /** Reais in the texts' language (src/money.ts for ours; Intl, built once per tag, for a page's own tag). */
  formatMoney(value: number): string {
    const tag = this.t.tag;
    const own = formatBrl(value, tag);
    if (own !== null) return own;
    if (this.#money?.[0] !== tag) this.#money = [tag, new Intl.NumberFormat(tag, { style: 'currency', currency: 'BRL', currencyDisplay: 'narrowSymbol' })];
    return this.#money[1].format(value);
  }
}
