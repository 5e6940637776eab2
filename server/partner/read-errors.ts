/**
 * Reading the partner's error answers (any shape, or plain text), and what is shown of an answer
 * when it is not read: its shape with every value replaced by its type (doctor), or its body
 * redacted (an unknown outcome, for the operator).
 */
import { redact } from './errors.ts';
import { isObject, parsePartnerTime, readNumber, text, type Json } from './read-fields.ts';

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
