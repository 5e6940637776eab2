/**
 * One log line per request: id, method, path, status, duration; never headers, query or body. The id
 * also goes into the request's error lines (the app's error handler reads it with c.get('reqId')).
 * A counter, not a UUID per request: cheaper, and unique within the process's random prefix.
 */
import { randomUUID } from 'node:crypto';
import type { MiddlewareHandler } from 'hono';
import type { Logger } from '../log.ts';

/** `maskPath` hides what a path may carry that a log must not (the webhook's secret segment). */
export function requestLog(logger: Logger, maskPath: (path: string) => string = (path) => path): MiddlewareHandler {
  const prefix = randomUUID().slice(0, 8);
  let sequence = 0;
  return async (c, next) => {
    const started = performance.now();
    const reqId = `${prefix}-${(++sequence).toString(36)}`;
    c.set('reqId', reqId);
    await next();
    const status = c.res.status;
    const level = status >= 500 ? 'error' : 'info';
    if (!logger.isLevelEnabled(level)) return;
    logger[level](
      { req_id: reqId, method: c.req.method, path: maskPath(c.req.path), status, ms: Math.round((performance.now() - started) * 10) / 10 },
      'request',
    );
  };
}
