/**
 * The field readers every tolerant reader of the partner's answers shares (read.ts,
 * read-errors.ts, notification.ts): a value at a dotted path, the first of several places that holds
 * a usable one, the envelopes and records an answer may nest it in, and the forms a text, a number,
 * a time, a URL or a status may take. Each returns null for what it cannot read.
 */

/** Where each value was found (`data.access_token`), or null when it was not. */
export type Found = Record<string, string | null>;

export type Json = unknown;

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
export function first<T>(json: Json, paths: readonly string[], accept: (value: Json) => T | null): Read<T> {
  for (const path of paths) {
    const raw = at(json, path);
    if (raw === undefined || raw === null) continue;
    const value = accept(raw);
    if (value !== null) return { value, at: path };
  }
  return null;
}

/** What `first` found: the value and its path, or null. */
export type Read<T> = { value: T; at: string } | null;

/** The value of each read, null for what was not found (the one form every reader answers in). */
export function valuesOf<R extends Record<string, Read<unknown>>>(reads: R): { [K in keyof R]: NonNullable<R[K]>['value'] | null } {
  return Object.fromEntries(Object.entries(reads).map(([name, read]) => [name, read?.value ?? null])) as {
    [K in keyof R]: NonNullable<R[K]>['value'] | null;
  };
}

/**
 * The record a value was found in, as a path prefix (`data.` for `data.external_reference`), so the
 * record's own status is read, never an envelope's (`{"status": "success", "data": {...}}`). A
 * payment's `pix_deposit` (or `pixDeposit`, `pix`) is part of its record, not the record.
 */
export function recordOf(path: string | undefined): string {
  const parts = (path ?? '').split('.').slice(0, -1);
  if (parts.length > 0 && ['pix_deposit', 'pixDeposit', 'pix'].includes(parts.at(-1)!)) parts.pop();
  return parts.length > 0 ? `${parts.join('.')}.` : '';
}

/**
 * `name` inside a record when no reference said which: under `data` or `result` only, never at the
 * top, where an envelope keeps its own `status` (`{"status": 1, "data": null}` is a success flag).
 */
export function inRecord(...names: string[]): string[] {
  return ['data.', 'data.data.', 'result.'].flatMap((prefix) => names.map((name) => prefix + name));
}

/** `name`, under the envelopes an answer may use: `data`, `data.data`, `result`, or none. */
export function enveloped(...names: string[]): string[] {
  return ['data.', '', 'data.data.', 'result.', 'data.0.'].flatMap((prefix) => names.map((name) => prefix + name));
}

export const text = (value: Json): string | null => (typeof value === 'string' && value.trim() !== '' ? value : null);

/** A number, or a string that is one (`"10.50"`, `" 3 "`). */
export function readNumber(value: Json): number | null {
  if (typeof value === 'number') return Number.isFinite(value) ? value : null;
  if (typeof value === 'string' && /^\s*-?\d+(\.\d+)?\s*$/.test(value)) return Number(value);
  return null;
}

export const integer = (value: Json): number | null => {
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

export const time = (value: Json): number | null => parsePartnerTime(value);

/**
 * A transaction's status as the service gave it: a code (its meaning is configuration:
 * domain/numbering/status-numbering.ts) or a word, which means what it says.
 */
export interface PartnerStatus {
  code: number | null;
  word: string | null;
}

export const status = (value: Json, depth = 0): PartnerStatus | null => {
  const code = integer(value);
  if (code !== null) return { code, word: null };
  if (typeof value === 'string' && /^[A-Za-z][\w .-]{0,40}$/.test(value.trim())) return { code: null, word: value.trim().toLowerCase() };
  // `{status: {code: 2, name: "paid"}}`, one level deep: no deeper (an answer nested 20,000 times is no status).
  if (isObject(value) && depth === 0) return status(value.code ?? value.id ?? value.name ?? value.value, 1);
  return null;
};

export function url(value: Json): string | null {
  if (typeof value !== 'string') return null;
  try {
    const parsed = new URL(value);
    return parsed.protocol === 'https:' || parsed.protocol === 'http:' || parsed.protocol === 'data:' ? value : null;
  } catch {
    return null;
  }
}
