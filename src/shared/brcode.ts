// Pix copy-and-paste code (BR Code, EMV MPM): parse/validate and build.
// Imports nothing on purpose: it ships inside the browser widget, whose size budget is tight.
// Format facts live in shared/spec/brcode.md, beside this repository.

/** Why a payload was refused: a broken structure, a missing or foreign mandatory field, or a CRC that does not hold. */
export type BrCodeErrorCode = 'empty' | 'too_long' | 'malformed_field' | 'missing_field' | 'invalid_field' | 'bad_crc';

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

/** Outcome of parseBrCode; `warnings` are the sentences of checkBrCode's warnings. */
export type BrCodeResult = { ok: true; code: BrCode; warnings: string[] } | { ok: false; error: BrCodeErrorCode; message: string };

/**
 * Outcome of checkBrCode, without sentences (describeBrCodeProblem writes them). ok: false only for
 * what no payer app can pay; `warnings` lists the manual's rules a payable code breaks (empty when none).
 */
export type BrCodeCheck = { ok: true; code: BrCode; warnings: BrCodeProblem[] } | { ok: false; error: BrCodeErrorCode; at: BrCodeProblem };

/**
 * Where and what: the field id (null for the code as a whole), a key of PROBLEMS, and a value for
 * the sentence. Sentences live apart from the checks so the widget, which only needs yes or no,
 * ships none of them.
 */
export type BrCodeProblem = [id: string | null, problem: keyof typeof PROBLEMS, arg?: string | number];

/** Input of buildDynamicBrCode; amount is in reais. */
export interface DynamicBrCodeInput {
  /** The charge's URL without https:// (the scheme is implied by the standard). */
  locationUrl: string;
  merchantName: string;
  merchantCity: string;
  amount?: number;
}

const GUI = 'br.gov.bcb.pix';

const MANDATORY = '00 26 26.00 52 53 58 59 60 62 62.05'.split(' ');

// Checked only when present (MANDATORY covers presence): a field's pattern, and the problem its
// value has when the pattern fails ('rule' by default: the sentence is then RULE_PROBLEMS[id]).
// Tables keep the rules in one place. BLOCKING makes a code a Pix payment in reais: a code that
// breaks one is refused. WARNING holds the manual's rules that codes issued by real banks break and
// payer apps accept (brcode.md: long names, accents, txids with hyphens).
type Rule = [string, RegExp, BrCodeProblem[1]?];
const BLOCKING: Rule[] = [
  ['00', /^01$/],
  ['26.00', /^br\.gov\.bcb\.pix$/i],
  ['53', /^986$/],
  // At most two decimals: BRL has centavos only, and '1.234' would be ambiguous to a reader.
  ['54', /^(?=.{1,13}$)(?=.*[1-9])\d+(\.\d\d?)?$/],
];
const WARNING: Rule[] = [
  ['01', /^1[12]$/],
  ['52', /^0000$/],
  ['58', /^BR$/],
  ['59', /^[^]{1,25}$/u],
  ['60', /^[^]{1,15}$/u],
  // Strict payer apps refuse accents, anything else but printable ASCII, and '&'.
  ['59', /^[ -%'-~]*$/, 'ascii'],
  ['60', /^[ -%'-~]*$/, 'ascii'],
  ['62.05', /^(\*\*\*|[A-Za-z\d]{1,25})$/],
];
/** The rules of `rules` that the fields `f` break, in the table's order. */
const broken = (f: Map<string, string>, rules: Rule[]): BrCodeProblem[] =>
  rules.filter(([id, rule]) => f.has(id) && !rule.test(f.get(id)!)).map(([id, , problem = 'rule']) => [id, problem]);

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

// Failures are thrown as tuples so the validation below reads as a flat list of rules.
type Failure = [BrCodeErrorCode, BrCodeProblem];
const fail = (error: BrCodeErrorCode, id: string | null, problem: BrCodeProblem[1], arg?: string | number): never => {
  // A tuple, not an Error: this module ships in the widget's bundle, where every byte counts.
  // eslint-disable-next-line @typescript-eslint/only-throw-error -- caught and unpacked in checkBrCode alone
  throw [error, [id, problem, arg]] satisfies Failure;
};

// Adds a TLV sequence's fields to map; nested ids get their template's prefix ('26.01') so one
// map holds every level.
function fields(text: string, map: Map<string, string>, prefix = ''): Map<string, string> {
  const cps = [...text];
  for (let i = 0; i < cps.length;) {
    const head = cps.slice(i, i + 4).join('');
    const id = prefix + head.slice(0, 2);
    const end = i + 4 + +head.slice(2);
    if (!/^\d{4}$/.test(head)) fail('malformed_field', prefix ? prefix.slice(0, 2) : null, 'at', i + 1);
    if (end == i + 4 || end > cps.length) fail('malformed_field', id, 'length');
    if (map.has(id)) fail('malformed_field', id, 'twice');
    map.set(id, cps.slice(i + 4, end).join(''));
    i = end;
  }
  return map;
}

/** A BR Code that passed readBrCode: its fields by id, nested ones as 'template.sub' ('26.01'). */
export type BrCodeFields = Map<string, string>;

/**
 * Whether a payer app can pay a BR Code, and its fields: what the widget needs before it draws a
 * code (checkBrCode adds the warnings and names the fields). Refuses (ok: false) only what no payer
 * app can pay: a broken TLV structure, a missing mandatory field or one that makes it no Pix payment
 * in reais, a CRC that does not hold over the UTF-8 bytes. Says what failed as data, without sentences.
 */
export function readBrCode(text: string): { ok: true; fields: BrCodeFields } | { ok: false; error: BrCodeErrorCode; at: BrCodeProblem } {
  try {
    if (!text) fail('empty', null, 'empty');
    if (size(text) > 512) fail('too_long', null, 'long');
    const f = fields(text, new Map());
    const ids = [...f.keys()];
    const need = (id: string): string => f.get(id) ?? fail('missing_field', id, 'missing');

    if (ids[0] != '00') fail('missing_field', '00', 'first');
    if (ids.at(-1) != '63') fail('missing_field', '63', 'last');
    const crc = need('63').toUpperCase();
    if (!/^[\dA-F]{4}$/.test(crc)) fail('invalid_field', '63', 'hex');
    // 63 is last and its value is 4 ASCII chars, so the CRC covers all but those 4.
    const body = text.slice(0, -4);
    if (crc != crc16(body)) fail('bad_crc', '63', 'crc');

    fields(need('26'), f, '26.');
    fields(need('62'), f, '62.');
    MANDATORY.forEach(need);
    const [refused] = broken(f, BLOCKING);
    if (refused) fail('invalid_field', ...refused);
    // No 77/73-character checks on key, URL and description: template LEN <= 99 minus the
    // 18-char GUI subfield already caps them.
    // Both: which account is paid would be a guess, so that is refused.
    if (f.has('26.01') && f.has('26.25')) fail('invalid_field', '26', 'both');
    if (!f.has('26.01') && !f.has('26.25')) fail('missing_field', '26', 'neither');
    return { ok: true, fields: f };
  } catch (e) {
    if (!Array.isArray(e)) throw e;
    const [error, at] = e as Failure;
    return { ok: false, error, at };
  }
}

/**
 * Checks a BR Code as the widget does before drawing it (readBrCode) and extracts its fields. Rules
 * of the manual that real banks' codes break come back as `warnings` of an ok result.
 */
export function checkBrCode(text: string): BrCodeCheck {
  const read = readBrCode(text);
  if (!read.ok) {
    // Some banks hash Latin-1 bytes; still invalid, but saying so eases debugging. Here, not in
    // readBrCode: the widget draws or refuses, and needs no reason.
    const cps = [...text.slice(0, -4)].map((c) => c.codePointAt(0)!);
    if (read.error == 'bad_crc' && cps.every((c) => c < 256) && crcOf(cps) == text.slice(-4).toUpperCase()) read.at[1] = 'latin1';
    return read;
  }
  const f = read.fields;
  const locationUrl = f.get('26.25');
  const txid = f.get('62.05')!;
  const warnings = broken(f, WARNING);
  if (locationUrl && txid != '***') warnings.push(['62.05', 'dynamic']);
  const poi = f.get('01');
  return {
    ok: true,
    code: {
      dynamic: !!locationUrl,
      pointOfInitiation: poi ? (poi == '12' ? 'dynamic' : 'static') : undefined,
      key: f.get('26.01'),
      description: f.get('26.02'),
      locationUrl,
      amount: f.get('54'),
      merchantName: f.get('59')!,
      merchantCity: f.get('60')!,
      postalCode: f.get('61'),
      txid,
      crc: f.get('63')!.toUpperCase(),
    },
    warnings,
  };
}

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

/** The sentence of each problem; `#` stands for the problem's value. */
const PROBLEMS = {
  empty: 'is empty',
  long: 'is longer than 512 characters',
  at: 'is malformed at character #',
  length: 'has length 00 or runs past the end',
  twice: 'appears twice',
  missing: 'is missing',
  first: 'must come first',
  last: 'must come last',
  hex: 'must be 4 hex digits',
  crc: 'does not match',
  latin1: 'does not match UTF-8, only Latin-1',
  rule: 'breaks a rule of the manual',
  both: 'has both a key (01) and a location URL (25)',
  neither: 'has neither a key (01) nor a location URL (25)',
  dynamic: 'must be *** in a dynamic code',
  ascii: 'has characters strict payer apps refuse (accents, other non-ASCII, &)',
} as const;

// What a failed 'rule' of RULES says, by field.
const RULE_PROBLEMS: Record<string, string> = {
  '00': 'must be 01',
  '01': 'must be 11 or 12',
  '26.00': 'must be ' + GUI,
  52: 'must be 0000',
  53: 'must be 986',
  54: 'must be a non-zero amount like 10.50',
  58: 'must be BR',
  59: 'is longer than 25 characters',
  60: 'is longer than 15 characters',
  '62.05': 'must be *** or 1-25 letters and digits',
};

/** The English sentence for a problem (an error or a warning) found by checkBrCode, naming the field. */
export function describeBrCodeProblem([id, problem, arg]: BrCodeProblem): string {
  const subject = id === null ? 'the code' : `field ${id}${NAMES[id] ? ` (${NAMES[id]})` : ''}`;
  const sentence = (problem === 'rule' && id !== null && RULE_PROBLEMS[id]) || PROBLEMS[problem].replace('#', String(arg));
  return `${subject} ${sentence}`;
}

/** checkBrCode, with its error or warnings written as English sentences. */
export function parseBrCode(text: string): BrCodeResult {
  const result = checkBrCode(text);
  return result.ok
    ? { ok: true, code: result.code, warnings: result.warnings.map(describeBrCodeProblem) }
    : { ok: false, error: result.error, message: describeBrCodeProblem(result.at) };
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
