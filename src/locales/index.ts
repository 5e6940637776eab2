/**
 * The widget's languages. Brazilian Portuguese is in the bundle; English and Spanish are chunks of
 * their own, loaded when a widget on the page speaks them (beside its first request, see
 * src/controllers/locale.ts), so a Brazilian page downloads no text it does not show.
 */
import { otherLanguage } from '../shared/first-screen.ts';
import { ptBR } from './pt-BR.ts';
import { spoken, type Translation } from './translation.ts';

export type { Translation };
export { ptBR };

type Language = 'en' | 'es';

/** Each chunk loaded once for the page; the import's URL is the bundle's own, beside it. */
const LOADERS: Record<Language, () => Promise<Translation>> = {
  en: () => import('./en.ts').then((module) => module.en(spoken)),
  es: () => import('./es.ts').then((module) => module.es(spoken)),
};
const loaded: Partial<Record<Language, Translation>> = {};

/** The language's chunk for a BCP 47 tag, or null for pt-BR, which is in the bundle (the rule: src/shared/first-screen.ts). */
const languageOf: (tag: string | undefined) => Language | null = otherLanguage;

/** The locale for a BCP 47 tag when it is at hand (pt-BR always; en and es once loaded); else undefined. */
export function localeFor(tag: string | undefined): Translation | undefined {
  const language = languageOf(tag);
  return language ? loaded[language] : ptBR;
}

/**
 * The locale for a BCP 47 tag, loading it if needed. A language that cannot be loaded (the chunk
 * unreachable) resolves to pt-BR, with a warning: the customer can still pay, and a later widget or
 * locale change tries again.
 */
export function loadLocale(tag: string | undefined): Promise<Translation> {
  const language = languageOf(tag);
  if (!language) return Promise.resolve(ptBR);
  const ready = loaded[language];
  if (ready) return Promise.resolve(ready);
  return LOADERS[language]().then(
    (translation) => (loaded[language] = translation),
    (error: unknown) => {
      console.warn(`pix-checkout: the "${language}" texts could not be loaded (${String(error)}); showing pt-BR`);
      return ptBR;
    },
  );
}
