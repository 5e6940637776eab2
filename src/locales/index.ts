import { en } from './en.ts';
import { es } from './es.ts';
import { ptBR } from './pt-BR.ts';
import type { Translation } from './translation.ts';

export type { Translation };
export { en, es, ptBR };

/** The locale for a BCP 47 tag: `en*` English, `es*` Spanish, anything else Brazilian Portuguese. */
export function localeFor(tag: string | undefined): Translation {
  const lang = (tag ?? '').toLowerCase();
  return lang.startsWith('en') ? en : lang.startsWith('es') ? es : ptBR;
}
