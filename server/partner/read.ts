/**
 * Reading the partner service's answers tolerantly. The spec names few response fields ("not shown"
 * for the rest), so each reader looks for the one value it needs in every plausible place and form
 * (`data.x` or `x`, nested under the object the spec nests it in, snake or camel case, a number or a
 * numeric string, a timestamp with or without fraction and zone) and ignores everything else. What
 * it could not find is `null`; only the caller decides whether it needed it.
 *
 * Every reader also says where it found each value (`found`), so `pix-checkout doctor` can print
 * how the real service differs from what ASSUMPTIONS.md guessed, and `shape()` describes an answer
 * with its values redacted. The field readers all of them share are in read-fields.ts; error answers,
 * `shape()` and the redaction of a kept body in read-errors.ts.
 *
 * Requests are never made tolerant: they follow the spec to the letter (wire.ts).
 */
import { LIMITS } from '../../src/shared/limits.ts';
import { PIX_KEY_TYPES, type PixKeyType } from '../../src/shared/pix-keys.ts';
import {
  enveloped,
  first,
  inRecord,
  integer,
  isObject,
  readNumber,
  recordOf,
  status,
  text,
  time,
  url,
  valuesOf,
  type Found,
  type Json,
  type PartnerStatus,
} from './read-fields.ts';

export { parsePartnerTime, type PartnerStatus } from './read-fields.ts';
export { readError, redactBody, shape, type ErrorAnswer } from './read-errors.ts';

/** The login's answer: the token, and when it expires (the spec's 5 years when not said). */
export interface LoginAnswer {
  token: string;
  expiresAt: number;
  found: Found;
}

/** Records a login answer may keep its token in, one level below the envelope. */
const TOKEN_RECORDS = ['token', 'auth', 'authentication', 'credentials', 'session'];

/** A token: printable ASCII without spaces; `Bearer <token>` (its type written before it) is the token. */
function tokenText(value: Json): string | null {
  if (typeof value !== 'string') return null;
  const bare = /^\s*bearer\s+(\S+)\s*$/i.exec(value)?.[1] ?? value;
  return /^[\x21-\x7e]+$/.test(bare) ? bare : null;
}

export function readLogin(json: Json, now: number): LoginAnswer | null {
  // At data or the top (an OAuth answer: `{access_token, token_type, expires_in}`), or one level
  // deeper, in a token record (`{"data": {"token": {"access_token": ...}}}`).
  const names = ['access_token', 'token', 'accessToken', 'jwt', 'bearer_token'];
  const token = first(json, [...enveloped(...names), ...enveloped(...TOKEN_RECORDS.flatMap((record) => names.map((name) => `${record}.${name}`)))], tokenText);
  if (!token) return null;
  // The lifetime beside the token first (its record's), then at the usual places.
  const record = recordOf(token.at);
  const near = (...fields: string[]) => [...fields.map((f) => record + f), ...enveloped(...fields)];
  const expiresAt = first(json, near('expires_at', 'expiresAt', 'expiration', 'valid_until'), time);
  // A lifetime in seconds: `expires_in`, or a small number where a time was expected (`expiration: 3600`).
  const seconds = (v: Json) => {
    const n = readNumber(v);
    return n !== null && n > 0 && n < 1e9 ? n : null;
  };
  const expiresIn = expiresAt ? null : first(json, near('expires_in', 'expiresIn', 'expiration', 'expires'), seconds);
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
    ...valuesOf({ externalReference: reference, pixKey, qrCodeUrl: qr, checkoutUrl: checkout, createdAt, status: state, value, favoured }),
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
    ...valuesOf({ externalReference: reference, status: state, value, pixKey: key, pixKeyType: keyType, transactionId, end2end, createdAt, updatedAt }),
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
