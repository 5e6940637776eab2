/**
 * Reading a JSON request body safely, for the proxy and the sandbox alike: the content type is
 * checked first, and the body is read only up to the limit, so a huge or endless body costs at most
 * `maxBytes` of memory. Each caller turns the outcome into its own error shape.
 */
import type { Context } from 'hono';
import { RequestAbortedError } from './errors.ts';

export type JsonRead = { ok: true; body: unknown } | { ok: false; problem: 'media_type' | 'too_large' | 'invalid_json'; maxBytes: number };

const JSON_TYPE = /^application\/json\s*(;|$)/i;

/** The body's bytes, read only up to `maxBytes`; null when it is larger (declared or sent). */
export async function readBodyBytes(c: Context, maxBytes: number): Promise<Buffer | null> {
  if (Number(c.req.header('content-length')) > maxBytes) return null;
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = c.req.raw.body?.getReader();
  if (reader) {
    for (;;) {
      let chunk: ReadableStreamReadResult<Uint8Array>;
      try {
        chunk = await reader.read();
      } catch {
        // The client hung up mid-body: its doing, not the server's.
        throw new RequestAbortedError();
      }
      const { done, value } = chunk;
      if (done) break;
      size += value.byteLength;
      if (size > maxBytes) {
        await reader.cancel();
        return null;
      }
      chunks.push(value);
    }
  }
  return Buffer.concat(chunks);
}

export async function readJson(c: Context, maxBytes: number): Promise<JsonRead> {
  if (!JSON_TYPE.test(c.req.header('content-type') ?? '')) return { ok: false, problem: 'media_type', maxBytes };
  const bytes = await readBodyBytes(c, maxBytes);
  if (bytes === null) return { ok: false, problem: 'too_large', maxBytes };
  try {
    const text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    return { ok: true, body: JSON.parse(text) };
  } catch {
    return { ok: false, problem: 'invalid_json', maxBytes };
  }
}
