/**
 * Payments the partner created that the store could not take: during a 25 s lock on the
 * payments tables, payments were created at the partner, the insert hit its deadline, and no line
 * named any of them. Each is now logged once at error with its reference and our transaction_id (the
 * line an operator reconciles from if this process stops first), its answer kept on its intent
 * (store/intents/) when that table still takes writes, and kept here in memory, recorded as soon as
 * the store takes it: never shown to the customer (who got 503), so it cannot be paid, and the
 * reconciler follows it to its cancellation like any payment not final.
 */
import type { Logger } from '../../log.ts';
import { withoutStoreBudget } from '../../store/deadline.ts';
import type { PaymentRecord, Store } from '../../store/store.ts';
import { REAL_CLOCK, type Clock, type Runtime, type Timer } from '../../runtime/runtime.ts';

export interface UnrecordedPaymentsOptions {
  store: Store;
  log: Logger;
  /** The first retry after a failure, doubled up to `maxRetryMs`. */
  retryMs?: number;
  maxRetryMs?: number;
  /** Intents whose payment is stored are forgotten this long after they were made (the hourly prune). */
  keepIntentsMs?: number;
  now?: () => number;
  /** Time and timers (default the real ones). */
  runtime?: Pick<Runtime, 'clock'> | undefined;
}

/** The hourly prune of intents whose payment is stored. */
const PRUNE_EVERY_MS = 3_600_000;

export class UnrecordedPayments {
  private readonly kept = new Map<string, { record: PaymentRecord; delayMs: number }>();
  private timer: Timer | undefined;
  private pruner: Timer | undefined;
  private stopped = false;
  private readonly retryMs: number;
  private readonly maxRetryMs: number;

  private get clock(): Clock {
    return this.options.runtime?.clock ?? REAL_CLOCK;
  }

  constructor(private readonly options: UnrecordedPaymentsOptions) {
    this.retryMs = options.retryMs ?? 1000;
    this.maxRetryMs = options.maxRetryMs ?? 30_000;
  }

  /** Payments kept in memory now, not yet stored. */
  get size(): number {
    return this.kept.size;
  }

  /** Whether this reference is kept here, not yet stored. */
  has(reference: string): boolean {
    return this.kept.has(reference);
  }

  /**
   * The partner created `record` and the store could not take it (`error`): logged with its reference
   * and transaction_id, its answer kept on its intent, and recorded when the store is back.
   */
  keep(record: PaymentRecord, error: unknown, fields: Record<string, unknown> = {}): void {
    if (this.kept.has(record.reference)) return;
    this.options.log.error(
      {
        reference: record.reference,
        transaction_id: record.transactionId,
        checkout_id: record.checkoutId,
        value: record.valueCents / 100,
        expires_at: new Date(record.expiresAt).toISOString(),
        ...fields,
        err: { message: error instanceof Error ? error.message : String(error) },
      },
      'a payment created at the partner could not be stored: its code was not shown; kept, and recorded when the store is back (pix-checkout unrecorded lists any a stopped process left)',
    );
    this.kept.set(record.reference, { record, delayMs: this.retryMs });
    // Outside the request's budget, which is spent: the intents table may still take it (a lock on the payments tables).
    withoutStoreBudget(() => void this.options.store.intents.keepAnswer(record).catch(() => undefined));
    this.schedule(this.retryMs);
  }

  /** Starts the hourly prune of intents whose payment is stored. */
  start(): void {
    if (this.pruner || this.stopped) return;
    this.pruner = this.clock.setInterval(() => void this.prune(), PRUNE_EVERY_MS);
    this.pruner.unref?.();
  }

  /** Forgets intents older than `keepIntentsMs` (a day) whose payment is stored. */
  async prune(): Promise<number> {
    const now = this.options.now ?? this.clock.now;
    try {
      return await this.options.store.intents.prune(now() - (this.options.keepIntentsMs ?? 24 * 3_600_000));
    } catch {
      // The next hour's prune tries again; an outage is told by the loops.
      return 0;
    }
  }

  /** Tries to store every kept payment now; answers how many are still kept. */
  async attachAll(): Promise<number> {
    this.timer = undefined;
    let next = Number.POSITIVE_INFINITY;
    for (const [reference, entry] of [...this.kept]) {
      try {
        // An insert whose commit was under way when it failed may have landed.
        if (!(await this.options.store.payments.get(reference))) await this.options.store.payments.insert(entry.record);
        this.kept.delete(reference);
        this.options.log.warn(
          { reference, transaction_id: entry.record.transactionId, checkout_id: entry.record.checkoutId },
          'a payment created at the partner while the store could not take it is recorded now (never shown; the reconciler follows it to its cancellation)',
        );
      } catch {
        entry.delayMs = Math.min(entry.delayMs * 2, this.maxRetryMs);
        next = Math.min(next, entry.delayMs);
      }
    }
    if (this.kept.size > 0) this.schedule(Number.isFinite(next) ? next : this.retryMs);
    return this.kept.size;
  }

  /** Stops retrying; what is still kept is named at error, for the operator (pix-checkout unrecorded). */
  stop(): void {
    this.stopped = true;
    this.clock.clearTimer(this.timer);
    this.clock.clearTimer(this.pruner);
    if (this.kept.size === 0) return;
    this.options.log.error(
      { payments: [...this.kept.values()].map(({ record }) => ({ reference: record.reference, transaction_id: record.transactionId })) },
      `stopping with ${this.kept.size} payment(s) created at the partner and not stored: record them (pix-checkout unrecorded)`,
    );
  }

  private schedule(ms: number): void {
    if (this.timer || this.stopped) return;
    this.timer = this.clock.setTimeout(() => withoutStoreBudget(() => void this.attachAll()), ms);
    this.timer.unref?.();
  }
}
