/**
 * Signing the proxy's webhooks to the merchant, and checking them on the merchant's side.
 *
 *   Pix-Checkout-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret, `${t}.${rawBody}`)>
 *
 * The timestamp is inside what is signed, so an old delivery cannot be replayed later than the
 * tolerance. Verify on the raw body, byte for byte, before parsing it.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

export const SIGNATURE_HEADER = 'Pix-Checkout-Signature';
export const EVENT_ID_HEADER = 'Pix-Checkout-Event-Id';

/** The default tolerance between the signature's timestamp and the receiver's clock. */
export const DEFAULT_TOLERANCE_SECONDS = 300;

function hmac(secret: string, timestamp: number, rawBody: string): string {
  return createHmac('sha256', secret).update(`${timestamp}.${rawBody}`).digest('hex');
}

/** The header value for a body sent at `nowMs` (wall clock). */
export function signWebhook(rawBody: string, secret: string, nowMs: number = Date.now()): string {
  const t = Math.floor(nowMs / 1000);
  return `t=${t},v1=${hmac(secret, t, rawBody)}`;
}

export interface VerifyOptions {
  /** How far the timestamp may be from now, in seconds (default 300). */
  toleranceSeconds?: number;
  /** The receiver's clock, epoch ms (default Date.now()). */
  now?: number;
}

/**
 * True when `header` (the Pix-Checkout-Signature value) signs `rawBody` with `secret` within the
 * tolerance. Constant time in the signature; never throws on a malformed header.
 */
export function verifyWebhookSignature(rawBody: string | Buffer, header: string | null | undefined, secret: string, options: VerifyOptions = {}): boolean {
  if (typeof header !== 'string' || !secret) return false;
  let t: number | null = null;
  const candidates: string[] = [];
  for (const part of header.split(',')) {
    const [key, value] = part.trim().split('=', 2);
    if (key === 't' && value && /^\d{1,12}$/.test(value)) t = Number(value);
    else if (key === 'v1' && value) candidates.push(value);
  }
  if (t === null || candidates.length === 0) return false;
  const tolerance = options.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS;
  const nowSeconds = Math.floor((options.now ?? Date.now()) / 1000);
  if (Math.abs(nowSeconds - t) > tolerance) return false;
  const expected = Buffer.from(hmac(secret, t, Buffer.isBuffer(rawBody) ? rawBody.toString('utf8') : rawBody), 'utf8');
  let ok = false;
  for (const candidate of candidates) {
    const given = Buffer.from(candidate, 'utf8');
    // Equal lengths first (timingSafeEqual requires it); the length of a hex SHA-256 is public.
    if (given.length === expected.length && timingSafeEqual(given, expected)) ok = true;
  }
  return ok;
}
