/**
 * Reading the partner service's answers tolerantly. The spec names few response fields ("not shown"
 * for the rest), so each reader looks for the one value it needs in every plausible place and form
 * (`data.x` or `x`, nested under the object the spec nests it in, snake or camel case, a number or a
 * numeric string, a timestamp with or without fraction and zone) and ignores everything else. What
 * it could not find is `null`; only the caller decides whether it needed it.
 *
 * Every reader also says where it found each value (`found`), so `pix-checkout doctor` can print
 * how the real service differs from what ASSUMPTIONS.md guessed, and `shape()` describes an answer
 * with its values redacted.
 *
 * Requests are never made tolerant: they follow the spec to the letter (wire.ts).
 */
import { LIMITS } from '../../src/shared/limits.ts';
import { PIX_KEY_TYPES, type PixKeyType } from '../../src/shared/pix-keys.ts';
import { redact } from './errors.ts';

/** Where each value was found (`data.access_token`), or null when it was not. */
export type Found = Record<string, string | null>;

type Json = unknown;

export const isObject = (value: Json): value is Record<string, Json> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** The value at a dotted path (`data.pix_deposit.pix_key`; `''` is the whole); a numeric segment indexes an array. */
export function at(json: Json, path: string): Json {
  if (path === '') return json;
  let node = json;
  for (const key of path.split('.')) {
    if (Array.isArray(node) && /^\d+$/.test(key)) node = node[Number(key)];
    else if (isObject(node) && Object.hasOwn(node, key)) node = node[key];
    else return undefined;
  }
  return node;
}

/** The first path whose value `accept` takes, with the value it made of it. */
function first<T>(json: Json, paths: readonly string[], accept: (value: Json) => T | null): { value: T; at: string } | null {
  for (const path of paths) {
    const raw = at(json, path);
    if (raw === undefined || raw === null) continue;
    const value = accept(raw);
    if (value !== null) return { value, at: path };
  }
  return null;
}

/**
 * The record a value was found in, as a path prefix (`data.` for `data.external_reference`), so the
 * record's own status is read, never an envelope's (`{"status": "success", "data": {...}}`). A
 * payment's `pix_deposit` (or `pixDeposit`, `pix`) is part of its record, not the record.
 */
function recordOf(path: string | undefined): string {
  const parts = (path ?? '').split('.').slice(0, -1);
  if (parts.length > 0 && ['pix_deposit', 'pixDeposit', 'pix'].includes(parts.at(-1)!)) parts.pop();
  return parts.length > 0 ? `${parts.join('.')}.` : '';
}

/**
 * `name` inside a record when no reference said which: under `data` or `result` only, never at the
 * top, where an envelope keeps its own `status` (`{"status": 1, "data": null}` is a success flag).
 */
function inRecord(...names: string[]): string[] {
  return ['data.', 'data.data.', 'result.'].flatMap((prefix) => names.map((name) => prefix + name));
}

/** `name`, under the envelopes an answer may use: `data`, `data.data`, `result`, or none. */
function enveloped(...names: string[]): string[] {
  return ['data.', '', 'data.data.', 'result.', 'data.0.'].flatMap((prefix) => names.map((name) => prefix + name));
}

const text = (value: Json): string | null => (typeof value === 'string' && value.trim() !== '' ? value : null);

/** A number, or a string that is one (`"10.50"`, `" 3 "`). */
export function readNumber(value: Json): number | null {
  if (typeof value === 'number') return Number.isFinite(value) ? value : null;
  if (typeof value === 'string' && /^\s*-?\d+(\.\d+)?\s*$/.test(value)) return Number(value);
  return null;
}

const integer = (value: Json): number | null => {
  const n = readNumber(value);
  return n !== null && Number.isInteger(n) ? n : null;
};

const ISO = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?\s*(Z|[+-]\d{2}(?::?\d{2})?)?$/i;

/** Times outside 2000..2100 are no times of this service: a unit mistaken, or garbage. */
const SANE_TIME = { min: Date.UTC(2000, 0, 1), max: Date.UTC(2100, 0, 1) };
const sane = (ms: number): number | null => (Number.isFinite(ms) && ms >= SANE_TIME.min && ms < SANE_TIME.max ? ms : null);

/**
 * Epoch milliseconds of a timestamp: ISO 8601 with or without seconds, fraction (to nanoseconds) and
 * zone (`Z`, `-03:00`, `-0300`, `-03`; none is read as UTC, as the spec's timestamps are), or epoch
 * seconds or milliseconds as a number. Null when it is none of these, or not between 2000 and 2100
 * (so a duration, nanoseconds or garbage never becomes a date that breaks a view).
 */
export function parsePartnerTime(value: Json): number | null {
  if (typeof value === 'number' || (typeof value === 'string' && /^\s*\d{9,}(\.\d+)?\s*$/.test(value))) {
    const n = Number(value);
    if (!Number.isFinite(n) || n <= 0) return null;
    return sane(n >= 1e12 ? Math.round(n) : Math.round(n * 1000));
  }
  if (typeof value !== 'string') return null;
  const m = ISO.exec(value.trim());
  if (!m) return null;
  const [, y, mo, d, h, mi, s, frac, zone] = m;
  const ms = Date.UTC(+y!, +mo! - 1, +d!, +h!, +mi!, s ? +s : 0, frac ? Math.floor(Number(`0.${frac}`) * 1000) : 0);
  if (!Number.isFinite(ms) || +mo! < 1 || +mo! > 12 || +d! < 1 || +d! > 31 || +h! > 23 || +mi! > 59 || (s !== undefined && +s > 60)) return null;
  if (!zone || zone.toUpperCase() === 'Z') return sane(ms);
  const sign = zone.startsWith('-') ? -1 : 1;
  const digits = zone.slice(1).replace(':', '');
  const offset = (Number(digits.slice(0, 2)) * 60 + Number(digits.slice(2) || '0')) * 60_000;
  return sane(ms - sign * offset);
}

const time = (value: Json): number | null => parsePartnerTime(value);

/**
 * A transaction's status as the service gave it: a code (its meaning is configuration:
 * domain/status-numbering.ts) or a word, which means what it says.
 */
export interface PartnerStatus {
  code: number | null;
  word: string | null;
}

const status = (value: Json, depth = 0): PartnerStatus | null => {
  const code = integer(value);
  if (code !== null) return { code, word: null };
  if (typeof value === 'string' && /^[A-Za-z][\w .-]{0,40}$/.test(value.trim())) return { code: null, word: value.trim().toLowerCase() };
  // `{status: {code: 2, name: "paid"}}`, one level deep: no deeper (an answer nested 20,000 times is no status).
  if (isObject(value) && depth === 0) return status(value.code ?? value.id ?? value.name ?? value.value, 1);
  return null;
};

/** The login's answer: the token, and when it expires (the spec's 5 years when not said). */
export interface LoginAnswer {
  token: string;
  expiresAt: number;
  found: Found;
}

export function readLogin(json: Json, now: number): LoginAnswer | null {
  const token = first(json, enveloped('access_token', 'token', 'accessToken', 'jwt', 'bearer_token'), (v) =>
    typeof v === 'string' && /^[\x21-\x7e]+$/.test(v) ? v : null,
  );
  if (!token) return null;
  const expiresAt = first(json, enveloped('expires_at', 'expiresAt', 'expiration', 'valid_until'), time);
  // A lifetime in seconds: `expires_in`, or a small number where a time was expected (`expiration: 3600`).
  const seconds = (v: Json) => {
    const n = readNumber(v);
    return n !== null && n > 0 && n < 1e9 ? n : null;
  };
  const expiresIn = expiresAt ? null : first(json, enveloped('expires_in', 'expiresIn', 'expiration', 'expires'), seconds);
  const lifetime = expiresAt?.value ?? (expiresIn ? now + expiresIn.value * 1000 : now + LIMITS.tokenLifetimeSeconds * 1000);
  return { token: token.value, expiresAt: lifetime, found: { token: token.at, lifetime: expiresAt?.at ?? expiresIn?.at ?? null } };
}

export interface TenantAnswer {
  id: string;
  name: string | null;
  found: Found;
}

export function readTenant(json: Json): TenantAnswer | null {
  const id = first(json, [...enveloped('tenant.id', 'tenant_id', 'tenantId', 'id'), 'tenant.id'], (v) =>
    typeof v === 'string' && v.trim() ? v.trim() : typeof v === 'number' ? String(v) : null,
  );
  if (!id) return null;
  const name = first(json, enveloped('tenant.name', 'name', 'tenant_name'), text);
  return { id: id.value, name: name?.value ?? null, found: { id: id.at, name: name?.at ?? null } };
}

/** Where a payment's own fields may be: the record's top, or the `pix_deposit` the spec nests them in. */
const payment = (...names: string[]) => [
  ...enveloped(...names),
  ...enveloped(...names.map((n) => `pix_deposit.${n}`)),
  ...enveloped(...names.map((n) => `pixDeposit.${n}`)),
  ...enveloped(...names.map((n) => `pix.${n}`)),
];

export interface PaymentAnswer {
  externalReference: string | null;
  /** The copy-and-paste code (BR Code). */
  pixKey: string | null;
  qrCodeUrl: string | null;
  checkoutUrl: string | null;
  /** Epoch ms, or null when absent or unreadable. */
  createdAt: number | null;
  status: PartnerStatus | null;
  value: number | null;
  favoured: string | null;
  found: Found;
}

/** A create's answer (4.3) or a payment's details (4.5): the same fields, wherever they are. */
export function readPayment(json: Json): PaymentAnswer {
  // The spec's name first, everywhere it may be; a bare `reference` (which may echo our own id) last.
  const reference = first(json, [...payment('external_reference'), ...payment('externalReference'), ...payment('reference')], text);
  const pixKey = first(json, payment('pix_key', 'pixKey', 'copy_paste', 'emv', 'brcode', 'qr_code'), (v) =>
    typeof v === 'string' && v.startsWith('000201') ? v : null,
  );
  const qr = first(json, payment('qr_code_url', 'qrCodeUrl', 'qr_code_image', 'qrcode_url'), url);
  const checkout = first(json, payment('checkout', 'checkout_url', 'checkoutUrl'), url);
  // The status, value and creation time of the record that holds the reference (else of `data`, or the top).
  const record = reference ? recordOf(reference.at) : null;
  const own = (...names: string[]) => (record !== null ? names.map((n) => record + n) : inRecord(...names));
  const createdAt = first(json, [...own('created_at', 'createdAt'), ...enveloped('created_at', 'createdAt', 'pix_deposit.created_at')], time);
  const state = first(json, own('status', 'state', 'status_code'), status);
  const value = first(json, [...own('value', 'amount'), ...payment('value', 'amount')], readNumber);
  const favoured = first(json, payment('favoured', 'favored'), text);
  return {
    externalReference: reference?.value ?? null,
    pixKey: pixKey?.value ?? null,
    qrCodeUrl: qr?.value ?? null,
    checkoutUrl: checkout?.value ?? null,
    createdAt: createdAt?.value ?? null,
    status: state?.value ?? null,
    value: value?.value ?? null,
    favoured: favoured?.value ?? null,
    found: {
      external_reference: reference?.at ?? null,
      pix_key: pixKey?.at ?? null,
      qr_code_url: qr?.at ?? null,
      checkout: checkout?.at ?? null,
      created_at: createdAt?.at ?? null,
      status: state?.at ?? null,
      value: value?.at ?? null,
    },
  };
}

function url(value: Json): string | null {
  if (typeof value !== 'string') return null;
  try {
    const parsed = new URL(value);
    return parsed.protocol === 'https:' || parsed.protocol === 'http:' || parsed.protocol === 'data:' ? value : null;
  } catch {
    return null;
  }
}

export interface TransferAnswer {
  externalReference: string | null;
  status: PartnerStatus | null;
  value: number | null;
  pixKey: string | null;
  pixKeyType: PixKeyType | null;
  transactionId: string | null;
  end2end: string | null;
  createdAt: number | null;
  updatedAt: number | null;
  /** The record says it is a payment (`type` payment or deposit, or a `pix_deposit`): not a transfer, whatever was asked. */
  isPayment: boolean;
  found: Found;
}

const transfer = (...names: string[]) => [
  ...enveloped(...names),
  ...enveloped(...names.map((n) => `transfer.${n}`)),
  ...enveloped(...names.map((n) => `withdrawal.${n}`)),
];

export function readTransfer(json: Json): TransferAnswer {
  const reference = first(json, [...transfer('external_reference'), ...transfer('externalReference'), ...transfer('reference')], text);
  // Every other field from the record that holds the reference (never an envelope's `status`).
  const record = reference ? recordOf(reference.at) : null;
  const own = (...names: string[]) =>
    record !== null
      ? names.map((n) => record + n)
      : [...inRecord(...names), ...inRecord(...names.map((n) => `transfer.${n}`)), ...inRecord(...names.map((n) => `withdrawal.${n}`))];
  const state = first(json, own('status', 'state', 'status_code'), status);
  const value = first(json, own('value', 'amount'), readNumber);
  const key = first(json, own('pix_key', 'pixKey'), text);
  const keyType = first(json, own('pix_key_type', 'pixKeyType'), (v) => ((PIX_KEY_TYPES as readonly Json[]).includes(v) ? (v as PixKeyType) : null));
  const transactionId = first(json, own('transaction_id', 'transactionId'), text);
  const end2end = first(json, own('end2end', 'end_to_end_id', 'endToEndId', 'e2e_id'), text);
  const createdAt = first(json, own('created_at', 'createdAt'), time);
  const updatedAt = first(json, own('updated_at', 'updatedAt'), time);
  const kind = first(json, own('type', 'kind'), text);
  const isPayment =
    ['payment', 'deposit', 'pix_deposit'].includes(kind?.value.toLowerCase() ?? '') ||
    first(json, own('pix_deposit', 'pixDeposit'), (v) => (isObject(v) ? v : null)) !== null;
  return {
    externalReference: reference?.value ?? null,
    status: state?.value ?? null,
    value: value?.value ?? null,
    pixKey: key?.value ?? null,
    pixKeyType: keyType?.value ?? null,
    transactionId: transactionId?.value ?? null,
    end2end: end2end?.value ?? null,
    createdAt: createdAt?.value ?? null,
    updatedAt: updatedAt?.value ?? null,
    isPayment,
    found: { external_reference: reference?.at ?? null, status: state?.at ?? null, value: value?.at ?? null },
  };
}

export interface NotificationUrlAnswer {
  /** What the service says it registered, or null when its answer does not say. */
  notificationUrl: string | null;
  notifyType: number | null;
  found: Found;
}

export function readNotificationUrl(json: Json): NotificationUrlAnswer {
  const target = first(json, enveloped('notification_url', 'notificationUrl', 'url'), text);
  const type = first(json, enveloped('notify_type', 'notifyType', 'type'), integer);
  return {
    notificationUrl: target?.value ?? null,
    notifyType: type?.value ?? null,
    found: { notification_url: target?.at ?? null, notify_type: type?.at ?? null },
  };
}

export interface ErrorAnswer {
  /** The service's words, redacted (it may echo a document it was sent). */
  message: string | null;
  fields: Record<string, string> | undefined;
  /** A machine-readable reason (`kyc_not_approved`), when it gave one. */
  reason: string | null;
}

const REASON = /^[a-z][a-z0-9_.-]{1,60}$/i;

/**
 * Any error body, of any shape: `message`, `error` (a string or an object), `errors` (an object of
 * strings or lists, a list of strings or of `{field, message}`), `fields`, `detail`, `title`,
 * `reason`/`code`; or plain text. The words are redacted; nothing here is required.
 */
export function readError(body: string): ErrorAnswer {
  let json: Json;
  try {
    json = body.trim() ? JSON.parse(body) : undefined;
  } catch {
    const plain = body.trim().replace(/\s+/g, ' ');
    // An HTML error page says nothing useful; a short plain text may.
    return { message: plain && !plain.startsWith('<') ? redact(plain.slice(0, 200)) : null, fields: undefined, reason: null };
  }
  const fields: Record<string, string> = {};
  const addFields = (value: Json) => {
    if (isObject(value)) {
      for (const [field, problem] of Object.entries(value)) {
        const words = wordsOf(problem);
        if (words) fields[field] = redact(words);
      }
    } else if (Array.isArray(value)) {
      for (const item of value) {
        if (isObject(item)) {
          const field = text(item.field) ?? text(item.path) ?? text(item.param) ?? text(item.name) ?? text(item.loc);
          const words = wordsOf(item.message ?? item.msg ?? item.detail ?? item.error);
          if (field && words) fields[field] = redact(words);
        }
      }
    }
  };
  const root = isObject(json) ? json : {};
  const error = root.error;
  addFields(root.errors);
  addFields(root.fields);
  if (isObject(error)) {
    addFields(error.fields);
    addFields(error.errors);
  }
  const messageText =
    wordsOf(root.message) ??
    (typeof error === 'string' ? error : isObject(error) ? wordsOf(error.message) : null) ??
    wordsOf(root.detail) ??
    wordsOf(root.title) ??
    wordsOf(root.msg) ??
    (Array.isArray(root.errors) ? wordsOf(root.errors) : null) ??
    (typeof json === 'string' ? json : null);
  const reasonText =
    [root.reason, root.code, isObject(error) ? error.code : undefined, isObject(error) ? error.reason : undefined, root.error_code].find(
      (v): v is string => typeof v === 'string' && REASON.test(v),
    ) ?? null;
  const firstField = Object.entries(fields)[0];
  const message = messageText ?? (firstField ? `${firstField[0]} ${firstField[1]}` : reasonText);
  return {
    message: message ? redact(message.slice(0, 300)) : null,
    fields: Object.keys(fields).length > 0 ? fields : undefined,
    reason: reasonText,
  };
}

/** Readable words from a string, a list of strings, or an object with a message. */
function wordsOf(value: Json): string | null {
  if (typeof value === 'string') return value.trim() || null;
  if (Array.isArray(value)) {
    const parts = value.map(wordsOf).filter((part): part is string => part !== null);
    return parts.length > 0 ? parts.join('; ') : null;
  }
  if (isObject(value)) return wordsOf(value.message ?? value.msg ?? value.detail);
  return null;
}

/**
 * An answer's shape with every value replaced by its type (`{"data": {"token": "string"}}`), for
 * `doctor` to show what the service sent without showing a token or a document.
 */
export function shape(json: Json, depth = 0): Json {
  if (depth > 4) return '…';
  if (Array.isArray(json)) return json.length === 0 ? [] : [shape(json[0], depth + 1)];
  if (isObject(json))
    return Object.fromEntries(
      Object.entries(json)
        .slice(0, 40)
        .map(([k, v]) => [k, shape(v, depth + 1)]),
    );
  if (json === null) return 'null';
  if (typeof json === 'string' && readNumber(json) !== null) return 'numeric string';
  if (typeof json === 'string' && parsePartnerTime(json) !== null) return `timestamp (${timestampForm(json)})`;
  return typeof json;
}

function timestampForm(value: string): string {
  const fraction = /[.,](\d+)/.exec(value)?.[1]?.length ?? 0;
  const zone = /(Z|[+-]\d{2}:?\d{2}|[+-]\d{2})$/i.exec(value.trim())?.[1] ?? 'no zone';
  return `${fraction === 0 ? 'no fraction' : `${fraction} fraction digits`}, ${zone}`;
}

/**
 * A body kept for the operator when it could not be read (a create whose outcome is unknown): at
 * most 2 KiB, documents and secrets masked.
 */
export function redactBody(body: string): string {
  return redact(
    body
      .slice(0, 2048)
      .replace(/("(?:access_?token|accessToken|token|jwt|access_key|document|customer_document|password)"\s*:\s*)"[^"]*"?/gi, '$1"[redacted]"'),
  );
}
