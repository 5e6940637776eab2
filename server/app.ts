/**
 * createApp(deps): the proxy as a web-standard fetch handler (Hono), so a merchant can serve it alone
 * or mount it inside the app it already runs. It holds the partner client and so the token; nothing
 * it answers carries either.
 */
import { Hono } from 'hono';
import { cors } from 'hono/cors';
import { API_PATHS } from '../src/shared/contract.ts';
import { errorBody } from '../src/shared/errors.ts';
import { LIMITS } from '../src/shared/limits.ts';
import { respondError } from './http-errors.ts';
import { PaymentService } from './payments.ts';
import { paymentRoutes } from './routes/payments.ts';
import type { PartnerClient } from './upstream/client.ts';

export interface AppDeps {
  partner: PartnerClient;
  /** Seconds each QR code stays payable (default: the spec's 3600). */
  expirationSeconds?: number;
  /** Origins of the merchant pages allowed to call the browser API; `*` allows any (sandbox only). */
  allowedOrigins?: readonly string[];
  /** Where the browser API is served (default `/api`): the widget's `endpoint`. */
  basePath?: string;
  now?: () => number;
  /** Serve live status streams (Server-Sent Events); default true. */
  streams?: boolean;
  /** How often a watched payment is asked about upstream (default 2000 ms). */
  watchIntervalMs?: number;
}

export function createApp(deps: AppDeps): Hono {
  const app = new Hono();
  const basePath = deps.basePath ?? '/api';
  const origins = deps.allowedOrigins ?? [];

  app.use(
    `${basePath}/*`,
    cors({
      origin: (origin) => (origins.includes('*') || origins.includes(origin) ? origin : null),
      allowMethods: ['GET', 'POST'],
      allowHeaders: ['content-type'],
      maxAge: 600,
    }),
  );

  app.get('/health', (c) => c.json({ status: 'ok' }));

  const payments = new PaymentService(deps.partner, {
    expirationSeconds: deps.expirationSeconds ?? LIMITS.defaultExpirationSeconds,
    now: deps.now ?? Date.now,
    watchIntervalMs: deps.watchIntervalMs,
  });
  app.route(basePath, paymentRoutes({ payments, streams: deps.streams ?? true }));

  // A known path asked with another method gets 405, not a misleading 404.
  app.all(`${basePath}${API_PATHS.payments}`, (c) =>
    c.json(errorBody('method_not_allowed', `${c.req.method} is not allowed here; use POST.`), 405, { allow: 'POST' }),
  );
  for (const path of [API_PATHS.payment, API_PATHS.paymentEvents]) {
    app.all(`${basePath}${path}`, (c) =>
      c.json(errorBody('method_not_allowed', `${c.req.method} is not allowed here; use GET.`), 405, { allow: 'GET' }),
    );
  }

  app.notFound((c) => c.json(errorBody('not_found', `Nothing at ${c.req.method} ${c.req.path}.`), 404));
  app.onError((error, c) => respondError(c, error));
  return app;
}
