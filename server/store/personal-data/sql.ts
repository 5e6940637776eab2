/** What both stores' personal-data statements share. */
import type { PixKeyType } from '../../../src/shared/pix-keys.ts';

/** What an erased Pix key reads as (the column is required); an erased name or document is null. */
export const ERASED_KEY = 'erased';

/** The prefix of a value sealed under the first key format (domain/personal-data.ts): never compared as a document. */
export const SEALED_PREFIX = 'v1:';

/** Pix key types that are never a CPF or CNPJ: such a key is not matched against a document. */
const NOT_DOCUMENT_KEY_TYPES = ['EMAIL', 'TELEFONE', 'CHAVE_ALEATORIA'] as const satisfies readonly PixKeyType[];

/** `pix_key_type` not one of those, as SQL. */
export const mayBeDocumentKey = `(pix_key_type IS NULL OR pix_key_type NOT IN (${NOT_DOCUMENT_KEY_TYPES.map((type) => `'${type}'`).join(', ')}))`;

/** A column's document as src/shared/document.ts's normalizeDocument makes it (the usual punctuation off, upper-case), in SQL both databases speak. */
export const normalized = (column: string): string => `UPPER(REPLACE(REPLACE(REPLACE(REPLACE(${column}, '.', ''), '-', ''), '/', ''), ' ', ''))`;
