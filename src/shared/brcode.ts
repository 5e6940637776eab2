// Pix copy-and-paste code (BR Code, EMV MPM): parse/validate and build.
// Imports nothing on purpose: it ships inside the browser widget, whose size budget is tight.
// Format facts live in /work/shared/spec/brcode.md.

/** Why a payload was rejected. */
export type BrCodeErrorCode =
  | 'empty'
  | 'too_long'
  | 'malformed_field'
  | 'missing_field'
  | 'invalid_field'
  | 'bad_crc';

/** The fields of a valid BR Code that callers care about. */
export interface BrCode {
  /** True when field 26 carries a location URL (subfield 25) instead of a key. */
  dynamic: boolean;
  /** Field 01: '11' static (reusable), '12' single use. */
  pointOfInitiation?: 'static' | 'dynamic';
  key?: string;
  description?: string;
  locationUrl?: string;
  /** As written in field 54, e.g. '10.50'. */
  amount?: string;
  merchantName: string;
  merchantCity: string;
  postalCode?: string;
  txid: string;
  /** Upper-cased. */
  crc: string;
  /** Reserved: a Latin-1-only CRC match is rejected as 'bad_crc', so parseBrCode never sets this. */
  latin1Crc?: boolean;
}

/** Outcome of parseBrCode. */
export type BrCodeResult =
  | { ok: true; code: BrCode }
  | { ok: false; error: BrCodeErrorCode; message: string };

/** Input of buildDynamicBrCode; amount is in reais. */
export interface DynamicBrCodeInput {
  /** The charge's URL without https:// (the scheme is implied by the standard). */
  locationUrl: string;
  merchantName: string;
  merchantCity: string;
  amount?: number;
}

const GUI = 'br.gov.bcb.pix';

// Names for messages; other ids are reported by number alone. Nested ids are 'template.sub'.
const NAMES: Record<string, string> = {
  '00': 'format indicator',
  '01': 'point of initiation',
  26: 'Pix account',
  52: 'merchant category',
  53: 'currency',
  54: 'amount',
  58: 'country',
  59: 'merchant name',
  60: 'merchant city',
  62: 'additional data',
  63: 'CRC',
  '26.00': 'GUI',
  '26.01': 'key',
  '26.25': 'location URL',
  '62.05': 'txid',
};

const MANDATORY = '00 26 26.00 52 53 58 59 60 62 62.05'.split(' ');

// Checked only when present (MANDATORY covers presence): a string is the exact value required,
// a RegExp comes with what to say when it fails. A table keeps the rules in one place and the
// bundle small.
const RULES: [string, string | RegExp, string?][] = [
  ['00', '01'],
  ['01', /^1[12]$/, 'must be 11 or 12'],
  ['26.00', /^br\.gov\.bcb\.pix$/i, 'must be ' + GUI],
  ['52', '0000'],
  ['53', '986'],
  // At most two decimals: BRL has centavos only, and '1.234' would be ambiguous to a reader.
  ['54', /^(?=.{1,13}$)(?=.*[1-9])\d+(\.\d\d?)?$/, 'must be a non-zero amount like 10.50'],
  ['58', 'BR'],
  ['59', /^[^]{1,25}$/u, 'is longer than 25 characters'],
  ['60', /^[^]{1,15}$/u, 'is longer than 15 characters'],
  ['62.05', /^(\*\*\*|[A-Za-z\d]{1,25})$/, 'must be *** or 1-25 letters and digits'],
];

const label = (id: string): string => `field ${id}${NAMES[id] ? ` (${NAMES[id]})` : ''}`;

// LEN counts code points, not UTF-16 units or bytes.
const size = (s: string): number => [...s].length;

function crcOf(bytes: ArrayLike<number>): string {
  let c = 0xffff;
  for (let i = 0; i < bytes.length; i++) {
    c ^= bytes[i]! << 8;
    for (let k = 0; k < 8; k++) c = ((c << 1) ^ (c & 0x8000 ? 0x1021 : 0)) & 0xffff;
  }
  return c.toString(16).toUpperCase().padStart(4, '0');
}

/** CRC-16/CCITT-FALSE of the UTF-8 bytes of text, as 4 upper-case hex digits. */
export const crc16 = (text: string): string => crcOf(new TextEncoder().encode(text));

// Failures are thrown as tuples so the validation below reads as a flat list of rules; the
// curried helpers keep each error code string in the bundle once.
type Failure = [BrCodeErrorCode, string];
const failWith =
  (error: BrCodeErrorCode) =>
  (message: string): never => {
    throw [error, message] satisfies Failure;
  };
const malformed = failWith('malformed_field');
const missing = failWith('missing_field');
const bad = (id: string, why: string): never => failWith('invalid_field')(`${label(id)} ${why}`);

// Adds a TLV sequence's fields to map; nested ids get their template's prefix ('26.01') so one
// map holds every level.
function fields(text: string, map: Map<string, string>, prefix = ''): Map<string, string> {
  const cps = [...text];
  for (let i = 0; i < cps.length; ) {
    const head = cps.slice(i, i + 4).join('');
    const id = prefix + head.slice(0, 2);
    const end = i + 4 + +head.slice(2);
    if (!/^\d{4}$/.test(head)) malformed(`${prefix ? label(prefix.slice(0, 2)) : 'the code'} is malformed at character ${i + 1}`);
    if (end == i + 4 || end > cps.length) malformed(`${label(id)} has length 00 or runs past the end`);
    if (map.has(id)) malformed(`${label(id)} appears twice`);
    map.set(id, cps.slice(i + 4, end).join(''));
    i = end;
  }
  return map;
}

/** Validates a BR Code against the Pix rules and extracts its fields. */
export function parseBrCode(text: string): BrCodeResult {
  try {
    if (!text) failWith('empty')('the code is empty');
    if (size(text) > 512) failWith('too_long')('the code is longer than 512 characters');
    const f = fields(text, new Map());
    const ids = [...f.keys()];
    const need = (id: string): string => f.get(id) ?? missing(label(id) + ' is missing');

    if (ids[0] != '00') missing(label('00') + ' must come first');
    if (ids.at(-1) != '63') missing(label('63') + ' must come last');
    const crc = need('63').toUpperCase();
    if (!/^[\dA-F]{4}$/.test(crc)) bad('63', 'must be 4 hex digits');
    // 63 is last and its value is 4 ASCII chars, so the CRC covers all but those 4.
    const body = text.slice(0, -4);
    if (crc != crc16(body)) {
      // Some banks hash Latin-1 bytes; still invalid, but saying so eases debugging.
      const cps = [...body].map((c) => c.codePointAt(0)!);
      const latin1 = cps.every((c) => c < 256) && crcOf(cps) == crc;
      failWith('bad_crc')(label('63') + ' does not match' + (latin1 ? ' UTF-8, only Latin-1' : ''));
    }

    fields(need('26'), f, '26.');
    fields(need('62'), f, '62.');
    MANDATORY.forEach((id) => need(id));
    for (const [id, rule, why] of RULES) {
      const v = f.get(id);
      if (v && (typeof rule == 'string' ? v != rule : !rule.test(v))) bad(id, why ?? 'must be ' + rule);
    }
    const key = f.get('26.01');
    const locationUrl = f.get('26.25');
    const txid = f.get('62.05')!;
    // No 77/73-character checks on key, URL and description: template LEN <= 99 minus the
    // 18-char GUI subfield already caps them.
    if (key && locationUrl) bad('26', 'has both a key (01) and a location URL (25)');
    if (!key && !locationUrl) missing(label('26') + ' has neither a key (01) nor a location URL (25)');
    if (locationUrl && txid != '***') bad('62.05', 'must be *** in a dynamic code');

    const poi = f.get('01');
    return {
      ok: true,
      code: {
        dynamic: !!locationUrl,
        pointOfInitiation: poi ? (poi == '12' ? 'dynamic' : 'static') : undefined,
        key,
        description: f.get('26.02'),
        locationUrl,
        amount: f.get('54'),
        merchantName: f.get('59')!,
        merchantCity: f.get('60')!,
        postalCode: f.get('61'),
        txid,
        crc,
      },
    };
  } catch (e) {
    if (!Array.isArray(e)) throw e;
    const [error, message] = e as Failure;
    return { ok: false, error, message };
  }
}

/** Formats reais with exactly two decimals ('10.50'), free of float artifacts and exponents. */
export function formatAmount(value: number): string {
  // toPrecision(15) first absorbs binary noise such as 1.005 * 100 = 100.49999999999999.
  const cents = Math.round(Number((value * 100).toPrecision(15)));
  if (!Number.isFinite(value) || value < 0 || !Number.isSafeInteger(cents)) {
    throw new RangeError('bad amount ' + value);
  }
  const s = String(cents).padStart(3, '0');
  return s.slice(0, -2) + '.' + s.slice(-2);
}

const tlv = (id: string, value: string): string => id + String(size(value)).padStart(2, '0') + value;

// Strict payer apps reject accents and symbols such as '&' in names and cities, so keep [A-Z0-9 ].
function clean(value: string, max: number, what: string): string {
  const s = value
    .normalize('NFD')
    .replace(/[\u0300-\u036f]/g, '')
    .toUpperCase()
    .replace(/[^A-Z0-9 ]+/g, ' ')
    .replace(/ +/g, ' ')
    .trim()
    .slice(0, max)
    .trim();
  if (!s) throw new RangeError('empty ' + what);
  return s;
}

/** Builds a single-use dynamic BR Code pointing at locationUrl; throws RangeError on bad input. */
export function buildDynamicBrCode(input: DynamicBrCodeInput): string {
  const { locationUrl, amount } = input;
  if (!/^[\x21-\x7e]{1,77}$/.test(locationUrl) || /^[a-z][a-z\d+.-]*:\/\//i.test(locationUrl)) {
    throw new RangeError('locationUrl must be 1-77 ASCII characters, no scheme');
  }
  let amountField = '';
  if (amount !== undefined) {
    const a = formatAmount(amount);
    // '0.00' also catches positive amounts below half a centavo.
    if (a == '0.00' || a.length > 13) throw new RangeError('bad amount ' + amount);
    amountField = tlv('54', a);
  }
  const body =
    '000201010212' +
    tlv('26', tlv('00', GUI) + tlv('25', locationUrl)) +
    '52040000' +
    '5303986' +
    amountField +
    '5802BR' +
    tlv('59', clean(input.merchantName, 25, 'merchantName')) +
    tlv('60', clean(input.merchantCity, 15, 'merchantCity')) +
    '62070503***' +
    '6304';
  return body + crc16(body);
}
