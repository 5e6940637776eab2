/**
 * Reais as `new Intl.NumberFormat(tag, { style: 'currency', currency: 'BRL', currencyDisplay:
 * 'narrowSymbol' })` writes them, for the widget's own languages, without Intl: a page's first
 * NumberFormat costs 50 to 120 ms of main thread in Chromium (ICU's number data, measured in headless
 * Chromium), and it stood between the payment's answer and the QR on screen. The patterns are
 * CLDR's for BRL: symbol before or after, a no-break space where CLDR puts one, the group and
 * decimal separators, and the minimum grouping digits (Spanish groups from five digits). A browser
 * test compares them with each engine's Intl on many amounts. Other tags (a page's own `texts.tag`)
 * get null: the caller uses Intl.
 */
const PATTERNS: Record<string, readonly [prefix: string, suffix: string, group: string, decimal: string, groupFrom: number]> = {
  'pt-BR': ['R$\u00a0', '', '.', ',', 4],
  en: ['R$', '', ',', '.', 4],
  es: ['', '\u00a0R$', '.', ',', 5],
};

/** `value` (reais, at most two decimals, not negative: the proxy's payment values) in `tag`'s way, or null for another tag. */
export function formatBrl(value: number, tag: string): string | null {
  const pattern = PATTERNS[tag];
  if (!pattern || !(value >= 0)) return null;
  const [prefix, suffix, group, decimal, groupFrom] = pattern;
  const cents = Math.round(value * 100);
  let whole = String(Math.floor(cents / 100));
  if (whole.length >= groupFrom) whole = whole.replace(/\B(?=(\d{3})+$)/g, group);
  return `${prefix}${whole}${decimal}${String(cents % 100).padStart(2, '0')}${suffix}`;
}
