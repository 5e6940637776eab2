/**
 * Pix key formats (spec 2.3), for transfers. Imports nothing but document.ts.
 *
 * ASSUMPTION: the spec writes the CPF rule as `\D{11}`, which would mean eleven non-digits; we read it
 * as eleven digits (`\d{11}`), as its own "11 digits" column says, and also check the CPF's digits.
 */
import { isValidCpf, onlyDigits } from './document.ts';

export const PIX_KEY_TYPES = ['CPF', 'EMAIL', 'TELEFONE', 'CHAVE_ALEATORIA'] as const;
export type PixKeyType = (typeof PIX_KEY_TYPES)[number];

const EMAIL = /^\S+@\S+\.\S+$/;
const PHONE = /^\+55[\d\s().-]+$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** The DICT's longest key (an e-mail); also the BR Code's limit for field 26-01. */
const MAX_KEY_LENGTH = 77;

/** True when `key` is a well-formed key of `type`. */
export function isValidPixKey(key: string, type: PixKeyType): boolean {
  if (key.length === 0 || key.length > MAX_KEY_LENGTH) return false;
  switch (type) {
    case 'CPF':
      return isValidCpf(key);
    case 'EMAIL':
      return EMAIL.test(key);
    case 'TELEFONE':
      return PHONE.test(key) && onlyDigits(key).length === 13;
    case 'CHAVE_ALEATORIA':
      return UUID.test(key);
  }
}

/** The type of a key given without one (transfer to a key, 4.6), or null when it fits none. */
export function detectPixKeyType(key: string): PixKeyType | null {
  return PIX_KEY_TYPES.find((type) => isValidPixKey(key, type)) ?? null;
}

/** The key as the DICT stores it: digits only for CPF, `+55` and digits for phones, lower-case otherwise. */
export function normalizePixKey(key: string, type: PixKeyType): string {
  if (type === 'CPF') return onlyDigits(key);
  if (type === 'TELEFONE') return `+${onlyDigits(key)}`;
  return key.trim().toLowerCase();
}
