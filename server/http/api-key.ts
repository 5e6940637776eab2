/**
 * The merchant server's API key on the server-to-server endpoints. Compared in constant time over
 * SHA-256 digests: equal lengths for timingSafeEqual, and no hint of the key's length either.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { MiddlewareHandler } from 'hono';
import { HttpError } from './errors.ts';

const digest = (text: string) => createHash('sha256').update(text, 'utf8').digest();

export function requireApiKey(apiKey: string | undefined): MiddlewareHandler {
  const expected = apiKey ? digest(apiKey) : null;
  return async (c, next) => {
    if (!expected) throw new HttpError(401, 'unauthorized', 'No API key is configured on this server (PIX_API_KEY), so this endpoint is closed.');
    const match = /^Bearer ([\x21-\x7e]+)$/.exec(c.req.header('authorization') ?? '');
    if (!match || !timingSafeEqual(digest(match[1]!), expected)) {
      throw new HttpError(401, 'unauthorized', 'Send the API key as Authorization: Bearer <PIX_API_KEY>.', undefined, { 'www-authenticate': 'Bearer' });
    }
    await next();
  };
}
