// Brazilian taxpayer documents: CPF (people, 11 digits) and numeric CNPJ (companies, 14 digits).
// Imports nothing so the widget can bundle it cheaply.

/** Removes every character that is not an ASCII digit. */
export const onlyDigits = (s: string): string => s.replace(/\D/g, '');

// Both check digits use the same mod-11 rule; only the weights differ. Weights run 2, 3, ...
// from the right; CNPJ wraps them back to 2 after 9 (wrap = 8), CPF never wraps.
function valid(s: string, length: number, wrap: number): boolean {
  // Anything but digits and the usual punctuation means the input is not a document number.
  if (!/^[\d./\- ]*$/.test(s)) return false;
  const d = onlyDigits(s);
  // All-same-digit numbers pass the checksum but are never issued.
  if (d.length !== length || /^(\d)\1*$/.test(d)) return false;
  for (let p = length - 2; p < length; p++) {
    let sum = 0;
    for (let i = 0; i < p; i++) sum += +d[i]! * (((p - 1 - i) % wrap) + 2);
    const r = sum % 11;
    if (+d[p]! !== (r < 2 ? 0 : 11 - r)) return false;
  }
  return true;
}

/** True for a CPF with valid check digits; '.', '-', '/' and spaces are allowed as punctuation. */
export const isValidCpf = (s: string): boolean => valid(s, 11, 99);

/** True for a numeric CNPJ with valid check digits; '.', '-', '/' and spaces are allowed. */
export const isValidCnpj = (s: string): boolean => valid(s, 14, 8);

/** True for a valid CPF or CNPJ. */
export const isValidDocument = (s: string): boolean => documentKind(s) !== null;

/** Which kind of document s is, or null when it is neither a valid CPF nor a valid CNPJ. */
export function documentKind(s: string): 'cpf' | 'cnpj' | null {
  return isValidCpf(s) ? 'cpf' : isValidCnpj(s) ? 'cnpj' : null;
}
