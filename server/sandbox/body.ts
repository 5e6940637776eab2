/**
 * The sandbox's own reading of a JSON request body, as the partner service has its own HTTP edge: a
 * body over PARTNER_MAX_BODY_BYTES (declared, or streamed without a length) is refused as soon as it
 * passes the limit, never buffered whole; then the content type, strict UTF-8 and JSON. Each caller
 * turns a problem into its own error shape (the partner API's, or the control API's).
 */
import type { Context } from 'hono';
import { PARTNER_MAX_BODY_BYTES } from '../partner/wire.ts';

export type JsonProblem = 'media_type' | 'too_large' | 'invalid_json';

export async function jsonBody(c: Context): Promise<{ ok: true; body: unknown } | { ok: false; problem: JsonProblem }> {
  if (!/^application\/json\s*(;|$)/i.test(c.req.header('content-type') ?? '')) return { ok: false, problem: 'media_type' };
  if (Number(c.req.header('content-length')) > PARTNER_MAX_BODY_BYTES) return { ok: false, problem: 'too_large' };
  const parts: Uint8Array[] = [];
  let total = 0;
  // Leaving the loop early cancels the stream: the rest is never read.
  for await (const part of (c.req.raw.body ?? []) as unknown as AsyncIterable<Uint8Array>) {
    total += part.byteLength;
    if (total > PARTNER_MAX_BODY_BYTES) return { ok: false, problem: 'too_large' };
    parts.push(part);
  }
  try {
    return { ok: true, body: JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(Buffer.concat(parts))) };
  } catch {
    return { ok: false, problem: 'invalid_json' };
  }
}
