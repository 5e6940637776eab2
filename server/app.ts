/**
 * createApp(deps): the proxy as a web-standard fetch handler (Hono), so a merchant can serve it alone
 * (server/main.ts) or mount it inside the app it already runs (docs/guides/mounting.md). It is
 * createHttpApp over createServices: the domain is wired in server/services.ts; this file is HTTP
 * only (middleware, routes and one error handler). It holds the partner client and so the token;
 * nothing it answers carries either.
 */
import { Hono } from 'hono';
import { errorBody } from '../src/shared/errors.ts';
import { API_PATHS } from '../src/shared/wire.ts';
import { resolveSettings, type AppSettings, type ResolvedSettings } from './config/index.ts';
import { requireApiKey } from './http/api-key.ts';
import { browserCors, corsHeaders, originCheck, sameOriginOrAllowed } from './http/cors.ts';
import { drainGate, type Drain } from './http/drain.ts';
import { fastStatusRead, type FastPath } from './http/fast-read.ts';
import { respondError } from './http/errors.ts';
import { requireSet } from './merchant/not-set.ts';
import { TokenBuckets, addressOf, bucketLimiter, clientAddress, limiter } from './http/rate-limit.ts';
import { requestLines, requestLog } from './http/request-log.ts';
import { SECURITY_HEADERS, collectHeaders } from './http/response-headers.ts';
import { StreamSlots } from './http/stream-slots.ts';
import { requestTelemetry } from './observability/http-telemetry.ts';
import { checkoutRoutes } from './routes/checkouts.ts';
import { firstScreenRenderer } from './http/first-screens.ts';
import { HEALTH_PATHS, healthRoutes } from './routes/health.ts';
import { merchantRoutes } from './routes/merchant.ts';
import { metricsRoutes } from './routes/metrics.ts';
import { openApiRoutes } from './routes/openapi.ts';
import { STATUS_READ_HEADERS, paymentRoutes } from './routes/payments.ts';
import { payoutRoutes } from './routes/payouts.ts';
import { WEBHOOK_PATH, maskWebhookSecret, webhookRoutes } from './routes/webhooks.ts';
import { widgetScriptRoutes } from './routes/widget-script.ts';
import { createServices, type ServiceParts, type Services } from './services.ts';
import { withStoreBudget } from './store/deadline.ts';

export { SECURITY_HEADERS } from './http/response-headers.ts';
export { createServices, type ServiceParts, type Services } from './services.ts';

/** createApp's parts (the partner client, the store, the clock, the logger) and its settings. */
export interface AppDeps extends AppSettings, ServiceParts {
  /** Start the reconciler and the merchant delivery worker now (createProxy does); default false. */
  background?: boolean;
  /** Once started (shutdown), /ready and new work answer 503 shutting_down (http/drain.ts). */
  drain?: Drain;
}

/** The services `app.pix` holds, by name: the runtime is built from this list. */
const RUNTIME_KEYS = [
  'events',
  'payments',
  'transfers',
  'payouts',
  'numbering',
  'reads',
  'disputes',
  'processor',
  'reconciler',
  'notifier',
  'metrics',
  'start',
  'stop',
] as const satisfies readonly (keyof Services)[];

type RuntimeServices = Pick<Services, (typeof RUNTIME_KEYS)[number]>;

/** What runs beside the routes: the domain services, and the fast path of the status reads. */
export interface PixRuntime extends RuntimeServices {
  /**
   * The fresh status reads answered on node:http before the app (http/fast-read.ts): give it to
   * `nodeListener(app.fetch, app.pix.fastPath)`. Only an optimisation: the app answers the same.
   */
  fastPath: FastPath;
}

export type PixApp = Hono & { pix: PixRuntime };

/** The proxy over services it builds from its parts (createServices), its settings resolved once; started now when `background`. */
export function createApp(deps: AppDeps): PixApp {
  // Its parts are the caller's objects: one not set is said by name, not as a property of undefined.
  requireSet(deps, 'createApp', 'deps', { what: '{ partner, store, ...settings }' });
  requireSet(deps.partner, 'createApp', 'partner', { what: 'the partner client, createPartnerClient(…)' });
  requireSet(deps.store, 'createApp', 'store', { what: 'the store, e.g. openSqliteStore({ dataDir })' });
  const settings = resolveSettings(deps);
  const app = createHttpApp(createServices(settings, deps), settings, deps.drain);
  if (deps.background) app.pix.start();
  return app;
}

/** The HTTP stack over the domain services: what every request passes through, then each room's routes. */
export function createHttpApp(services: Services, settings: ResolvedSettings, drain?: Drain): PixApp {
  const { payments, now, logger } = services;
  const { basePath } = settings;
  const app = new Hono();
  const lines = requestLines(logger, maskWebhookSecret);
  // Each request's id (X-Request-Id), line, metrics and, with an OpenTelemetry SDK loaded, span.
  const telemetry = requestTelemetry(services.metrics, maskWebhookSecret);
  app.use('*', requestLog(lines, telemetry));
  // One store budget per request, all its statements and waits together (store/deadline.ts).
  app.use('*', (_c, next) => withStoreBudget(settings.databaseStatementTimeoutMs, next));
  // Strict headers on the proxy's own answers, gathered per request in one precomputed object.
  const strict = collectHeaders(SECURITY_HEADERS);
  for (const path of [`${basePath}/*`, HEALTH_PATHS.health, HEALTH_PATHS.ready]) app.use(path, strict);

  const allowed = originCheck(settings.allowedOrigins);
  const cors = browserCors(allowed);
  if (drain) app.use('*', drainGate(drain, { basePath, readyPath: HEALTH_PATHS.ready, webhookPath: WEBHOOK_PATH, corsFor: corsHeaders(allowed) }));
  const sameOrigin = sameOriginOrAllowed(allowed, settings.publicUrl ? new URL(settings.publicUrl).origin : undefined);
  const limits = settings.rateLimits;
  const { trustedProxies } = settings;
  const clientOf = clientAddress(trustedProxies);
  const limitCreate = limiter(limits ? limits.create : undefined, clientOf, now);
  // The status reads' buckets, shared by the route's limiter and the fast path.
  const statusBuckets = limits ? new TokenBuckets(limits.status, now) : undefined;
  const limitStatus = bucketLimiter(statusBuckets, clientOf);
  const fastPath = fastStatusRead({
    basePath,
    freshJson: (reference) => payments.freshJson(reference),
    buckets: statusBuckets,
    clientOf: addressOf(trustedProxies),
    corsFor: corsHeaders(allowed),
    routeHeaders: STATUS_READ_HEADERS,
    lines,
    telemetry: { observe: telemetry, route: `${basePath}${API_PATHS.payment}` },
  });
  const streamCaps = { perClient: settings.streamsPerClient, perPayment: settings.streamsPerPayment };
  const streamSlots = new StreamSlots(streamCaps);
  services.metrics.watch({ openStreams: () => streamSlots.open() });

  app.route('/', healthRoutes(services.readiness));
  app.route(basePath, widgetScriptRoutes({ kept: services.widgetVersions }));
  app.route(
    basePath,
    paymentRoutes({
      payments,
      streams: settings.streams,
      streamCaps,
      streamSlots,
      clientOf,
      openAmount: settings.openAmount,
      limitCreate,
      limitStatus,
      cors,
      sameOrigin,
    }),
  );
  const apiKey = requireApiKey(settings.apiKey);
  // Lit and the widget's code are loaded when a page first asks (a proxy whose pages never do loads neither).
  const renderFirstScreen = firstScreenRenderer(logger, () => import('./ssr/render.ts')).render;
  app.route(basePath, checkoutRoutes({ checkouts: services.checkouts, requireApiKey: apiKey, limitCreate, cors, sameOrigin, renderFirstScreen }));
  app.route(basePath, payoutRoutes({ payouts: services.payouts, requireApiKey: apiKey }));
  app.route(basePath, merchantRoutes({ feed: services.feed, requireApiKey: apiKey }));
  app.route(basePath, openApiRoutes(basePath));
  app.route(
    basePath,
    webhookRoutes({
      intake: services.intake,
      log: logger,
      clientOf,
      limitPerSource: limiter(limits ? limits.webhook : undefined, clientOf, now),
    }),
  );

  // For a Prometheus scraper bearing PIX_METRICS_TOKEN; outside the base path, so never on the browser's CORS.
  if (settings.metricsToken) app.route('/', metricsRoutes(services.metrics, settings.metricsToken));

  app.notFound((c) => c.json(errorBody('not_found', `Nothing at ${c.req.method} ${c.req.path}.`), 404));
  app.onError((error, c) => respondError(c, error, logger.child({ req_id: c.get('reqId') }), services.outage));
  const runtime: PixRuntime = { ...(Object.fromEntries(RUNTIME_KEYS.map((key) => [key, services[key]])) as RuntimeServices), fastPath };
  return Object.assign(app, { pix: runtime });
}
