/**
 * createApp(deps): the proxy as a web-standard fetch handler (Hono), so a merchant can serve it alone
 * (server/main.ts) or mount it inside the app it already runs (docs/guides/mounting.md). Middleware,
 * routes and one error handler, over the domain services it builds from its parts; its settings
 * default from config.ts. It holds the partner client and so the token; nothing it answers carries
 * either.
 */
import { Hono } from 'hono';
import { errorBody } from '../src/shared/errors.ts';
import { DEFAULTS, perMinute, type AppSettings } from './config.ts';
import { CheckoutService } from './domain/checkouts.ts';
import { DisputeService } from './domain/disputes.ts';
import { MerchantNotifier } from './domain/merchant-notify.ts';
import { Outcomes, type OutcomeEvent } from './domain/outcomes.ts';
import { PaymentService } from './domain/payments.ts';
import { PayoutService } from './domain/payouts.ts';
import { readinessCheck, type UpstreamTracker } from './domain/readiness.ts';
import { Reconciler } from './domain/reconciler.ts';
import { StatusNumbering } from './domain/status-numbering.ts';
import { TransferService } from './domain/transfers.ts';
import { WebhookHealth } from './domain/webhook-health.ts';
import { WebhookProcessor } from './domain/webhook-processor.ts';
import { requireApiKey } from './http/api-key.ts';
import { browserCors, corsHeaders, originCheck, sameOriginOrAllowed } from './http/cors.ts';
import { fastStatusRead, type FastPath } from './http/fast-read.ts';
import { respondError } from './http/errors.ts';
import { TokenBuckets, addressOf, bucketLimiter, clientAddress, limiter } from './http/rate-limit.ts';
import { requestLines, requestLog } from './http/request-log.ts';
import { SECURITY_HEADERS, collectHeaders } from './http/response-headers.ts';
import { createLogger, type Logger } from './log.ts';
import { DEFAULT_STATUS_CODES } from './partner/status-codes.ts';
import type { PartnerClient } from './partner/client.ts';
import { checkoutRoutes } from './routes/checkouts.ts';
import { HEALTH_PATHS, healthRoutes } from './routes/health.ts';
import { STATUS_READ_HEADERS, paymentRoutes } from './routes/payments.ts';
import { payoutRoutes } from './routes/payouts.ts';
import { maskWebhookSecret, webhookRoutes } from './routes/webhooks.ts';
import { widgetScriptRoutes } from './routes/widget-script.ts';
import type { PaymentRecord, Store } from './store/store.ts';

export { SECURITY_HEADERS } from './http/response-headers.ts';

/** createApp's parts (the partner client, the store, the clock, the logger) and its settings. */
export interface AppDeps extends AppSettings {
  partner: PartnerClient;
  /** Where payments, checkouts and the partner token live (server/store). */
  store: Store;
  now?: () => number;
  logger?: Logger;
  /** Fed by the partner client's `log` option; lets readiness see upstream failures. */
  upstream?: UpstreamTracker;
  /** Aborting it ends every status stream and stops the pollers (graceful shutdown). */
  signal?: AbortSignal;
  /** Called with every outcome event (in-process subscription; also `app.pix.events.on('outcome')`). */
  onOutcome?: (event: OutcomeEvent) => void;
  /** Start the reconciler and the merchant delivery worker now (createProxy does); default false. */
  background?: boolean;
  /** What /ready lists as warnings: not reason to refuse traffic, but for an operator to fix. */
  warnings?: readonly string[];
  /** The partner service and account (tokenStoreKey), under which the status numbering's verdict is kept. */
  partnerScope?: string;
  /**
   * The payer's Pix key of a paid payment, for a partner whose records name it (the spec's do not):
   * with `refundOverpayments`, a checkout's extra payment is refunded to it. Default: none known.
   */
  payerKeyOf?: (payment: PaymentRecord) => string | null;
}

/** What runs beside the routes: outcomes, the reconciler, the merchant's deliveries. */
export interface PixRuntime {
  /** Emits `outcome` with an OutcomeEvent for every payment or transfer that becomes final. */
  events: Outcomes['events'];
  payments: PaymentService;
  transfers: TransferService;
  /** Payouts and refunds the proxy starts (the same service the CLI uses). */
  payouts: PayoutService;
  /** Whether the partner's status codes mean what the setting says (domain/status-numbering.ts). */
  numbering: StatusNumbering;
  /** Whether the partner's notifications arrive on time, which sets how often pending payments are asked about. */
  reads: WebhookHealth;
  /** Final payments an authenticated notification contradicts (domain/disputes.ts). */
  disputes: DisputeService;
  processor: WebhookProcessor;
  reconciler: Reconciler;
  notifier: MerchantNotifier | null;
  /** Processes stored notifications left over, then starts the reconciler and the delivery worker. */
  start(): void;
  /** Stops them and waits for work in flight (before closing the store). */
  stop(): Promise<void>;
  /**
   * The fresh status reads answered on node:http before the app (http/fast-read.ts): give it to
   * `nodeListener(app.fetch, app.pix.fastPath)`. Only an optimisation: the app answers the same.
   */
  fastPath: FastPath;
}

export type PixApp = Hono & { pix: PixRuntime };

export function createApp(deps: AppDeps): PixApp {
  const { store, partner } = deps;
  const basePath = deps.basePath ?? DEFAULTS.basePath;
  const now = deps.now ?? Date.now;
  const logger = deps.logger ?? createLogger();

  // The domain: services over the store and the partner, each told only what it needs.
  const outcomes = new Outcomes(logger);
  const numbering = new StatusNumbering(deps.statusCodes ?? DEFAULT_STATUS_CODES, logger.child({ component: 'status-codes' }), store.tokens, deps.partnerScope);
  void numbering.load();
  if (deps.onOutcome) outcomes.events.on('outcome', deps.onOutcome);
  // Partner reads follow the webhooks' health: told of each notification about our payments (below).
  let repace = () => {};
  const health = new WebhookHealth(
    { ...DEFAULTS.partnerReads, trustedMs: deps.webhookReadIntervalMs ?? DEFAULTS.partnerReads.trustedMs },
    deps.staleAfterMs ?? DEFAULTS.staleAfterMs,
    now,
    logger.child({ component: 'partner-reads' }),
    () => repace(),
  );
  const payments = new PaymentService(partner, {
    store,
    expirationSeconds: deps.expirationSeconds ?? DEFAULTS.expirationSeconds,
    now,
    log: logger,
    staleAfterMs: deps.staleAfterMs,
    watchIntervalMs: deps.watchIntervalMs,
    outcomes,
    numbering,
    health,
  });
  repace = () => payments.rescheduleWatches();
  const transfers = new TransferService({ store, partner, outcomes, now, numbering, log: logger.child({ component: 'transfers' }) });
  const intakeAuthenticated = Boolean(deps.webhooks?.secretPath) || (deps.webhooks?.sourceIps?.length ?? 0) > 0;
  const disputes = new DisputeService({ store, now, outcomes, log: logger.child({ component: 'disputes' }) });
  const processor = new WebhookProcessor({
    store,
    payments,
    transfers,
    now,
    log: logger.child({ component: 'webhooks' }),
    concurrency: DEFAULTS.webhookIntake.concurrency,
    confirmIntervalMs: DEFAULTS.webhookIntake.confirmIntervalMs,
    intakeAuthenticated,
    numbering,
    disputes,
  });
  // The checkout service and the payouts read each other lazily: a refund asks the checkout's status first, a checkout lists its refunds.
  let checkouts: CheckoutService | undefined;
  const payouts = new PayoutService({
    store,
    partner,
    transfers,
    outcomes,
    numbering,
    now,
    log: logger.child({ component: 'payouts' }),
    refreshCheckout: (id) => checkouts!.get(id),
    disputes,
  });
  const reconciler = new Reconciler({
    ...deps.reconcile,
    store,
    payments,
    transfers,
    processor,
    expireSendingPayouts: () => payouts.expireSending(),
    now,
    log: logger.child({ component: 'reconciler' }),
  });
  const notifier = deps.merchantWebhook
    ? new MerchantNotifier({ now, ...deps.merchantWebhook, store, log: logger.child({ component: 'merchant-webhook' }) })
    : null;
  if (notifier) outcomes.onRecorded(() => notifier.wake());
  checkouts = new CheckoutService({
    store,
    payments,
    payouts,
    disputes,
    renewals: deps.renewals ?? DEFAULTS.renewals,
    defaultCallback: deps.defaultCallback,
    now,
    log: logger.child({ component: 'checkouts' }),
    outcomes,
    refundOverpayments: deps.refundOverpayments ?? DEFAULTS.refundOverpayments,
    payerKeyOf: deps.payerKeyOf,
  });

  let started = false;
  const runtime: PixRuntime = {
    events: outcomes.events,
    payments,
    transfers,
    payouts,
    numbering,
    reads: health,
    disputes,
    processor,
    reconciler,
    notifier,
    // Set below, once the rules it shares with the routes are built.
    fastPath: () => false,
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
  deps.signal?.addEventListener(
    'abort',
    () => {
      void runtime.stop();
      payments.close();
    },
    { once: true },
  );

  // HTTP: what every request passes through, then each room's routes.
  const app = new Hono();
  const lines = requestLines(logger, maskWebhookSecret);
  app.use('*', requestLog(lines));
  // Strict headers on the proxy's own answers, gathered per request in one precomputed object.
  const strict = collectHeaders(SECURITY_HEADERS);
  for (const path of [`${basePath}/*`, HEALTH_PATHS.health, HEALTH_PATHS.ready]) app.use(path, strict);

  const allowed = originCheck(deps.allowedOrigins ?? []);
  const cors = browserCors(allowed);
  const sameOrigin = sameOriginOrAllowed(allowed, deps.publicUrl ? new URL(deps.publicUrl).origin : undefined);
  const limits =
    deps.rateLimits === undefined
      ? { create: perMinute(DEFAULTS.rateLimitCreatePerMinute), status: perMinute(DEFAULTS.rateLimitStatusPerMinute) }
      : deps.rateLimits;
  const trustedProxies = deps.trustedProxies ?? DEFAULTS.trustedProxies;
  const clientOf = clientAddress(trustedProxies);
  const limitCreate = limiter(limits ? limits.create : undefined, clientOf, now);
  // The status reads' buckets, shared by the route's limiter and the fast path.
  const statusBuckets = limits ? new TokenBuckets(limits.status, now) : undefined;
  const limitStatus = bucketLimiter(statusBuckets, clientOf);
  runtime.fastPath = fastStatusRead({
    basePath,
    freshJson: (reference) => payments.freshJson(reference),
    buckets: statusBuckets,
    clientOf: addressOf(trustedProxies),
    corsFor: corsHeaders(allowed),
    routeHeaders: STATUS_READ_HEADERS,
    lines,
  });

  app.route(
    '/',
    healthRoutes(
      readinessCheck({
        store,
        partner,
        upstream: deps.upstream,
        warnings: deps.warnings,
        numbering,
        reads: health,
        parkedWarning: () => reconciler.parkedWarning(),
        disputes,
      }),
    ),
  );
  /** A notification reached the intake: about a payment we issued, it tells the webhooks' health. */
  const noteArrival = async (reference: string) => {
    const known = store.peekPayment?.(reference) ?? (await store.getPayment(reference).catch(() => null));
    if (known) health.notified(reference);
  };
  app.route(basePath, widgetScriptRoutes());
  app.route(
    basePath,
    paymentRoutes({
      payments,
      streams: deps.streams ?? DEFAULTS.streams,
      streamCaps: { perClient: deps.streamsPerClient ?? DEFAULTS.streamsPerClient, perPayment: deps.streamsPerPayment ?? DEFAULTS.streamsPerPayment },
      clientOf,
      openAmount: deps.openAmount ?? false,
      limitCreate,
      limitStatus,
      cors,
      sameOrigin,
    }),
  );
  const apiKey = requireApiKey(deps.apiKey);
  app.route(basePath, checkoutRoutes({ checkouts, requireApiKey: apiKey, limitCreate, cors, sameOrigin }));
  app.route(basePath, payoutRoutes({ payouts, requireApiKey: apiKey }));
  app.route(
    basePath,
    webhookRoutes({
      store,
      now,
      log: logger,
      secretPath: deps.webhooks?.secretPath,
      sourceIps: deps.webhooks?.sourceIps,
      clientOf,
      // After the write, not awaited: the answer does not wait for the partner.
      // A notification's words are evidence only when the intake is authenticated (a secret path or the partner's addresses).
      received: (id, raw, event) => {
        void noteArrival(event.reference);
        void processor.process(id, raw, { event, authenticated: intakeAuthenticated });
      },
      limitPerSource: limiter(limits ? (limits.webhook ?? perMinute(DEFAULTS.webhookIntake.perSourcePerMinute)) : undefined, clientOf, now),
    }),
  );

  app.notFound((c) => c.json(errorBody('not_found', `Nothing at ${c.req.method} ${c.req.path}.`), 404));
  app.onError((error, c) => respondError(c, error, logger.child({ req_id: c.get('reqId') })));
  if (deps.background) runtime.start();
  return Object.assign(app, { pix: runtime });
}
