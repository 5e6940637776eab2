// Brazilian taxpayer documents: CPF (people, 11 digits) and CNPJ (companies, 14 characters). Since
// July 2026 a new CNPJ may carry letters A-Z in its first 12 characters (the alphanumeric CNPJ);
// its 2 check digits stay digits, and older all-digit CNPJs stay valid. The Receita Federal's rule
// for both: each character counts as its ASCII code minus 48 ('0'-'9' are 0-9, 'A' is 17, 'Z' 42),
// then the numeric CNPJ's mod-11 weights. Lower-case letters are read as upper-case.
// Imports nothing so the widget can bundle it cheaply.

/** Removes every character that is not an ASCII digit. */
export const onlyDigits = (s: string): string => s.replace(/\D/g, '');

/**
 * A CPF or CNPJ without its punctuation, letters upper-cased ('12.abc.345/01de-35' -> '12ABC34501DE35'):
 * the form to compare or look documents up by, which onlyDigits is not since CNPJs carry letters.
 */
export const normalizeDocument = (s: string): string => s.replace(/[^\dA-Za-z]/g, '').toUpperCase();

// Both check digits use the same mod-11 rule; only the weights differ. Weights run 2, 3, ...
// from the right; CNPJ wraps them back to 2 after 9 (wrap = 8), CPF never wraps. `shape` is the
// document without punctuation: its length and where letters may be.
function valid(s: string, shape: RegExp, wrap: number): boolean {
  // Anything but letters, digits and the usual punctuation means the input is not a document number.
  if (!/^[\dA-Za-z./\- ]*$/.test(s)) return false;
  const d = normalizeDocument(s);
  // All-same-character numbers pass the checksum but are never issued.
  if (!shape.test(d) || /^(.)\1*$/.test(d)) return false;
  for (let p = d.length - 2; p < d.length; p++) {
    let sum = 0;
    for (let i = 0; i < p; i++) sum += (d.charCodeAt(i) - 48) * (((p - 1 - i) % wrap) + 2);
    const r = sum % 11;
    if (+d[p]! !== (r < 2 ? 0 : 11 - r)) return false;
  }
  return true;
}

/** True for a CPF with valid check digits; '.', '-', '/' and spaces are allowed as punctuation. */
export const isValidCpf = (s: string): boolean => valid(s, /^\d{11}$/, 99);

/**
 * True for a CNPJ, numeric or alphanumeric ('12.ABC.345/01DE-35'), with valid check digits;
 * '.', '-', '/' and spaces are allowed, letters in either case.
 */
export const isValidCnpj = (s: string): boolean => valid(s, /^[\dA-Z]{12}\d\d$/, 8);

/** True for a valid CPF or CNPJ. */
export const isValidDocument = (s: string): boolean => documentKind(s) !== null;

/** Which kind of document s is, or null when it is neither a valid CPF nor a valid CNPJ. */
export function documentKind(s: string): 'cpf' | 'cnpj' | null {
  return isValidCpf(s) ? 'cpf' : isValidCnpj(s) ? 'cnpj' : null;
}
