/** Reading a request's input for the handlers, each problem a 4xx in the shared error shape. */
import type { Context } from 'hono';
import type { z } from 'zod/mini';
import { CheckoutId, Reference } from '../../src/shared/contract.ts';
import { parseInput } from '../../src/shared/errors.ts';
import { LIMITS } from '../../src/shared/limits.ts';
import { HttpError } from './errors.ts';
import { readJson } from './body.ts';

/** The body as JSON, at most `maxBytes` (the shared limit by default). */
export async function readJsonBody(c: Context, maxBytes: number = LIMITS.maxJsonBodyBytes): Promise<unknown> {
  const read = await readJson(c, maxBytes);
  if (read.ok) return read.body;
  switch (read.problem) {
    case 'media_type':
      throw new HttpError(415, 'unsupported_media_type', 'Send the body as JSON with Content-Type: application/json.');
    case 'too_large':
      throw new HttpError(413, 'payload_too_large', `The body must be at most ${maxBytes} bytes.`);
    default:
      throw new HttpError(400, 'invalid_json', 'The body is not valid JSON.');
  }
}

/** Parses the JSON body with `schema`, or throws the 400 naming every bad field. */
/** The query string checked against `schema` (a strict object of strings): a 400 naming each field that is wrong. */
export function parseQuery<T>(c: Context, schema: z.ZodMiniType<T>): T {
  const parsed = parseInput(schema, c.req.query());
  if (parsed.success) return parsed.data;
  const { message, fields } = parsed.body.error;
  throw new HttpError(400, 'invalid_request', message, fields);
}

export async function parseBody<T>(c: Context, schema: z.ZodMiniType<T>): Promise<T> {
  const parsed = parseInput(schema, await readJsonBody(c));
  if (parsed.success) return parsed.data;
  const { code, message, fields } = parsed.body.error;
  throw new HttpError(400, code as 'invalid_request', message, fields);
}

/**
 * For endpoints that need no body: none at all (the usual case), or a JSON body checked against
 * `schema`, so that a field the endpoint does not take (a value) is refused, not ignored.
 */
export async function parseOptionalBody<T>(c: Context, schema: z.ZodMiniType<T>): Promise<T | undefined> {
  if (c.req.header('content-type') === undefined) {
    const reader = c.req.raw.body?.getReader();
    const first = reader ? await reader.read() : { done: true, value: undefined };
    await reader?.cancel();
    if (!first.done && (first.value?.byteLength ?? 0) > 0) {
      throw new HttpError(415, 'unsupported_media_type', 'Send no body, or JSON with Content-Type: application/json.');
    }
    return undefined;
  }
  return parseBody(c, schema);
}

function param<T>(c: Context, name: string, schema: z.ZodMiniType<T>, code: 'invalid_reference' | 'invalid_request'): T {
  const parsed = schema.safeParse(c.req.param(name));
  if (parsed.success) return parsed.data;
  const message = parsed.error.issues[0]?.message ?? 'is invalid';
  throw new HttpError(400, code, `${name} ${message}`, { [name]: message });
}

export const referenceOf = (c: Context) => param(c, 'reference', Reference, 'invalid_reference');
export const checkoutIdOf = (c: Context) => param(c, 'id', CheckoutId, 'invalid_request');
