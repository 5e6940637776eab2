/** A known path asked with another method gets 405 naming the right one, not a misleading 404. */
import type { Hono } from 'hono';
import { errorBody } from '../../src/shared/errors.ts';

/** Registers the 405 answer for `path`: call it after the path's own methods are routed. */
export function allowOnly(routes: Hono, path: string, method: 'GET' | 'POST' | 'GET, POST'): void {
  routes.all(path, (c) =>
    c.json(errorBody('method_not_allowed', `${c.req.method} is not allowed here; use ${method.replace(', ', ' or ')}.`), 405, { allow: method }),
  );
}
