/**
 * Draining: from the moment an instance is told to stop (SIGTERM, main.ts), it says so to the load
 * balancer and refuses new work, while the work already in flight finishes. `/ready` answers
 * `503 shutting_down` at once, so the balancer takes it out; every POST under the API (checkouts,
 * payments, a checkout's payment, payouts, refunds) and every new status stream answers
 * `503 shutting_down` with `Retry-After`, so the caller goes to another instance. What is cheap and
 * holds nothing keeps being served (status reads, `GET /checkouts/:id`, `/health`), and so do the
 * partner's notifications: they are stored at once and the partner would only send them again.
 */
import type { RequestListener } from 'node:http';
import type { MiddlewareHandler } from 'hono';
import { errorBody } from '../../src/shared/errors.ts';
import { API_PATHS } from '../../src/shared/wire.ts';

/** Whether this instance is stopping; `start()` is called once, by the shutdown. */
export interface Drain {
  readonly draining: boolean;
  start(): void;
}

export function createDrain(): Drain {
  let draining = false;
  return {
    get draining() {
      return draining;
    },
    start() {
      draining = true;
    },
  };
}

/** Seconds a refused caller is asked to wait: by then the balancer has another instance for it. */
export const DRAIN_RETRY_AFTER_S = 1;

const MESSAGE = 'This server is shutting down; send the request again (another instance will take it).';

/**
 * The gate, before every route: while draining, `/ready` and new work answer 503 `shutting_down`
 * (the browser API's answers with their CORS headers, so a page reads the code). `webhookPath` is
 * the partner's intake (kept open).
 */
export function drainGate(
  drain: Drain,
  options: { basePath: string; readyPath: string; webhookPath: string; corsFor: (origin: string | undefined) => Readonly<Record<string, string>> },
): MiddlewareHandler {
  const api = `${options.basePath}/`;
  const stream = new RegExp(`^${escape(options.basePath)}${escape(API_PATHS.paymentEvents).replace(':reference', '[^/]+')}$`);
  const intake = `${options.basePath}${options.webhookPath}`;
  return async (c, next) => {
    if (!drain.draining) return next();
    const { method, path } = c.req;
    const ready = path === options.readyPath && method === 'GET';
    const newWork = (method === 'POST' && path.startsWith(api) && path !== intake && !path.startsWith(`${intake}/`)) || (method === 'GET' && stream.test(path));
    if (!ready && !newWork) return next();
    return c.json(errorBody('shutting_down', MESSAGE), 503, {
      ...options.corsFor(c.req.header('origin')),
      'retry-after': String(DRAIN_RETRY_AFTER_S),
      'cache-control': 'no-store',
    });
  };
}

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/**
 * The node:http listener, counting the requests in flight (a status stream is one until it ends),
 * and, while draining, closing each connection after its answer (`Connection: close`), so a
 * balancer's kept-alive connection takes no more requests here.
 */
export function countRequests(listener: RequestListener, draining: () => boolean): { listener: RequestListener; inFlight: () => number } {
  let inFlight = 0;
  return {
    listener: (req, res) => {
      inFlight++;
      res.once('close', () => inFlight--);
      if (draining()) res.shouldKeepAlive = false;
      listener(req, res);
    },
    inFlight: () => inFlight,
  };
}
