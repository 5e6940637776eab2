/**
 * The status read's fast path on node:http: every open page polls `GET {base}/payments/:reference`,
 * and when that payment's stored status is fresh (or final) the answer needs no routing, no Request
 * or Response object and no middleware chain. This answers exactly that case straight from Node's
 * request, with the same bytes and headers the app's route gives (test/node/http/fast-read.test.ts
 * compares them), the same rate-limit buckets and the same request line. Everything else (another
 * route or method, an unknown or stale payment, an encoded path, a client over its limit) falls
 * through to the app, which decides it as before. Built by createApp from the rules it uses itself;
 * served by nodeListener (http/node-listener.ts). Where the app is mounted as a fetch handler, only
 * the app's route runs, with the same answers.
 */
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import type { TextMapGetter } from '@opentelemetry/api';
import { REQUEST_ID_HEADER, SECURITY_HEADERS } from './response-headers.ts';
import type { RequestLines, RequestTelemetry } from './request-log.ts';
import type { TokenBuckets } from './rate-limit.ts';

/** Answers the request and returns true, or returns false having written nothing. */
export type FastPath = (req: IncomingMessage, res: ServerResponse) => boolean;

export interface FastReadDeps {
  /** The app's base path, `/api` by default. */
  basePath: string;
  /** The payment's view as JSON when it can be answered without I/O (PaymentService.freshJson). */
  freshJson: (reference: string) => string | undefined;
  /** The status reads' buckets, shared with the app's limiter; none when reads are not limited. */
  buckets: TokenBuckets | undefined;
  /** The client's address from X-Forwarded-For and the socket's peer (rate-limit.ts addressOf). */
  clientOf: (forwardedFor: string | undefined, peer: string | undefined) => string;
  /** The CORS headers for the request's Origin (cors.ts corsHeaders). */
  corsFor: (origin: string | undefined) => Readonly<Record<string, string>>;
  /** Answer headers beside the security set: the route's own (cache-control). */
  routeHeaders: Readonly<Record<string, string>>;
  lines: RequestLines;
  /** The route's metrics and span, as the app's middleware tells them; `route` is its pattern (`/api/payments/:reference`). */
  telemetry?: { observe: RequestTelemetry; route: string } | undefined;
}

/** Reads the trace context from Node's parsed headers. */
const nodeHeaders: TextMapGetter<IncomingHttpHeaders> = {
  get: (headers, key) => headers[key.toLowerCase()],
  keys: (headers) => Object.keys(headers),
};

export function fastStatusRead({ basePath, freshJson, buckets, clientOf, corsFor, routeHeaders, lines, telemetry }: FastReadDeps): FastPath {
  const prefix = `${basePath}/payments/`;
  // The answer's headers but CORS and the length, in the order the app writes them (the route's,
  // then the security set), as the flat name-value list Node takes: built once, copied per answer.
  const fixed: string[] = ['content-type', 'application/json'];
  for (const name in routeHeaders) fixed.push(name, routeHeaders[name]!);
  for (const name in SECURITY_HEADERS) fixed.push(name, SECURITY_HEADERS[name]!);
  return (req, res) => {
    if (req.method !== 'GET') return false;
    const url = req.url!;
    if (!url.startsWith(prefix)) return false;
    const query = url.indexOf('?', prefix.length);
    const path = query === -1 ? url : url.slice(0, query);
    const reference = path.slice(prefix.length);
    // One plain segment: no sub-route (`/events`), nothing the app would decode first.
    if (reference.length === 0 || reference.includes('/') || reference.includes('%')) return false;
    const started = performance.now();
    const json = freshJson(reference);
    if (json === undefined) return false;
    if (buckets && buckets.take(clientOf(header(req, 'x-forwarded-for'), req.socket.remoteAddress)) !== 0) return false;

    const reqId = lines.idFor(header(req, REQUEST_ID_HEADER));
    const headers = fixed.slice();
    headers.push(REQUEST_ID_HEADER, reqId);
    const cors = corsFor(header(req, 'origin'));
    for (const name in cors) headers.push(name, cors[name]!);
    headers.push('content-length', String(Buffer.byteLength(json)));
    res.writeHead(200, headers);
    res.end(json);
    lines.write(reqId, 'GET', path, 200, started);
    if (telemetry) {
      // Answered without I/O: its span, when traced, is started and ended here, timed from its arrival.
      const { observe, route } = telemetry;
      observe.answered('GET', route, 200, started, reqId, observe.start('GET', path, req.headers, nodeHeaders, started));
    }
    return true;
  };
}

function header(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value.join(', ') : value;
}
