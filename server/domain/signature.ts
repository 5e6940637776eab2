/**
 * Signing the proxy's webhooks to the merchant, and checking them on the merchant's side.
 *
 * Standard Webhooks (https://www.standardwebhooks.com), what every delivery carries:
 *
 *   webhook-id: <the event's id>
 *   webhook-timestamp: <unix seconds>
 *   webhook-signature: v1,<base64 HMAC-SHA256(key, `${id}.${timestamp}.${rawBody}`)> [v1,<...> ...]
 *
 * The key of a `whsec_<base64>` secret is its base64-decoded bytes (as the specification defines it);
 * the key of any other secret is its UTF-8 bytes (the reference libraries' "raw" format). Several
 * secrets may be configured at once (rotation): each signs, one `v1,` signature each, and a receiver
 * accepts the delivery when any one matches a secret it knows.
 *
 * Deprecated, kept for receivers written before (until the next minor version):
 *
 *   Pix-Checkout-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret as text, `${t}.${rawBody}`)>[,v1=...]
 *   Pix-Checkout-Event-Id: <the event's id>
 *
 * The timestamp is inside what is signed, so an old delivery cannot be replayed later than the
 * tolerance. Verify on the raw body, byte for byte, before parsing it. Needs nothing but node:crypto.
 */
// A new webhook secret is key material: the operating system's randomness, never a runtime's.
// eslint-disable-next-line no-restricted-imports
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { REAL_CLOCK } from '../runtime/runtime.ts';

/** @deprecated Kept for receivers written before Standard Webhooks; use STANDARD_WEBHOOK_HEADERS. */
export const SIGNATURE_HEADER = 'Pix-Checkout-Signature';
/** @deprecated The same value as `webhook-id`. */
export const EVENT_ID_HEADER = 'Pix-Checkout-Event-Id';

/** The three headers of Standard Webhooks, lower case as HTTP/2 sends them. */
export const STANDARD_WEBHOOK_HEADERS = { id: 'webhook-id', timestamp: 'webhook-timestamp', signature: 'webhook-signature' } as const;

/** The prefix of a Standard Webhooks secret; its key is the base64 text after it. */
export const WEBHOOK_SECRET_PREFIX = 'whsec_';

/** The default tolerance between the signature's timestamp and the receiver's clock. */
export const DEFAULT_TOLERANCE_SECONDS = 300;

/** The key bytes of a `whsec_` secret, as Standard Webhooks recommends: 24 to 64. */
const WHSEC_KEY_BYTES = { min: 24, max: 64 } as const;

/** Request headers as node:http gives them (any case, arrays for repeats) or as a fetch Headers. */
export type WebhookHeaders = Headers | Record<string, string | string[] | undefined>;

/** One secret, or several (rotation: each signs; any verifies). A string with spaces is several. */
export type WebhookSecrets = string | readonly string[];

/** The secrets of a setting: split on whitespace (a `whsec_` secret never holds any), empty parts dropped. */
export function webhookSecrets(secrets: WebhookSecrets): string[] {
  const list = typeof secrets === 'string' ? [secrets] : [...secrets];
  return list.flatMap((s) => s.split(/\s+/)).filter((s) => s !== '');
}

/** What is wrong with a `whsec_` secret (not base64, too short or long), or null; any other text is a raw key. */
export function webhookSecretProblem(secret: string): string | null {
  if (!secret.startsWith(WEBHOOK_SECRET_PREFIX)) return null;
  const text = secret.slice(WEBHOOK_SECRET_PREFIX.length);
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(text) || text.length % 4 !== 0) return 'a whsec_ secret must be whsec_ and base64 (A-Z a-z 0-9 + /, = padding)';
  const bytes = Buffer.from(text, 'base64').length;
  if (bytes < WHSEC_KEY_BYTES.min || bytes > WHSEC_KEY_BYTES.max) {
    return `a whsec_ secret's key must be ${WHSEC_KEY_BYTES.min} to ${WHSEC_KEY_BYTES.max} bytes (it is ${bytes})`;
  }
  return null;
}

/** The HMAC key of a secret: a `whsec_` secret's base64-decoded bytes, any other secret's UTF-8 bytes. */
export function webhookKey(secret: string): Buffer {
  return secret.startsWith(WEBHOOK_SECRET_PREFIX) ? Buffer.from(secret.slice(WEBHOOK_SECRET_PREFIX.length), 'base64') : Buffer.from(secret, 'utf8');
}

/** A new Standard Webhooks secret: `whsec_` and 32 random bytes in base64. */
export function generateWebhookSecret(): string {
  return `${WEBHOOK_SECRET_PREFIX}${randomBytes(32).toString('base64')}`;
}

const asText = (rawBody: string | Buffer) => (Buffer.isBuffer(rawBody) ? rawBody.toString('utf8') : rawBody);

function standardSignature(secret: string, id: string, timestamp: number, rawBody: string): string {
  return createHmac('sha256', webhookKey(secret)).update(`${id}.${timestamp}.${rawBody}`).digest('base64');
}

function legacyHmac(secret: string, timestamp: number, rawBody: string): string {
  return createHmac('sha256', secret).update(`${timestamp}.${rawBody}`).digest('hex');
}

/**
 * Every header of one delivery of `rawBody` with event id `id`, sent at `nowMs` (wall clock): the
 * three standard ones, signed with each secret, and the deprecated pair.
 */
export function webhookHeaders(id: string, rawBody: string, secrets: WebhookSecrets, nowMs: number = REAL_CLOCK.now()): Record<string, string> {
  const list = webhookSecrets(secrets);
  if (list.length === 0) throw new TypeError('webhookHeaders: at least one secret is needed');
  const timestamp = Math.floor(nowMs / 1000);
  return {
    [STANDARD_WEBHOOK_HEADERS.id]: id,
    [STANDARD_WEBHOOK_HEADERS.timestamp]: String(timestamp),
    [STANDARD_WEBHOOK_HEADERS.signature]: list.map((s) => `v1,${standardSignature(s, id, timestamp, rawBody)}`).join(' '),
    [EVENT_ID_HEADER]: id,
    [SIGNATURE_HEADER]: signWebhook(rawBody, list, nowMs),
  };
}

/**
 * The deprecated Pix-Checkout-Signature value for a body sent at `nowMs` (wall clock): one `v1=` per secret.
 * @deprecated Receivers verify the Standard Webhooks headers (webhookHeaders).
 */
export function signWebhook(rawBody: string, secret: WebhookSecrets, nowMs: number = REAL_CLOCK.now()): string {
  const t = Math.floor(nowMs / 1000);
  return [`t=${t}`, ...webhookSecrets(secret).map((s) => `v1=${legacyHmac(s, t, rawBody)}`)].join(',');
}

export interface VerifyOptions {
  /** How far the timestamp may be from now, in seconds (default 300). */
  toleranceSeconds?: number;
  /** The receiver's clock, epoch ms (default the real one). */
  now?: number;
}

/** Why a delivery's signature does not hold, or `ok`; `missing`: neither the standard headers nor the deprecated one. */
export type SignatureVerdict = 'ok' | 'missing' | 'malformed' | 'invalid_signature' | 'timestamp_out_of_window';

/** What a delivery's headers say: the verdict, the scheme read, its id (standard only) and its timestamp. */
export interface SignatureCheck {
  verdict: SignatureVerdict;
  scheme: 'standard' | 'deprecated' | null;
  /** `webhook-id` (the event's id), when the standard headers were read. */
  id: string | null;
  /** The signed timestamp, unix seconds, when one was read. */
  timestamp: number | null;
}

/** Equal in constant time (lengths first: timingSafeEqual requires them equal, and a digest's length is public). */
function sameText(given: string, expected: string): boolean {
  const a = Buffer.from(given, 'utf8');
  const b = Buffer.from(expected, 'utf8');
  return a.length === b.length && timingSafeEqual(a, b);
}

/**
 * Checks one delivery's headers over its raw body with any of `secrets`: the Standard Webhooks
 * headers when `webhook-signature` is there, else the deprecated Pix-Checkout-Signature. The HMAC is
 * judged before the timestamp, so a timestamp out of window is said only of a delivery a secret
 * really signed. Never throws on malformed headers.
 */
export function checkWebhookSignature(rawBody: string | Buffer, headers: WebhookHeaders, secrets: WebhookSecrets, options: VerifyOptions = {}): SignatureCheck {
  const list = webhookSecrets(secrets);
  const body = asText(rawBody);
  const tolerance = options.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS;
  const nowSeconds = Math.floor((options.now ?? REAL_CLOCK.now()) / 1000);
  const inWindow = (t: number) => Math.abs(nowSeconds - t) <= tolerance;

  const signature = headerValue(headers, STANDARD_WEBHOOK_HEADERS.signature);
  if (signature !== undefined && signature.trim() !== '') {
    const id = headerValue(headers, STANDARD_WEBHOOK_HEADERS.id) ?? '';
    const stamp = headerValue(headers, STANDARD_WEBHOOK_HEADERS.timestamp) ?? '';
    if (id === '' || !/^\d{1,12}$/.test(stamp)) return { verdict: 'malformed', scheme: 'standard', id: id || null, timestamp: null };
    const timestamp = Number(stamp);
    const given = signature
      .split(' ')
      .map((part) => part.split(','))
      .filter(([version, value]) => version === 'v1' && value)
      .map(([, value]) => value!);
    if (given.length === 0) return { verdict: 'malformed', scheme: 'standard', id, timestamp };
    let ok = false;
    for (const secret of list) {
      const expected = standardSignature(secret, id, timestamp, body);
      for (const candidate of given) if (sameText(candidate, expected)) ok = true;
    }
    const verdict = !ok ? 'invalid_signature' : inWindow(timestamp) ? 'ok' : 'timestamp_out_of_window';
    return { verdict, scheme: 'standard', id, timestamp };
  }

  const legacy = headerValue(headers, SIGNATURE_HEADER);
  if (legacy === undefined || legacy.trim() === '') return { verdict: 'missing', scheme: null, id: null, timestamp: null };
  let t: number | null = null;
  const candidates: string[] = [];
  for (const part of legacy.split(',')) {
    const [key, value] = part.trim().split('=', 2);
    if (key === 't' && value && /^\d{1,12}$/.test(value)) t = Number(value);
    else if (key === 'v1' && value) candidates.push(value);
  }
  if (t === null || candidates.length === 0) return { verdict: 'malformed', scheme: 'deprecated', id: null, timestamp: t };
  let ok = false;
  for (const secret of list) {
    const expected = legacyHmac(secret, t, body);
    for (const candidate of candidates) if (sameText(candidate, expected)) ok = true;
  }
  return { verdict: !ok ? 'invalid_signature' : inWindow(t) ? 'ok' : 'timestamp_out_of_window', scheme: 'deprecated', id: null, timestamp: t };
}

/**
 * True when a delivery is signed by one of `secrets` over `rawBody` within the tolerance.
 *
 * - `verifyWebhookSignature(rawBody, headers, secrets)`: the request's headers (node:http's object or
 *   a fetch Headers): the Standard Webhooks headers, else the deprecated Pix-Checkout-Signature.
 * - `verifyWebhookSignature(rawBody, pixCheckoutSignature, secret)`: a string is the deprecated
 *   header's value alone (receivers written before Standard Webhooks).
 *
 * Constant time in the signature; never throws on a malformed header.
 */
export function verifyWebhookSignature(
  rawBody: string | Buffer,
  headers: WebhookHeaders | string | null | undefined,
  secrets: WebhookSecrets,
  options: VerifyOptions = {},
): boolean {
  if (headers === null || headers === undefined || webhookSecrets(secrets).length === 0) return false;
  const given: WebhookHeaders = typeof headers === 'string' ? { [SIGNATURE_HEADER]: headers } : headers;
  return checkWebhookSignature(rawBody, given, secrets, options).verdict === 'ok';
}

/** A header's value, whatever its case; repeats joined as node:http joins them. */
export function headerValue(headers: WebhookHeaders, name: string): string | undefined {
  if (typeof (headers as Headers).get === 'function' && typeof (headers as Headers).forEach === 'function') return (headers as Headers).get(name) ?? undefined;
  const wanted = name.toLowerCase();
  const values: string[] = [];
  for (const [key, value] of Object.entries(headers as Record<string, string | string[] | undefined>)) {
    if (key.toLowerCase() !== wanted || value === undefined) continue;
    values.push(...(Array.isArray(value) ? value : [value]));
  }
  return values.length === 0 ? undefined : values.join(', ');
}
