/**
 * createApp(deps): the proxy as a web-standard fetch handler (Hono), so a merchant can serve it alone
 * (server/main.ts) or mount it inside the app it already runs (docs/proxy.md). It holds the partner
 * client and so the token; nothing it answers carries either.
 */
import { randomUUID } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { Hono, type Context, type MiddlewareHandler } from 'hono';
import { cors } from 'hono/cors';
import { API_PATHS, CHECKOUT_PATHS } from '../src/shared/contract.ts';
import { errorBody } from '../src/shared/errors.ts';
import { LIMITS } from '../src/shared/limits.ts';
import { requireApiKey } from './http/api-key.ts';
import { PROXY_DEFAULTS } from './defaults.ts';
import { CheckoutService } from './domain/checkouts.ts';
import { HttpError, respondError } from './http/errors.ts';
import { createLogger, type Logger } from './log.ts';
import { PaymentService } from './domain/payments.ts';
import { TokenBuckets, clientAddress, perMinute, rateLimit, type RateLimit } from './http/rate-limit.ts';
import { readinessCheck, type UpstreamTracker } from './domain/readiness.ts';
import { addHeaders, collectHeaders, requestHeader } from './http/response-headers.ts';
import { MerchantNotifier, type MerchantNotifierOptions } from './domain/merchant-notify.ts';
import { outcomeEvent, type OutcomeEvent } from './domain/outcomes.ts';
import { Reconciler, type ReconcilerOptions } from './domain/reconciler.ts';
import { checkoutRoutes } from './routes/checkouts.ts';
import { paymentRoutes } from './routes/payments.ts';
import type { PaymentRecord, Store, TransferRecord } from './store/store.ts';
import type { PartnerClient } from './partner/client.ts';
import { WebhookProcessor } from './domain/webhook-processor.ts';
import { webhookRoutes } from './routes/webhooks.ts';
import { WIDGET_SCRIPT_PATH, widgetScript } from './routes/widget-script.ts';

export interface AppDeps {
  partner: PartnerClient;
  /** Where payments, checkouts and the partner token live (server/store). */
  store: Store;
  /** The merchant server's key for the server-to-server endpoints; without it they answer 401. */
  apiKey?: string;
  /** Seconds each QR code stays payable (default: the spec's 3600). */
  expirationSeconds?: number;
  /** Origins of the merchant pages allowed to call the browser API; `*` allows any (sandbox only). */
  allowedOrigins?: readonly string[];
  /** Where the API is served (default `/api`): the widget's `endpoint`. */
  basePath?: string;
  now?: () => number;
  /** Serve live status streams (Server-Sent Events); default true. */
  streams?: boolean;
  /** How often a watched payment is asked about upstream (default 2000 ms). */
  watchIntervalMs?: number;
  /** A stored, unfinished status younger than this is served without asking the partner (default 2000 ms). */
  staleAfterMs?: number;
  /** Payments a checkout may issue after its first one expires (default 3). */
  renewals?: number;
  /** Let the browser choose the amount, within these bounds (`POST /payments`); default off. */
  openAmount?: { min: number; max: number } | false;
  /** Where the hosted checkout sends the payer after paying, when a checkout names none (https). */
  defaultCallback?: string;
  /** Per-client limits on creating and on reading; `false` turns them off. Default 30 and 600 a minute. */
  rateLimits?: { create: RateLimit; status: RateLimit } | false;
  /** Reverse proxies in front whose X-Forwarded-For is trusted for the client's address (default 0). */
  trustedProxies?: number;
  logger?: Logger;
  /** Fed by the partner client's `log` option; lets readiness see upstream failures. */
  upstream?: UpstreamTracker;
  /** Aborting it ends every status stream and stops the pollers (graceful shutdown). */
  signal?: AbortSignal;
  /** The partner's notifications (`POST {basePath}/webhooks/partner[/<secretPath>]`). */
  webhooks?: { secretPath?: string | undefined; sourceIps?: readonly string[] };
  /** The merchant's backend, told of every outcome by a signed POST (merchant-notify.ts). */
  merchantWebhook?: ({ url: string; secret: string } & Partial<Omit<MerchantNotifierOptions, 'store' | 'url' | 'secret' | 'log'>>) | undefined;
  /** Called with every outcome event (in-process subscription; also `app.pix.events.on('outcome')`). */
  onOutcome?: (event: OutcomeEvent) => void;
  /** Reconciler timing (reconciler.ts). */
  reconcile?: Partial<Pick<ReconcilerOptions, 'tickMs' | 'everyMs' | 'nearMs' | 'nearWindowMs' | 'concurrency'>>;
  /** Start the reconciler and the merchant delivery worker now (main.ts and dev.ts do); default false. */
  background?: boolean;
}

/** What runs beside the routes: outcomes, the reconciler, the merchant's deliveries. */
export interface PixRuntime {
  /** Emits `outcome` with an OutcomeEvent for every payment or transfer that becomes final. */
  events: EventEmitter<{ outcome: [OutcomeEvent] }>;
  payments: PaymentService;
  processor: WebhookProcessor;
  reconciler: Reconciler;
  notifier: MerchantNotifier | null;
  /** Processes stored notifications left over, then starts the reconciler and the delivery worker. */
  start(): void;
  /** Stops them and waits for work in flight (before closing the store). */
  stop(): Promise<void>;
}

export type PixApp = Hono & { pix: PixRuntime };

export const DEFAULT_RATE_LIMITS = { create: perMinute(PROXY_DEFAULTS.rateLimitCreatePerMinute), status: perMinute(PROXY_DEFAULTS.rateLimitStatusPerMinute) };

export const DEFAULT_RENEWALS = PROXY_DEFAULTS.renewals;

export function createApp(deps: AppDeps): PixApp {
  const app = new Hono();
  const basePath = deps.basePath ?? '/api';
  const origins = deps.allowedOrigins ?? [];
  const now = deps.now ?? Date.now;
  const logger = deps.logger ?? createLogger();

  app.use('*', requestLog(logger));
  // Strict headers on the proxy's own answers (JSON only: nothing to render, frame or embed).
  // Cross-Origin-Resource-Policy does not apply to CORS requests, so fetch and EventSource work.
  // Gathered per request in one precomputed object and put on the answer once (response-headers.ts).
  const strict = collectHeaders(SECURITY_HEADERS);
  for (const path of [`${basePath}/*`, '/health', '/ready']) app.use(path, strict);

  // CORS only where the browser calls: the API-key endpoints are server to server.
  const anyOrigin = origins.includes('*');
  const allowed = (origin: string) => anyOrigin || origins.includes(origin);
  const browserCors = corsFor(allowed);
  const browserPaths = [API_PATHS.payments, `${API_PATHS.payments}/*`, CHECKOUT_PATHS.checkoutPayment].map((p) => basePath + p);
  for (const path of browserPaths) app.use(path, browserCors);
  // A page on another origin could still fire a "simple" POST (no preflight): refuse it outright.
  for (const path of [API_PATHS.payments, CHECKOUT_PATHS.checkoutPayment]) app.post(basePath + path, sameOriginOrAllowed(allowed));

  const events = new EventEmitter<{ outcome: [OutcomeEvent] }>();
  if (deps.onOutcome) events.on('outcome', deps.onOutcome);
  let notifier: MerchantNotifier | null = null;
  // A listener that throws must not break the proxy: it is logged.
  const emit = (event: OutcomeEvent | null) => {
    if (!event) return;
    try {
      events.emit('outcome', event);
    } catch (error) {
      logger.error({ err: { message: (error as Error).message } }, 'an outcome listener threw');
    }
  };
  const onPaymentFinal = (record: PaymentRecord) => {
    notifier?.wake();
    if (events.listenerCount('outcome') === 0) return;
    void (async () => {
      const checkout = record.checkoutId ? await deps.store.getCheckout(record.checkoutId).catch(() => null) : null;
      emit(outcomeEvent('payment', record.partnerStatus, { reference: record.reference, valueCents: record.valueCents, checkoutId: record.checkoutId, orderId: checkout?.orderId ?? null }, record.updatedAt));
    })();
  };
  const onTransferFinal = (record: TransferRecord) => {
    notifier?.wake();
    emit(outcomeEvent('transfer', record.partnerStatus, { reference: record.reference, valueCents: record.valueCents }, record.updatedAt));
  };

  const payments = new PaymentService(deps.partner, {
    store: deps.store,
    expirationSeconds: deps.expirationSeconds ?? LIMITS.defaultExpirationSeconds,
    now,
    log: logger,
    staleAfterMs: deps.staleAfterMs,
    watchIntervalMs: deps.watchIntervalMs,
    onFinal: onPaymentFinal,
  });
  const processor = new WebhookProcessor({ store: deps.store, partner: deps.partner, payments, now, log: logger.child({ component: 'webhooks' }), onTransferFinal });
  const reconciler = new Reconciler({ store: deps.store, partner: deps.partner, payments, processor, now, log: logger.child({ component: 'reconciler' }), onTransferFinal, ...deps.reconcile });
  if (deps.merchantWebhook) {
    notifier = new MerchantNotifier({ now, ...deps.merchantWebhook, store: deps.store, log: logger.child({ component: 'merchant-webhook' }) });
  }
  let started = false;
  const runtime: PixRuntime = {
    events,
    payments,
    processor,
    reconciler,
    notifier,
    start() {
      if (started) return;
      started = true;
      reconciler.start();
      notifier?.start();
    },
    async stop() {
      processor.close();
      await Promise.all([reconciler.stop(), notifier?.stop(), processor.idle()]);
    },
  };
  deps.signal?.addEventListener('abort', () => void runtime.stop(), { once: true });
  const checkouts = new CheckoutService({ store: deps.store, payments, renewals: deps.renewals ?? DEFAULT_RENEWALS, defaultCallback: deps.defaultCallback, now });
  deps.signal?.addEventListener('abort', () => payments.close(), { once: true });

  const limits = deps.rateLimits === undefined ? DEFAULT_RATE_LIMITS : deps.rateLimits;
  const clientOf = clientAddress(deps.trustedProxies ?? 0);
  const limiter = (limit: RateLimit | undefined): MiddlewareHandler =>
    limit ? rateLimit(new TokenBuckets(limit, now), clientOf) : (_c, next) => next();
  const limitCreate = limiter(limits ? limits.create : undefined);
  const limitStatus = limiter(limits ? limits.status : undefined);

  app.get('/health', (c) => c.json({ status: 'ok' }, 200, { 'cache-control': 'no-store' }));
  const ready = readinessCheck({ store: deps.store, partner: deps.partner, upstream: deps.upstream });
  app.get('/ready', async (c) => {
    const report = await ready();
    if (report.ready) return c.json({ status: 'ready', checks: report.checks }, 200, { 'cache-control': 'no-store' });
    return c.json({ ...errorBody('not_ready', 'Not ready to serve payments yet.'), checks: report.checks }, 503, { 'cache-control': 'no-store' });
  });

  app.get(basePath + WIDGET_SCRIPT_PATH, widgetScript());
  app.route(basePath, paymentRoutes({ payments, streams: deps.streams ?? true, openAmount: deps.openAmount ?? false, limitCreate, limitStatus }));
  app.route(basePath, checkoutRoutes({ checkouts, requireApiKey: requireApiKey(deps.apiKey), limitCreate }));
  app.route(
    basePath,
    webhookRoutes({
      store: deps.store,
      now,
      log: logger,
      secretPath: deps.webhooks?.secretPath,
      sourceIps: deps.webhooks?.sourceIps,
      clientOf,
      // After the write, not awaited: the answer does not wait for the partner.
      received: (id, raw) => void processor.process(id, raw),
    }),
  );

  // A known path asked with another method gets 405, not a misleading 404.
  const allow: [string, 'GET' | 'POST'][] = [
    [API_PATHS.payments, 'POST'],
    [API_PATHS.payment, 'GET'],
    [API_PATHS.paymentEvents, 'GET'],
    [CHECKOUT_PATHS.checkouts, 'POST'],
    [CHECKOUT_PATHS.checkout, 'GET'],
    [CHECKOUT_PATHS.checkoutPayment, 'POST'],
    [WIDGET_SCRIPT_PATH, 'GET'],
  ];
  for (const [path, method] of allow) {
    app.all(basePath + path, (c) => c.json(errorBody('method_not_allowed', `${c.req.method} is not allowed here; use ${method}.`), 405, { allow: method }));
  }

  app.notFound((c) => c.json(errorBody('not_found', `Nothing at ${c.req.method} ${c.req.path}.`), 404));
  app.onError((error, c) => respondError(c, error, logger.child({ req_id: c.get('reqId') })));
  if (deps.background) runtime.start();
  return Object.assign(app, { pix: runtime });
}

/**
 * One line per request: id, method, path, status, duration; never headers, query or body. The id
 * also goes into the request's error lines (onError). A counter, not a UUID per request: cheaper,
 * and unique within the process's random prefix.
 */
/** The path as it may be logged: the webhook's secret segment (PIX_WEBHOOK_SECRET_PATH) masked. */
export function loggablePath(path: string): string {
  return path.replace(/(\/webhooks\/partner\/)[^/]+/, '$1…');
}

function requestLog(logger: Logger): MiddlewareHandler {
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
    logger[level]({ req_id: reqId, method: c.req.method, path: loggablePath(c.req.path), status, ms: Math.round((performance.now() - started) * 10) / 10 }, 'request');
  };
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

const VARY_ORIGIN: Readonly<Record<string, string>> = Object.freeze({ vary: 'Origin' });

/**
 * CORS for the browser API: preflights answered by hono/cors; on other requests the same headers it
 * would add (Access-Control-Allow-Origin for an allowed origin, and Vary: Origin), added to the
 * request's header bag rather than onto the built answer.
 */
function corsFor(allowed: (origin: string) => boolean): MiddlewareHandler {
  const preflight = cors({ origin: (origin) => (allowed(origin) ? origin : null), allowMethods: ['GET', 'POST'], allowHeaders: ['content-type'], maxAge: 600 });
  return (c, next) => {
    if (c.req.method === 'OPTIONS') return preflight(c, next);
    const origin = requestHeader(c, 'origin');
    const headers = origin && allowed(origin) ? { 'access-control-allow-origin': origin, vary: 'Origin' } : VARY_ORIGIN;
    return addHeaders(c, headers, next);
  };
}

/**
 * Browsers send Origin on every POST. One from a page that is neither allowed nor this server's
 * own origin is refused before anything is created.
 */
function sameOriginOrAllowed(allowed: (origin: string) => boolean): MiddlewareHandler {
  return async (c: Context, next) => {
    const origin = c.req.header('origin');
    if (origin === undefined || allowed(origin) || isSameHost(origin, c.req.header('host'))) return next();
    throw new HttpError(403, 'forbidden', 'This origin may not call the payment API (PIX_ALLOWED_ORIGINS).');
  };
}

function isSameHost(origin: string, host: string | undefined): boolean {
  try {
    return host !== undefined && new URL(origin).host === host;
  } catch {
    return false;
  }
}
