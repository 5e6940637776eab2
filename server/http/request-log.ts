/**
 * One log line per request: id, method, path, status, duration; never headers, query or body. The id
 * also goes into the request's error lines (the app's error handler reads it with c.get('reqId')).
 * A counter, not a UUID per request: cheaper, and unique within the process's random prefix.
 */
import { randomUUID } from 'node:crypto';
import type { MiddlewareHandler } from 'hono';
import type { Logger } from '../log.ts';

/** The middleware: one line per request answered by the app. */
export function requestLog(lines: RequestLines): MiddlewareHandler {
  return async (c, next) => {
    const started = performance.now();
    const reqId = lines.nextId();
    c.set('reqId', reqId);
    await next();
    lines.write(reqId, c.req.method, c.req.path, c.res.status, started);
  };
}

/** The request ids and the request's line, for the middleware above and the status read's fast path. */
export interface RequestLines {
  nextId(): string;
  /** Logs the answered request: `started` is its performance.now() on arrival; `path` without the query. */
  write(reqId: string, method: string, path: string, status: number, started: number): void;
}

/** `maskPath` hides what a path may carry that a log must not (the webhook's secret segment). */
export function requestLines(logger: Logger, maskPath: (path: string) => string = (path) => path): RequestLines {
  const prefix = randomUUID().slice(0, 8);
  let sequence = 0;
  return {
    nextId: () => `${prefix}-${(++sequence).toString(36)}`,
    write(reqId, method, path, status, started) {
      // A 502, 503 or 504 names a dependency (the partner, the store) or a shutdown, whose own line
      // carries the level (an unknown create at error, a refused connection at warn): the request's at warn.
      const level = status >= 500 ? (status >= 502 && status <= 504 ? 'warn' : 'error') : 'info';
      if (!logger.isLevelEnabled(level)) return;
      logger[level]({ req_id: reqId, method, path: maskPath(path), status, ms: Math.round((performance.now() - started) * 10) / 10 }, 'request');
    },
  };
}
