/**
 * One log line per request: id, method, path, status, duration; never headers, query or body. The id
 * also goes into the request's error lines (the app's error handler reads it with c.get('reqId')) and
 * into the answer's `X-Request-Id`: the caller's own when it sent a well-formed one (a load balancer's),
 * else a counter, not a UUID per request: cheaper, and unique within the process's random prefix.
 * Beside the line, the request's metrics and span (RequestTelemetry, server/observability).
 */
import { randomUUID } from 'node:crypto';
import type { Span, TextMapGetter } from '@opentelemetry/api';
import type { Context, MiddlewareHandler } from 'hono';
import type { Logger } from '../log.ts';
import { REQUEST_ID_HEADER, requestHasHeaderBag, requestHeader } from './response-headers.ts';

export { REQUEST_ID_HEADER } from './response-headers.ts';

/** A caller's request id kept as is: up to 128 of letters, digits and `._:=+/-` (a UUID, a load balancer's trace id). */
const WELL_FORMED_ID = /^[A-Za-z0-9._:=+/-]{1,128}$/;

/** The request's metrics and span, told by the middleware below and the status read's fast path. */
export interface RequestTelemetry {
  /**
   * A server span for the request, a child of the caller's trace context (`traceparent`) read from
   * `carrier`, when an OpenTelemetry SDK is loaded; else undefined, having started nothing.
   * `startTime`: when the request arrived (performance.now()), for a span started after the fact.
   */
  start<C>(method: string, path: string, carrier: C, getter: TextMapGetter<C>, startTime?: number): Span | undefined;
  /** Runs `next` with the span as the active context, so the request's partner calls are its children. */
  within(span: Span, next: () => Promise<void>): Promise<void>;
  /** The request answered: counted by route pattern and status, and its span (when one was started) ended. */
  answered(method: string, route: string, status: number, started: number, reqId: string, span: Span | undefined): void;
}

/** Reads the trace context from the request's headers (Node's parsed ones when served by node:http). */
const contextHeaders: TextMapGetter<Context> = {
  get: (c, key) => requestHeader(c, key.toLowerCase() as Lowercase<string>),
  keys: () => [],
};

/** The middleware: one line per request answered by the app, its id on the answer, its metrics and span. */
export function requestLog(lines: RequestLines, telemetry?: RequestTelemetry): MiddlewareHandler {
  return async (c, next) => {
    const started = performance.now();
    const reqId = lines.idFor(requestHeader(c, REQUEST_ID_HEADER));
    c.set('reqId', reqId);
    const span = telemetry?.start(c.req.method, c.req.path, c, contextHeaders);
    if (span) await telemetry!.within(span, next);
    else await next();
    const res = c.res;
    // An answer under the API or the health paths carries it from the request's header bag (response-headers.ts).
    if (!requestHasHeaderBag(c)) {
      try {
        res.headers.set(REQUEST_ID_HEADER, reqId);
      } catch {
        // Immutable headers (a Response passed through from a fetch): left as they are.
      }
    }
    lines.write(reqId, c.req.method, c.req.path, res.status, started);
    telemetry?.answered(c.req.method, c.req.routePath, res.status, started, reqId, span);
  };
}

/** The request ids and the request's line, for the middleware above and the status read's fast path. */
export interface RequestLines {
  /** A new id. */
  nextId(): string;
  /** The request's id: `given` (its X-Request-Id) when well-formed, else a new one. */
  idFor(given: string | undefined): string;
  /** Logs the answered request: `started` is its performance.now() on arrival; `path` without the query. */
  write(reqId: string, method: string, path: string, status: number, started: number): void;
}

/** `maskPath` hides what a path may carry that a log must not (the webhook's secret segment). */
export function requestLines(logger: Logger, maskPath: (path: string) => string = (path) => path): RequestLines {
  const prefix = randomUUID().slice(0, 8);
  let sequence = 0;
  const nextId = () => `${prefix}-${(++sequence).toString(36)}`;
  return {
    nextId,
    idFor: (given) => (given !== undefined && WELL_FORMED_ID.test(given) ? given : nextId()),
    write(reqId, method, path, status, started) {
      // A 502, 503 or 504 names a dependency (the partner, the store) or a shutdown, whose own line
      // carries the level (an unknown create at error, a refused connection at warn): the request's at warn.
      const level = status >= 500 ? (status >= 502 && status <= 504 ? 'warn' : 'error') : 'info';
      if (!logger.isLevelEnabled(level)) return;
      logger[level]({ req_id: reqId, method, path: maskPath(path), status, ms: Math.round((performance.now() - started) * 10) / 10 }, 'request');
    },
  };
}
