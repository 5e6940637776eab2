/**
 * Response headers that middleware decides and every answer under a path carries (security headers,
 * CORS), gathered per request in one plain object instead of being written onto the response after the
 * handler has built it. Why: on @hono/node-server a Response built from a string with plain-object
 * headers is written straight to the socket; touching its headers afterwards turns them into a
 * `Headers`, and `c.header()` after the handler re-creates the Response around a ReadableStream body,
 * which costs more than the rest of a status read.
 *
 * `collectHeaders()` opens the bag and, after the handler, writes it onto any answer that was built
 * some other way (c.json, errors, 404s, preflights, streams); `jsonResponse()` builds an answer
 * with the bag already in it, which the collector then leaves alone.
 */
import type { ServerResponse } from 'node:http';
import type { Context, MiddlewareHandler } from 'hono';
import { X_ALREADY_SENT } from '@hono/node-server/utils/response/constants';

const BAG = 'responseHeaders';

declare module 'hono' {
  interface ContextVariableMap {
    [BAG]: Record<string, string>;
  }
}

/** Every answer's id, the log line's `req_id` (request-log.ts): in the bag from the start. */
export const REQUEST_ID_HEADER = 'x-request-id';

/** Answers built by `jsonResponse`: they already carry the bag. */
const complete = new WeakSet<Response>();

/**
 * Opens the request's header bag, starting with `fixed` (precomputed once: no work per request
 * beyond copying it) and the request's id, and applies it to the answer unless that was built with
 * it. Header values in the bag replace the answer's own, except `vary`, which is appended to.
 */
export function collectHeaders(fixed: Readonly<Record<string, string>>): MiddlewareHandler {
  return async (c, next) => {
    const bag: Record<string, string> = { ...fixed, [REQUEST_ID_HEADER]: c.get('reqId') };
    c.set(BAG, bag);
    await next();
    const res = c.res;
    if (complete.has(res)) return;
    // Set on the answer's own headers: `c.header()` here would re-create the Response.
    const headers = res.headers;
    for (const name in bag) {
      if (name === 'vary') headers.append(name, bag[name]!);
      else headers.set(name, bag[name]!);
    }
  };
}

/**
 * Adds headers to the request's bag, or, where no bag was opened, to the answer after the handler.
 * For middleware that only adds headers.
 */
export async function addHeaders(c: Context, headers: Record<string, string>, next: () => Promise<void>): Promise<void> {
  const bag = c.get(BAG);
  if (bag) {
    for (const name in headers) {
      if (name === 'vary' && bag.vary) bag.vary = `${bag.vary}, ${headers.vary}`;
      else bag[name] = headers[name]!;
    }
    return next();
  }
  await next();
  for (const name in headers) {
    if (name === 'vary') c.res.headers.append(name, headers[name]!);
    else c.res.headers.set(name, headers[name]!);
  }
}

/**
 * A JSON answer from already serialized text, with the bag's headers, `extra` and the content type
 * in one plain object: the cheapest Response @hono/node-server writes.
 */
export function jsonResponse(c: Context, json: string, status: number, extra?: Readonly<Record<string, string>>): Response {
  const bag = c.get(BAG);
  // A fresh object each time: the adapter adds Content-Length to the one it is given.
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (extra) for (const name in extra) headers[name] = extra[name]!;
  if (!bag) return new Response(json, { status, headers });
  for (const name in bag) {
    if (name === 'vary' && headers.vary) headers.vary = `${headers.vary}, ${bag.vary}`;
    else headers[name] = bag[name]!;
  }
  const res = new Response(json, { status, headers });
  complete.add(res);
  return res;
}

/**
 * A request header, read from Node's already parsed headers when served by @hono/node-server (the
 * Request's `headers` would be built for this one read), else from the Request.
 */
export function requestHeader(c: Context, name: Lowercase<string>): string | undefined {
  const incoming = (c.env as { incoming?: { headers?: Record<string, string | string[] | undefined> } } | undefined)?.incoming;
  const headers = incoming?.headers;
  if (headers === undefined || typeof headers !== 'object') return c.req.header(name);
  const value = headers[name];
  return Array.isArray(value) ? value.join(', ') : value;
}

/**
 * What `secureHeaders({ contentSecurityPolicy: { defaultSrc: ["'none'"], frameAncestors: ["'none'"] } })`
 * of hono/secure-headers sets, computed once: strict headers on the proxy's own answers (JSON only:
 * nothing to render, frame or embed). Cross-Origin-Resource-Policy does not apply to CORS requests,
 * so fetch and EventSource work. Pinned by a test against hono's own middleware.
 */
export const SECURITY_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  'content-security-policy': "default-src 'none'; frame-ancestors 'none'",
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
  'origin-agent-cluster': '?1',
  'referrer-policy': 'no-referrer',
  'strict-transport-security': 'max-age=15552000; includeSubDomains',
  'x-content-type-options': 'nosniff',
  'x-dns-prefetch-control': 'off',
  'x-download-options': 'noopen',
  'x-frame-options': 'SAMEORIGIN',
  'x-permitted-cross-domain-policies': 'none',
  'x-xss-protection': '0',
});

/** Whether the request's header bag was opened: then its answer gets the bag's headers (and its id) from here. */
export function requestHasHeaderBag(c: Context): boolean {
  return c.get(BAG) !== undefined;
}

/** The request's header bag (security headers, CORS) as it stands, for an answer written by hand. */
export function headerBag(c: Context): Readonly<Record<string, string>> {
  return c.get(BAG) ?? {};
}

/** Node's response for this request when served by @hono/node-server, for an answer written to it directly. */
export function nodeResponse(c: Context): ServerResponse | undefined {
  const outgoing = (c.env as { outgoing?: ServerResponse } | undefined)?.outgoing;
  return outgoing && typeof outgoing.writeHead === 'function' ? outgoing : undefined;
}

/**
 * What a handler that wrote Node's response itself returns: @hono/node-server then writes nothing.
 * One per request, already complete, so no middleware writes headers onto a shared object.
 */
export function alreadySent(): Response {
  const res = new Response(null, { headers: { [X_ALREADY_SENT]: 'true' } });
  complete.add(res);
  return res;
}
