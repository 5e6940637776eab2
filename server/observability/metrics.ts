/**
 * The proxy's metrics (Prometheus, through prom-client), one registry per app: two apps in one
 * process (tests, a merchant mounting the proxy twice) never share or clash. Counters and histograms
 * are moved where things happen (the HTTP middleware, the partner client's facade, the outcome
 * events, the webhook intake, the merchant deliveries); gauges are read when scraped, from what the
 * app already holds (`watch`), so nothing polls in between. Names and labels: docs/metrics.md. Every
 * label takes a bounded set of values: route patterns (never raw paths), operations, outcomes.
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics, type LabelValues, type Metric } from 'prom-client';
import type { DeliveryResult, NotificationReason, NotificationResult } from '../domain/telemetry.ts';

/** Every metric of the proxy is named `pix_checkout_*`. */
export const METRIC_PREFIX = 'pix_checkout_';

/** What the gauges read when scraped; each part is optional (a mounted app may lack one). */
export interface MetricSources {
  /** Status streams open on this instance. */
  openStreams?: () => number;
  /** The merchant deliveries waiting (pending, retries included) and when the oldest of them was recorded (epoch ms, the proxy's clock). */
  deliveryBacklog?: () => Promise<{ pending: number; oldestPendingAt: number | null }>;
  /** Whether the merchant webhook endpoint is disabled (a day of failures, until `deliveries resume`). */
  deliveryEndpointDisabled?: () => boolean;
  /** The proxy's clock, for the backlog's age. */
  now?: () => number;
  /** When the reconciler last finished a pass (performance.now()), null before its first; and the payments it parked. */
  reconciler?: () => { lastPassEnded: number | null; parked: number | null };
  /** The status numbering (domain/numbering/status-numbering.ts): its state and each meaning's verdict. */
  numbering?: () => { state: string; codes: Record<string, string> };
  /** Store operations that failed (store/errors.ts). */
  storeErrors?: () => number | undefined;
  /** Payments the partner created that the store could not take yet, kept in memory (domain/payments/unrecorded.ts). */
  unrecordedPayments?: () => number;
}

const NUMBERING_STATES = ['unverified', 'verified', 'mismatch'] as const;

/** A backlog read serves every gauge of one scrape. */
const BACKLOG_REUSE_MS = 1000;

export class Metrics {
  readonly registry = new Registry();
  private sources: MetricSources = {};
  private readonly created = performance.now();
  private readonly http: RequestHistogram;
  /** Children of the HTTP histogram by route, method and status: labels resolved once, and no key built per request. */
  private readonly httpChildren = new Map<string, Map<string, Map<number, { observe(value: number): void }>>>();
  private readonly partner: Histogram<'operation' | 'outcome'>;
  private readonly paymentsCreated: Counter;
  private readonly paymentsFinalized: Counter<'outcome'>;
  private readonly transfersFinalized: Counter<'outcome'>;
  private readonly timeToPaid: Histogram;
  private readonly notifications: Counter<'result' | 'reason'>;
  private readonly deliveries: Counter<'result'>;
  private readonly outcomes: Counter<'type'>;
  private readonly returns: Counter;
  private backlog: { at: number; read: Promise<{ pending: number; oldestPendingAt: number | null } | null> } | null = null;

  /** `processMetrics`: Node's default process metrics too (CPU, memory, event loop lag, GC), on this registry. */
  constructor(options: { processMetrics?: boolean } = {}) {
    const registers = [this.registry];
    if (options.processMetrics) collectDefaultMetrics({ register: this.registry });
    this.http = new RequestHistogram(
      `${METRIC_PREFIX}http_request_duration_seconds`,
      'HTTP requests answered, by method, route pattern and status, and how long they took',
      [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    );
    this.registry.registerMetric(this.http as unknown as Metric);
    this.partner = new Histogram({
      name: `${METRIC_PREFIX}partner_call_duration_seconds`,
      help: "Calls to the partner service by operation and outcome (ok, or the error's kind), retries included, and how long they took",
      labelNames: ['operation', 'outcome'],
      buckets: [0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers,
    });
    this.paymentsCreated = new Counter({
      name: `${METRIC_PREFIX}payments_created_total`,
      help: 'Payments the partner service created for this instance',
      registers,
    });
    this.paymentsFinalized = new Counter({
      name: `${METRIC_PREFIX}payments_finalized_total`,
      help: 'Payments this instance recorded final, by outcome (paid, canceled), and payments flagged amount_mismatch',
      labelNames: ['outcome'],
      registers,
    });
    this.transfersFinalized = new Counter({
      name: `${METRIC_PREFIX}transfers_finalized_total`,
      help: 'Transfers (payouts, refunds) this instance recorded final, by outcome (approved, canceled, refused)',
      labelNames: ['outcome'],
      registers,
    });
    this.timeToPaid = new Histogram({
      name: `${METRIC_PREFIX}payment_time_to_paid_seconds`,
      help: 'From a payment created to it recorded paid',
      buckets: [5, 15, 30, 60, 120, 300, 600, 1800, 3600, 4 * 3600, 24 * 3600],
      registers,
    });
    this.notifications = new Counter({
      name: `${METRIC_PREFIX}webhook_notifications_total`,
      help: "The partner's notifications: accepted (stored to confirm), unreadable (stored for the operator) or rejected, with the reason",
      labelNames: ['result', 'reason'],
      registers,
    });
    this.deliveries = new Counter({
      name: `${METRIC_PREFIX}merchant_deliveries_total`,
      help: "Attempts to deliver an outcome to the merchant's webhook: delivered, retry (to try again later) or gave_up (failed for good)",
      labelNames: ['result'],
      registers,
    });
    this.outcomes = new Counter({
      name: `${METRIC_PREFIX}outcome_events_total`,
      help: 'Outcome events this instance recorded (the merchant is told of each), by type: payment.paid, payment.disputed, checkout.overpaid...',
      labelNames: ['type'],
      registers,
    });

    this.returns = new Counter({
      name: `${METRIC_PREFIX}payment_returns_total`,
      help: 'Returns of paid payments this instance recorded (a Pix return, MED): each new returned total of a payment (payment.returned)',
      registers,
    });

    // Read when scraped.
    this.gauge(
      'merchant_deliveries_pending',
      "Outcomes waiting to be delivered to the merchant's webhook (all instances': read from the store)",
      [],
      async (g) => {
        const backlog = await this.readBacklog();
        if (backlog) g.set(backlog.pending);
      },
    );
    this.gauge(
      'merchant_deliveries_oldest_pending_age_seconds',
      'How long the oldest outcome waiting for delivery has waited (0 when none waits)',
      [],
      async (g) => {
        const backlog = await this.readBacklog();
        if (!backlog) return;
        const now = this.sources.now?.() ?? Date.now();
        g.set(backlog.oldestPendingAt === null ? 0 : Math.max(0, (now - backlog.oldestPendingAt) / 1000));
      },
    );
    this.gauge(
      'merchant_webhook_endpoint_disabled',
      '1 while the merchant webhook endpoint is disabled (it failed for a whole day; pix-checkout deliveries resume), else 0',
      [],
      (g) => {
        const disabled = this.sources.deliveryEndpointDisabled?.();
        if (disabled !== undefined) g.set(disabled ? 1 : 0);
      },
    );
    this.gauge('reconciler_last_pass_age_seconds', 'Seconds since the reconciler last finished a pass (since the app started, before its first)', [], (g) => {
      const read = this.sources.reconciler?.();
      if (read) g.set((performance.now() - (read.lastPassEnded ?? this.created)) / 1000);
    });
    this.gauge(
      'reconciler_parked_payments',
      'Payments still open long after their automatic cancellation, read again only hourly (as the last pass counted them)',
      [],
      (g) => {
        const parked = this.sources.reconciler?.().parked;
        if (parked !== undefined && parked !== null) g.set(parked);
      },
    );
    this.gauge(
      'unrecorded_payments',
      'Payments the partner created that the store could not take yet, kept in memory and recorded when it is back (above 0 for long: pix-checkout unrecorded)',
      [],
      (g) => {
        const kept = this.sources.unrecordedPayments?.();
        if (kept !== undefined) g.set(kept);
      },
    );
    this.gauge('status_streams_open', 'Live status streams (SSE) open on this instance', [], (g) => {
      const open = this.sources.openStreams?.();
      if (open !== undefined) g.set(open);
    });
    this.gauge(
      'status_numbering_state',
      "The partner's status numbering (PIX_STATUS_CODES): 1 for the state it is in (unverified, verified, mismatch), 0 for the others",
      ['state'],
      (g) => {
        const report = this.sources.numbering?.();
        if (report) for (const state of NUMBERING_STATES) g.set({ state }, report.state === state ? 1 : 0);
      },
    );
    this.gauge(
      'status_code_verified',
      'Whether the configured code of each meaning (pending, approved, canceled) has proved itself: 1 verified, 0 not yet',
      ['meaning'],
      (g) => {
        const report = this.sources.numbering?.();
        if (report) for (const [meaning, verdict] of Object.entries(report.codes)) g.set({ meaning }, verdict === 'verified' ? 1 : 0);
      },
    );
    const storeErrors = (): number | undefined => this.sources.storeErrors?.();
    new Counter({
      name: `${METRIC_PREFIX}store_errors_total`,
      help: 'Store operations that failed (the database could not answer, or answered an error)',
      registers,
      collect(this: Counter) {
        const errors = storeErrors();
        if (errors === undefined) return;
        // The store counts; this counter shows its count.
        this.reset();
        this.inc(errors);
      },
    });
  }

  /** A gauge read when scraped, by `collect`. */
  private gauge<L extends string>(name: string, help: string, labelNames: L[], collect: (gauge: Gauge<L>) => void | Promise<void>): void {
    new Gauge<L>({
      name: `${METRIC_PREFIX}${name}`,
      help,
      labelNames,
      registers: [this.registry],
      collect(this: Gauge<L>) {
        return collect(this);
      },
    });
  }

  /** What the gauges read when scraped (the app's parts, once they are built). */
  watch(sources: MetricSources): void {
    this.sources = { ...this.sources, ...sources };
  }

  /** The Prometheus text of every metric, and its content type. */
  async scrape(): Promise<{ text: string; contentType: string }> {
    return { text: await this.registry.metrics(), contentType: this.registry.contentType };
  }

  /** An HTTP request answered: `route` is the route's pattern (`/api/payments/:reference`), never the path. */
  httpServed(method: string, route: string, status: number, seconds: number): void {
    this.httpRequests(method, route, status).observe(seconds);
  }

  /** The histogram's child for these labels, kept: resolving labels is the costly part of an observation. */
  httpRequests(method: string, route: string, status: number): { observe(value: number): void } {
    let methods = this.httpChildren.get(route);
    if (!methods) this.httpChildren.set(route, (methods = new Map<string, Map<number, { observe(value: number): void }>>()));
    let statuses = methods.get(method);
    if (!statuses) methods.set(method, (statuses = new Map<number, { observe(value: number): void }>()));
    let child = statuses.get(status);
    if (!child) statuses.set(status, (child = this.http.series({ method, route, status: String(status) })));
    return child;
  }

  /** A partner call ended: `outcome` is `ok` or the error's kind. */
  partnerCall(operation: string, outcome: string, seconds: number): void {
    this.partner.labels({ operation, outcome } satisfies LabelValues<'operation' | 'outcome'>).observe(seconds);
    if (operation === 'createPayment' && outcome === 'ok') this.paymentsCreated.inc();
  }

  /** A payment recorded final here (`paid`, `canceled`) or flagged (`amount_mismatch`); `createdToPaidMs` when it was paid and its creation is known. */
  paymentFinalized(outcome: string, createdToPaidMs?: number): void {
    this.paymentsFinalized.inc({ outcome });
    if (createdToPaidMs !== undefined) this.timeToPaid.observe(Math.max(0, createdToPaidMs / 1000));
  }

  /** An outcome event recorded here (its type: one of OutcomeType's); a return counted apart too. */
  outcomeEvent(type: string): void {
    this.outcomes.inc({ type });
    if (type === 'payment.returned') this.returns.inc();
  }

  transferFinalized(outcome: string): void {
    this.transfersFinalized.inc({ outcome });
  }

  /** What became of a partner notification (domain/webhooks/intake.ts). */
  readonly notification = (result: NotificationResult, reason: NotificationReason = ''): void => {
    this.notifications.inc({ result, reason });
  };

  /** What became of a delivery attempt to the merchant's webhook (domain/merchant-notify.ts). */
  delivery(result: DeliveryResult): void {
    this.deliveries.inc({ result });
  }

  /** The delivery backlog, read once for the gauges of one scrape; null when the store could not answer (the gauges keep their last values). */
  private readBacklog(): Promise<{ pending: number; oldestPendingAt: number | null } | null> {
    const read = this.sources.deliveryBacklog;
    if (!read) return Promise.resolve(null);
    const at = performance.now();
    if (this.backlog && at - this.backlog.at < BACKLOG_REUSE_MS) return this.backlog.read;
    const pending = read().catch(() => null);
    this.backlog = { at, read: pending };
    return pending;
  }
}

/**
 * The HTTP histogram, observed on every request (the status read's fast path included) without
 * allocating: each label set's bucket counts in a typed array, found once by the caller and kept.
 * prom-client's own Histogram builds a label hash and two objects per observation. Registered on
 * the app's registry as any metric is; printed in the same format.
 */
/** One printed sample, as prom-client's registry reads it from a metric's `get()`. */
interface PrintedValue {
  metricName: string;
  labels: Record<string, string | number>;
  value: number;
}

class RequestHistogram {
  readonly type = 'histogram';
  private readonly all: { labels: Record<string, string>; counts: Float64Array; sum: number; count: number }[] = [];

  constructor(
    readonly name: string,
    readonly help: string,
    private readonly bounds: readonly number[],
  ) {}

  /** The label set's series (created now if new), observed through the returned function. */
  series(labels: Record<string, string>): { observe(value: number): void } {
    const series = { labels, counts: new Float64Array(this.bounds.length + 1), sum: 0, count: 0 };
    this.all.push(series);
    const bounds = this.bounds;
    return {
      observe(value) {
        let bucket = 0;
        while (bucket < bounds.length && value > bounds[bucket]!) bucket++;
        series.counts[bucket]!++;
        series.sum += value;
        series.count++;
      },
    };
  }

  /** What the registry prints: `_bucket` (cumulative, `le`), `_sum` and `_count` per label set. */
  get(): { name: string; help: string; type: 'histogram'; values: PrintedValue[]; aggregator: 'sum' } {
    const values: PrintedValue[] = [];
    for (const { labels, counts, sum, count } of this.all) {
      let cumulative = 0;
      for (let bucket = 0; bucket <= this.bounds.length; bucket++) {
        cumulative += counts[bucket]!;
        const le = bucket < this.bounds.length ? this.bounds[bucket]! : '+Inf';
        values.push({ metricName: `${this.name}_bucket`, labels: { ...labels, le }, value: cumulative });
      }
      values.push({ metricName: `${this.name}_sum`, labels, value: sum });
      values.push({ metricName: `${this.name}_count`, labels, value: count });
    }
    return { name: this.name, help: this.help, type: 'histogram', values, aggregator: 'sum' };
  }
}
