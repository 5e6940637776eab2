/**
 * createServices(settings, parts): the domain, wired explicitly over its parts (the partner client,
 * the store, the clock, the logger). Each service is built after everything it needs, and told only
 * what it needs; where two services need each other, the one built first is given a Signal that the
 * later one listens to (domain/signal.ts), so no variable is assigned late. Nothing here speaks HTTP
 * (server/app.ts does).
 */
import { STATUS_STREAM } from '../src/shared/wire.ts';
import type { ResolvedSettings } from './config/index.ts';
import { CheckoutService } from './domain/checkouts.ts';
import { DisputeService } from './domain/disputes.ts';
import { MerchantFeed } from './domain/merchant-feed.ts';
import { MerchantNotifier } from './domain/merchant-notify.ts';
import { Outcomes, type OutcomeEvent } from './domain/outcomes.ts';
import { PaymentService } from './domain/payments.ts';
import { PayoutService } from './domain/payouts.ts';
import { PersonalData, PersonalDataCipher } from './domain/personal-data.ts';
import { readinessCheck, type UpstreamTracker } from './domain/readiness.ts';
import { Reconciler } from './domain/reconciler.ts';
import { Signal } from './domain/signal.ts';
import { StatusNumbering } from './domain/numbering/status-numbering.ts';
import { TransferService } from './domain/transfers.ts';
import { WebhookHealth } from './domain/webhooks/health.ts';
import { WebhookIntake, isAuthenticatedIntake } from './domain/webhooks/intake.ts';
import { WebhookProcessor } from './domain/webhooks/processor.ts';
import { WidgetVersions, readWidgetBuild } from './domain/widget-versions.ts';
import { createLogger, type Logger } from './log.ts';
import { Metrics } from './observability/metrics.ts';
import { countOutcomes } from './observability/outcome-metrics.ts';
import { PARTNER_OPERATIONS, deliveryTelemetry, instrumentPartner } from './observability/tracing.ts';
import type { PartnerClient } from './partner/client.ts';
import type { StatusCodes } from './partner/status-codes.ts';
import { storeErrorCount } from './store/errors.ts';
import { allowStoreAtLeast } from './store/deadline.ts';
import { runtimeOf, type Runtime } from './runtime/runtime.ts';
import { StoreOutage } from './store/outage.ts';
import type { PaymentRecord, Store } from './store/store.ts';

/** What the services are built over: the partner client, the store, the clock, the logger and the process's hooks. */
export interface ServiceParts {
  partner: PartnerClient;
  /** Where payments, checkouts and the partner token live (server/store). */
  store: Store;
  now?: (() => number) | undefined;
  logger?: Logger | undefined;
  /** Fed by the partner client's `log` option; lets readiness see upstream failures. */
  upstream?: UpstreamTracker | undefined;
  /** Aborting it ends every status stream and stops the pollers (graceful shutdown). */
  signal?: AbortSignal | undefined;
  /** Called with every outcome event (in-process subscription; also `app.pix.events.on('outcome')`). */
  onOutcome?: ((event: OutcomeEvent) => void) | undefined;
  /** What /ready lists as warnings: not reason to refuse traffic, but for an operator to fix. */
  warnings?: readonly string[] | undefined;
  /** The partner service and account (tokenStoreKey), under which the status numbering's verdict is kept. */
  partnerScope?: string | undefined;
  /**
   * The payer's Pix key of a paid payment, for a partner whose records name it (the spec's do not):
   * with `refundOverpayments`, a checkout's extra payment is refunded to it. Default: none known.
   */
  payerKeyOf?: ((payment: PaymentRecord) => string | null) | undefined;
  /** Where the loops report the store failing and recovering: one line per outage, not per pass (default: one of its own). */
  outage?: StoreOutage | undefined;
  /**
   * The transfer numbering the partner itself states: only the project's own sandbox can (sandbox
   * mode hands in its dialect's). Its codes are taken as verified (a statement of our own code, not a
   * guess), so a fresh install against the sandbox settles its first payout in seconds; it is also
   * the transfer setting when none is given, and a setting that says otherwise is a mismatch.
   */
  statedTransferCodes?: StatusCodes | undefined;
  /**
   * Time, timers, chance and the deliveries' fetch (runtime/runtime.ts), handed to every service:
   * the real ones by default; the simulation's stepped clock and seeded random source make a run
   * replay from its seed. `now`, when given, is what records carry (the signatures' timestamps
   * keep the clock's).
   */
  runtime?: Partial<Runtime> | undefined;
}

/** The domain services and what runs beside the routes: outcomes, the reconciler, the merchant's deliveries. */
export interface Services {
  store: Store;
  partner: PartnerClient;
  now: () => number;
  /** The time, timers and chance every service was given. */
  runtime: Runtime;
  logger: Logger;
  /** Emits `outcome` with an OutcomeEvent for every payment or transfer that becomes final. */
  events: Outcomes['events'];
  payments: PaymentService;
  checkouts: CheckoutService;
  transfers: TransferService;
  /** Payouts and refunds the proxy starts (the same service the CLI uses). */
  payouts: PayoutService;
  /** Whether the partner's status codes mean what the setting says (domain/numbering/status-numbering.ts). */
  numbering: StatusNumbering;
  /** Whether the partner's notifications arrive on time, which sets how often pending payments are asked about. */
  reads: WebhookHealth;
  /** Final payments an authenticated notification contradicts (domain/disputes.ts). */
  disputes: DisputeService;
  processor: WebhookProcessor;
  /** The partner's notifications as they arrive: what is kept, and when the partner is asked to retry. */
  intake: WebhookIntake;
  reconciler: Reconciler;
  notifier: MerchantNotifier | null;
  /** The accounting export and the outcome events' feed (`pix-checkout report`, `pix-checkout listen`). */
  feed: MerchantFeed;
  /** What /health and /ready answer. */
  readiness: ReturnType<typeof readinessCheck>;
  /** Personal data with an end: the periodic retention purge, a data subject's export and erase. */
  personalData: PersonalData;
  /** This app's metrics (its own registry), served at /metrics when PIX_METRICS_TOKEN is set. */
  metrics: Metrics;
  /** Where the store failing and recovering is reported: one line per outage (store/outage.ts). */
  outage: StoreOutage;
  /** The widget's chunks of every version the proxy ran, for pages whose script is of another version (domain/widget-versions.ts). */
  widgetVersions: WidgetVersions;
  /** Processes stored notifications left over, then starts the reconciler and the delivery worker. */
  start: () => void;
  /** Stops them and waits for work in flight (before closing the store). */
  stop: () => Promise<void>;
}

/** The services over `parts`, told `settings` as resolved (resolveSettings: every default filled in server/config). */
export function createServices(settings: ResolvedSettings, parts: ServiceParts): Services {
  const { store } = parts;
  const runtime = runtimeOf(parts.runtime);
  const now = parts.now ?? runtime.clock.now;
  const logger = parts.logger ?? createLogger();
  // Counted and traced from here on: every service below calls the partner through it.
  const metrics = new Metrics({ processMetrics: Boolean(settings.metricsToken) });
  const partner = leavingStoreTime(instrumentPartner(parts.partner, metrics));

  const outage = parts.outage ?? new StoreOutage({ log: logger.child({ component: 'store' }) });
  const outcomes = new Outcomes(logger);
  outcomes.events.on('outcome', countOutcomes(metrics, store));
  if (parts.onOutcome) outcomes.events.on('outcome', parts.onOutcome);
  const numbering = new StatusNumbering(settings.statusCodes, logger.child({ component: 'status-codes' }), store.tokens, parts.partnerScope, {
    transferCodes: settings.transferStatusCodes ?? parts.statedTransferCodes,
    now,
    monotonic: runtime.clock.monotonic,
  });
  if (parts.statedTransferCodes) numbering.stated('transfer', parts.statedTransferCodes, 'the in-process sandbox states its transfer numbering');
  void numbering.load();

  // Partner reads follow the webhooks' health: when its mode changes, the payments' watches take the new pace.
  const paceChanged = new Signal();
  const health = new WebhookHealth(
    settings.partnerReads,
    settings.staleAfterMs,
    now,
    logger.child({ component: 'partner-reads' }),
    () => void paceChanged.emit(),
  );
  const payments = new PaymentService(partner, {
    store,
    expirationSeconds: settings.expirationSeconds,
    now,
    runtime,
    log: logger,
    staleAfterMs: settings.staleAfterMs,
    watchIntervalMs: settings.watchIntervalMs,
    outcomes,
    numbering,
    health,
    outage,
  });
  paceChanged.subscribe(() => payments.watches.rescheduleWatches());

  const transfers = new TransferService({ store, partner, outcomes, now, numbering, log: logger.child({ component: 'transfers' }) });
  const disputes = new DisputeService({ store, now, outcomes, log: logger.child({ component: 'disputes' }) });
  const processor = new WebhookProcessor({
    store,
    payments,
    transfers,
    now,
    runtime,
    log: logger.child({ component: 'webhooks' }),
    concurrency: settings.webhookIntake.concurrency,
    confirmIntervalMs: settings.webhookIntake.confirmIntervalMs,
    retry: settings.webhookIntake,
    intakeAuthenticated: isAuthenticatedIntake(settings.webhooks),
    numbering,
    disputes,
  });
  const intake = new WebhookIntake({
    store,
    now,
    secretPath: settings.webhooks.secretPath,
    sourceIps: settings.webhooks.sourceIps,
    limits: settings.webhookIntake,
    health,
    processor,
    tally: metrics.notification,
    outage,
  });

  // A refund refreshes its checkout first (a payment paid but not yet heard of counts), and a checkout
  // refunds its overpayment: the payouts, built first, ask through this signal; the checkouts answer it.
  const checkoutRefreshes = new Signal<string>();
  const payouts = new PayoutService({
    store,
    partner,
    transfers,
    outcomes,
    numbering,
    now,
    runtime,
    log: logger.child({ component: 'payouts' }),
    refreshCheckout: (id) => checkoutRefreshes.emit(id),
    disputes,
  });
  const cipher = new PersonalDataCipher(settings.dataKey);
  const personalData = new PersonalData({
    store,
    cipher,
    retentionDays: settings.retentionDays,
    now,
    runtime,
    log: logger.child({ component: 'personal-data' }),
  });
  const checkouts = new CheckoutService({
    store,
    cipher,
    payments,
    payouts,
    disputes,
    renewals: settings.renewals,
    defaultCallback: settings.defaultCallback,
    now,
    runtime,
    log: logger.child({ component: 'checkouts' }),
    outcomes,
    refundOverpayments: settings.refundOverpayments,
    payerKeyOf: parts.payerKeyOf,
  });
  checkoutRefreshes.subscribe((id) => checkouts.get(id));

  const reconciler = new Reconciler({
    ...settings.reconcile,
    pendingRetentionMs: settings.webhookIntake.pendingRetentionMs,
    store,
    payments,
    transfers,
    processor,
    expireSendingPayouts: () => payouts.expireSending(),
    now,
    runtime,
    log: logger.child({ component: 'reconciler' }),
    outage,
  });
  const deliveries = settings.merchantWebhook ? deliveryTelemetry(metrics, settings.merchantWebhook.url) : null;
  // Each delivery's span is a child of the request that recorded its outcome (when this instance remembers it).
  if (deliveries) outcomes.events.on('outcome', (event) => deliveries.recorded(event.id));
  const notifier = settings.merchantWebhook
    ? new MerchantNotifier({
        now,
        runtime,
        ...settings.merchantWebhook,
        store,
        log: logger.child({ component: 'merchant-webhook' }),
        telemetry: deliveries ?? undefined,
        outage,
      })
    : null;
  if (notifier) outcomes.onRecorded(() => notifier.wake());
  const feed = new MerchantFeed({
    store,
    now,
    runtime,
    timeZone: settings.timeZone,
    pollMs: settings.feedPollMs,
    keepAliveMs: STATUS_STREAM.keepAliveMs,
  });
  outcomes.onRecorded(() => feed.recorded());
  const readiness = readinessCheck({
    store,
    partner,
    cacheMs: settings.readinessCacheMs,
    deadlineMs: settings.readinessDeadlineMs,
    storeDeadlineMs: settings.readinessStoreDeadlineMs,
    upstream: parts.upstream,
    warnings: parts.warnings,
    numbering,
    reads: health,
    parkedWarning: () => reconciler.parkedWarning(),
    deliveriesWarning: () => notifier?.disabledWarning() ?? null,
    disputes,
    now,
    runtime,
  });

  metrics.watch({
    now,
    // Without a merchant webhook nothing is delivered: its rows wait for none.
    ...(notifier ? { deliveryBacklog: () => store.outbox.backlog(), deliveryEndpointDisabled: () => notifier.endpoint.disabled } : {}),
    reconciler: () => ({ lastPassEnded: reconciler.lastPassEnded, parked: reconciler.parkedPayments() }),
    numbering: () => numbering.report(),
    storeErrors: () => storeErrorCount(store),
    unrecordedPayments: () => payments.unrecorded.size,
  });

  const widgetVersions = new WidgetVersions({ store: store.widgetFiles, now });
  let keepingWidgetBuild = Promise.resolve();
  let started = false;
  const services: Services = {
    store,
    partner,
    now,
    runtime,
    logger,
    events: outcomes.events,
    payments,
    checkouts,
    transfers,
    payouts,
    numbering,
    reads: health,
    disputes,
    processor,
    intake,
    reconciler,
    notifier,
    feed,
    readiness,
    personalData,
    metrics,
    outage,
    widgetVersions,
    start() {
      if (started) return;
      started = true;
      keepingWidgetBuild = keepWidgetBuild(widgetVersions, logger);
      reconciler.start();
      notifier?.start();
      personalData.start();
      payments.unrecorded.start();
    },
    async stop() {
      processor.close();
      await keepingWidgetBuild;
      // One last try to record what the partner created and the store could not take; what is left is named at error.
      if (payments.unrecorded.size > 0) await payments.unrecorded.attachAll();
      payments.unrecorded.stop();
      await Promise.all([reconciler.stop(), notifier?.stop(), processor.idle(), personalData.stop()]);
    },
  };
  parts.signal?.addEventListener(
    'abort',
    () => {
      void services.stop();
      payments.watches.close();
      feed.close();
    },
    { once: true },
  );
  return services;
}

/** The store's time a request keeps after each partner answer, whatever the partner's wait took (store/deadline.ts). */
export const STORE_TIME_AFTER_PARTNER_MS = 1000;

/**
 * The partner client, each answer (or failure) leaving the request's store at least
 * STORE_TIME_AFTER_PARTNER_MS to record what the partner did: a payment it created, a status it confirmed.
 */
function leavingStoreTime(partner: PartnerClient): PartnerClient {
  const wrapped = Object.create(partner) as Record<string, unknown>;
  for (const operation of PARTNER_OPERATIONS) {
    if (typeof partner[operation] !== 'function') continue;
    wrapped[operation] = async (...args: unknown[]) => {
      try {
        return await (partner[operation] as (this: PartnerClient, ...args: unknown[]) => Promise<unknown>).apply(partner, args);
      } finally {
        allowStoreAtLeast(STORE_TIME_AFTER_PARTNER_MS);
      }
    };
  }
  return wrapped as unknown as PartnerClient;
}

/** This build's chunks kept for its pages that another version's instance answers (at start, not awaited: a page asks for them seconds later; stop waits for it). */
function keepWidgetBuild(widgetVersions: WidgetVersions, logger: Logger): Promise<void> {
  const cannot = (error: unknown) =>
    logger.warn(
      { err: error instanceof Error ? { message: error.message } : undefined },
      "the widget's chunks of this version could not be kept in the store: an instance of another version answers 404 to this version's pages for them",
    );
  let build: ReturnType<typeof readWidgetBuild>;
  try {
    build = readWidgetBuild();
  } catch (error) {
    cannot(error);
    return Promise.resolve();
  }
  if (!build) return Promise.resolve();
  const { version } = build;
  return widgetVersions.keep(version, build.files).then(() => logger.debug({ version }, "the widget's chunks of this version kept in the store"), cannot);
}
