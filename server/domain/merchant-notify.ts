/**
 * Passing outcomes on to the merchant's backend (PIX_MERCHANT_WEBHOOK_URL). Each outcome event is a
 * row of the store's outbox, written in the same transaction as the status change, unique per event
 * id. This worker POSTs due rows signed as Standard Webhooks says (`webhook-id` = the event id,
 * `webhook-timestamp`, `webhook-signature`: signature.ts), with the deprecated Pix-Checkout-Signature
 * beside; a 2xx is delivered, anything else is retried on its policy (server/config/tunables.ts)
 * (30 s, 2 min, 10 min, 1 h, then every 6 h, ±10%; a receiver's later Retry-After wins) until
 * `giveUpAfterMs` (3 days) after the outcome, when a last attempt is made; then it is marked failed
 * (`pix-checkout deliveries replay` sends it again). Every attempt is recorded.
 *
 * The endpoint: one that has answered nothing but failures for `disableAfterMs` (a whole day) is
 * disabled (an error line, a /ready warning, a metric): nothing more is sent to it, what is pending
 * waits, until `pix-checkout deliveries resume` (endpoint-state.ts). Kept in the store, so a restart
 * and every instance agree.
 *
 * Delivery is at least once: a crash after the merchant answered but before the answer was recorded
 * sends it again, with the same event id, so the merchant's receiver must deduplicate on it. Several
 * instances share the outbox: each claims the rows it sends (store.outbox.claimDue), so none is sent
 * twice at once, and the claims of an instance that died run out after the store's claim time, when
 * another sends them. A claim covers one batch of a few rows per worker, and each row's claim is
 * renewed right before it is sent: a row whose claim ran out while it waited here (and another
 * instance took it) is not sent. An answer recorded late never undoes another instance's delivery
 * (store.outbox.recordAttempt). A shutdown (stop) starts nothing more and lets the deliveries in
 * flight end by themselves: one the receiver accepted is recorded delivered here, never sent again.
 */
import type { Logger } from '../log.ts';
import { webhookHeaders, webhookSecrets, type WebhookSecrets } from './signature.ts';
import { EndpointState, retryAfterMs } from './endpoint-state.ts';
import type { StoreOutage } from '../store/outage.ts';
import { StoreError, type OutboxEntry, type Store } from '../store/store.ts';
import type { DeliveryTelemetry } from './telemetry.ts';
import { runPool } from './worker-pool.ts';
import { CRYPTO_RANDOM, REAL_CLOCK, REAL_RUNTIME, type Clock, type Runtime, type Timer } from '../runtime/runtime.ts';

/** Rows claimed at a time per worker in flight: a claim covers what can be sent soon, and each row's is renewed before it is sent. */
const CLAIMED_PER_WORKER = 4;

/** The delivery and retry policy, as the composition resolves it. */
export interface DeliveryPolicy {
  /** Deadline of one attempt. */
  timeoutMs: number;
  /** The delay after each failed attempt, ±10% jitter; the last repeats. */
  retryScheduleMs: readonly number[];
  /** The last attempt comes this long after the outcome; a failure then gives it up. */
  giveUpAfterMs: number;
  /** An endpoint failing without a success for this long is disabled (until `deliveries resume`). */
  disableAfterMs: number;
  /** A receiver's Retry-After is read as at most this. */
  maxRetryAfterMs: number;
  /** How often due deliveries are looked for (real time). */
  pollMs: number;
  /** Deliveries in flight at most. */
  concurrency: number;
}

/**
 * When the next attempt comes after `attempts` failed ones, the last at `at`: the schedule's delay
 * (jittered by `random` in [0, 1)), or a later Retry-After; never past the last attempt, at
 * `createdAt + giveUpAfterMs`; null once that last attempt has failed (given up).
 */
export function nextAttemptAt(
  policy: Pick<DeliveryPolicy, 'retryScheduleMs' | 'giveUpAfterMs' | 'maxRetryAfterMs'>,
  entry: { createdAt: number; attempts: number },
  at: number,
  random: number,
  retryAfter: number | null = null,
): number | null {
  const lastAt = entry.createdAt + policy.giveUpAfterMs;
  if (at >= lastAt) return null;
  const schedule = policy.retryScheduleMs;
  const step = schedule[Math.min(Math.max(entry.attempts - 1, 0), schedule.length - 1)] ?? 60_000;
  const delay = Math.max(step * (0.9 + 0.2 * random), Math.min(retryAfter ?? 0, policy.maxRetryAfterMs));
  return Math.min(Math.round(at + delay), lastAt);
}

export interface MerchantNotifierOptions extends DeliveryPolicy {
  store: Store;
  url: string;
  /** PIX_MERCHANT_WEBHOOK_SECRET: one or several (rotation: each signs every delivery). */
  secret: WebhookSecrets;
  /** The proxy's clock, for scheduling (injected in tests). */
  now: () => number;
  /** Time, timers, the jitter's chance and the deliveries' fetch (default the real ones). */
  runtime?: Runtime | undefined;
  /** The wall clock for the signature's timestamp (the merchant compares it with its own); default the runtime's clock. */
  wallNow?: () => number;
  log: Logger;
  /** The deliveries' jitter in [0, 1) (default the runtime's random source). */
  random?: () => number;
  /** Each attempt in a span whose trace context the POST carries, and counted (the proxy's metrics and traces). */
  telemetry?: DeliveryTelemetry | undefined;
  /** Told of each pass the store failed or served (one line per outage, not one per pass: store/outage.ts). */
  outage?: StoreOutage | undefined;
}

export class MerchantNotifier {
  private readonly inFlight = new Set<number>();
  private timer: Timer | undefined;
  private current: Promise<number> | null = null;
  private again = false;
  private stopped = true;
  private readonly closing = new AbortController();

  private readonly policy: DeliveryPolicy;
  private readonly secrets: string[];
  /** Whether the endpoint is failing, since when, and whether it is disabled (kept in the store). */
  readonly endpoint: EndpointState;

  private get clock(): Clock {
    return this.options.runtime?.clock ?? REAL_CLOCK;
  }

  constructor(private readonly options: MerchantNotifierOptions) {
    this.policy = options;
    this.secrets = webhookSecrets(options.secret);
    if (this.secrets.length === 0) throw new TypeError('MerchantNotifier: a secret is needed');
    this.endpoint = new EndpointState(options.store.tokens, options.url, options.disableAfterMs, options.log);
  }

  /** The /ready warning while the endpoint is disabled, else null. */
  disabledWarning(): string | null {
    return this.endpoint.warning();
  }

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.schedule(0);
  }

  /**
   * Stops claiming and starting deliveries, and waits for those in flight: never aborted, since the
   * receiver may already have accepted one; each ends by its answer or its own deadline (`timeoutMs`)
   * and is recorded. What was claimed and not started is released, due again for another instance.
   */
  async stop(): Promise<void> {
    this.stopped = true;
    this.clock.clearTimer(this.timer);
    this.closing.abort();
    await this.current?.catch(() => undefined);
  }

  /** Deliveries sent and not yet answered and recorded (what a shutdown waits for). */
  deliveriesInFlight(): number {
    return this.inFlight.size;
  }

  /** A new outcome was recorded: look for due deliveries now. */
  wake(): void {
    if (this.stopped) return;
    if (this.current) this.again = true;
    else this.schedule(0);
  }

  /** Delivers what is due now; resolves to how many attempts were made. */
  runOnce(): Promise<number> {
    if (this.current) {
      this.again = true;
      return this.current;
    }
    this.current = this.pass().finally(() => {
      this.current = null;
      if (this.again && !this.stopped) {
        this.again = false;
        this.schedule(0);
      }
    });
    return this.current;
  }

  private schedule(delay: number): void {
    this.clock.clearTimer(this.timer);
    const timer = this.clock.setTimeout(() => void this.tick(timer), delay);
    timer.unref?.();
    this.timer = timer;
  }

  private async tick(timer: Timer): Promise<void> {
    const { outage } = this.options;
    const started = outage?.started();
    try {
      await this.runOnce();
      outage?.recovered('merchant-deliveries', started);
    } catch (error) {
      if (outage && error instanceof StoreError) outage.failed('merchant-deliveries', error);
      else this.options.log.error({ err: { message: (error as Error).message } }, 'merchant delivery pass failed');
    }
    // A wake() during the pass has already set a sooner timer: keep it rather than the poll.
    if (!this.stopped && this.timer === timer) this.schedule(this.policy.pollMs);
  }

  private async pass(): Promise<number> {
    let attempts = 0;
    // Disabled (here, by another instance, or undone by `deliveries resume`): read at every pass.
    if (await this.endpoint.refresh()) return attempts;
    for (;;) {
      if (this.closing.signal.aborted || this.endpoint.disabled) return attempts;
      // Claimed: another instance's worker does not see these until they are attempted or released.
      const batch = this.policy.concurrency * CLAIMED_PER_WORKER;
      const claimed = await this.options.store.outbox.claimDue(this.options.now(), batch);
      const due = claimed.filter((e) => !this.inFlight.has(e.id));
      if (due.length === 0) return attempts;
      const deliver = async (entry: OutboxEntry) => {
        await this.deliver(entry);
        attempts++;
      };
      const next = await runPool(due, this.policy.concurrency, deliver, () => this.closing.signal.aborted);
      // Shutting down: what was claimed and not started is due again now, for another instance.
      if (next < due.length) await this.release(due.slice(next));
      // Whatever failed is scheduled later; loop only while more was due than one batch.
      if (claimed.length < batch) return attempts;
    }
  }

  private async release(entries: readonly OutboxEntry[]): Promise<void> {
    const ids = entries.map((e) => e.id);
    try {
      // One claim per batch: what another worker took meanwhile is left to it.
      await this.options.store.outbox.release(ids, this.options.now(), entries[0]?.claim ?? null);
    } catch (error) {
      // The claim runs out by itself: at worst the delivery waits the claim time.
      this.options.log.warn({ deliveries: ids, err: { message: (error as Error).message } }, 'could not release claimed deliveries');
    }
  }

  private async deliver(entry: OutboxEntry): Promise<void> {
    const { store, url, now, log, telemetry } = this.options;
    // Disabled by an attempt of this batch: the rest waits, claimed for the claim time, then due again.
    if (this.endpoint.disabled) return;
    // Held for one more claim time from now, or not at all: its claim ran out while it waited here and another worker has it.
    if (entry.claim && !(await store.outbox.renew(entry.id, entry.claim, now()))) {
      log.debug({ delivery: entry.id, event_id: entry.eventId }, 'a claimed delivery was taken up by another worker before it was sent here');
      return;
    }
    this.inFlight.add(entry.id);
    const started = this.clock.monotonic();
    const at = now();
    let status: number | null = null;
    let error: string | null = null;
    let retryAfter: number | null = null;
    try {
      const headers: Record<string, string> = {
        'content-type': 'application/json',
        'user-agent': 'pix-checkout-webhooks',
        ...webhookHeaders(entry.eventId, entry.body, this.secrets, (this.options.wallNow ?? this.clock.now)()),
      };
      const post = () =>
        (this.options.runtime?.fetch ?? REAL_RUNTIME.fetch)(url, {
          method: 'POST',
          headers,
          body: entry.body,
          redirect: 'manual',
          // Its own deadline only: a shutdown lets it finish (stop()).
          signal: AbortSignal.timeout(this.policy.timeoutMs),
        });
      // The telemetry adds the trace context to `headers` before it posts.
      const response = await (telemetry ? telemetry.send({ eventId: entry.eventId, type: entry.type, attempt: entry.attempts + 1 }, headers, post) : post());
      status = response.status;
      await response.body?.cancel().catch(() => undefined);
      if (status < 200 || status >= 300) {
        error = `HTTP ${status}`;
        retryAfter = retryAfterMs(response.headers.get('retry-after'), (this.options.wallNow ?? this.clock.now)());
      }
    } catch (err) {
      error = (err as Error).name === 'TimeoutError' ? 'timeout' : 'connection_failed';
    }
    try {
      const durationMs = Math.round(this.clock.monotonic() - started);
      if (error === null) {
        await store.outbox.recordAttempt(
          entry.id,
          { at, status, error, durationMs },
          { state: 'delivered', nextAttemptAt: at, lastError: null, deliveredAt: at },
          entry.claim ?? null,
        );
        telemetry?.attempted('delivered');
        await this.endpoint.succeeded();
        return;
      }
      const n = entry.attempts + 1;
      const next = nextAttemptAt(
        this.policy,
        { createdAt: entry.createdAt, attempts: n },
        at,
        (this.options.random ?? (this.options.runtime?.random ?? CRYPTO_RANDOM).fraction)(),
        retryAfter,
      );
      const giveUp = next === null;
      const taken = await store.outbox.recordAttempt(
        entry.id,
        { at, status, error, durationMs },
        { state: giveUp ? 'failed' : 'pending', nextAttemptAt: next ?? at, lastError: error, deliveredAt: null },
        entry.claim ?? null,
      );
      telemetry?.attempted(taken && giveUp ? 'gave_up' : 'retry');
      // Not taken: delivered meanwhile, or another worker holds it now (its claim ran out here); that one decides what comes next.
      log.warn(
        {
          delivery: entry.id,
          event_id: entry.eventId,
          attempt: n,
          error,
          ...(retryAfter !== null ? { retry_after_s: Math.round(retryAfter / 1000) } : {}),
          ...(taken ? { gave_up: giveUp, ...(next !== null ? { next_attempt_at: new Date(next).toISOString() } : {}) } : { superseded: true }),
        },
        'merchant webhook not delivered',
      );
      await this.endpoint.failed(at, error);
    } finally {
      this.inFlight.delete(entry.id);
    }
  }
}
