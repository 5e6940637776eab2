/**
 * The background reconciler: a missed or lost webhook heals by itself. Every pass it
 *  1. takes up stored notifications not processed yet (the partner was down, the process died);
 *  2. asks the partner about every payment that is not final and is due: every `everyMs`, every
 *     `nearMs` within `nearWindowMs` of its expiry and of its
 *     automatic cancellation (1 h after expiry), until a final status is known;
 *  3. asks about every transfer it follows that is not final, every `everyMs` from its last read (checked
 *     or updated), the longest overdue first.
 * "Due" is measured from the record's last read (its last confirmed status, or its last check: every
 * read records one, even a read whose meaning is not known, so an undecidable payment does not hold
 * its place at the head of the line), which lives in the store, so a restart neither loses nor
 * repeats the schedule; the longest overdue are asked first. A payment still open `parkAfterCancelMs`
 * after its automatic cancellation cannot be decided from the partner's answers: it is parked (read
 * again only every `parkedEveryMs`) and reported (/ready's warnings, a log line), so thousands of
 * them never hide a newer payment whose webhook was lost. Bound: an outcome the partner knows is recorded
 * within `everyMs + tickMs` (65 s by default) once the partner answers, whatever happened to its
 * webhook. Time comes from `now` (injected), so tests move it instead of waiting. Every instance
 * sharing a store runs passes; leases keep two from asking about one record at once, and the store's
 * claims keep two from processing one notification.
 */
import { LIMITS } from '../../src/shared/limits.ts';
import type { Logger } from '../log.ts';
import type { StoreOutage } from '../store/outage.ts';
import { StoreError, type PaymentRecord, type ReadSchedule, type Store } from '../store/store.ts';
import type { PaymentService } from './payments.ts';
import type { TransferService } from './transfers.ts';
import type { WebhookProcessor } from './webhooks/processor.ts';
import { runPool } from './worker-pool.ts';
import { REAL_CLOCK, type Clock, type Runtime, type Timer } from '../runtime/runtime.ts';

/** The partner cancels an unpaid payment this long after it expires (spec 3). */
export const CANCEL_AFTER_EXPIRY_MS = LIMITS.cancelAfterExpirationSeconds * 1000;

/** The reconciler's timing, resolved by the composition. */
export interface ReconcileTiming {
  /** Time between passes (real time). */
  tickMs: number;
  /** How often an open payment or transfer is asked about; near its expiry and cancellation (within nearWindowMs), every nearMs. */
  everyMs: number;
  nearMs: number;
  nearWindowMs: number;
  /** Partner calls in flight, and records looked at per pass, at most. */
  concurrency: number;
  batch: number;
  /** A payment open this long after its automatic cancellation is parked, read again every parkedEveryMs. */
  parkAfterCancelMs: number;
  parkedEveryMs: number;
}

export interface ReconcilerOptions extends ReconcileTiming {
  /** A notification the partner has not confirmed in this long is marked `expired`. */
  pendingRetentionMs: number;
  store: Store;
  payments: PaymentService;
  transfers: TransferService;
  processor: WebhookProcessor;
  /** Payouts cut off mid-call by a crash become `unknown` on each pass (PayoutService.expireSending). */
  expireSendingPayouts?: () => Promise<number>;
  now: () => number;
  /** Time and timers (default the real ones). */
  runtime?: Pick<Runtime, 'clock'> | undefined;
  log: Logger;
  /** Told of each pass the store failed or served (one line per outage, not one per pass: store/outage.ts). */
  outage?: StoreOutage | undefined;
}

export interface ReconcileReport {
  checked: number;
  final: number;
  failed: number;
}

export class Reconciler {
  private timer: Timer | undefined;
  private current: Promise<ReconcileReport> | null = null;
  private stopped = true;
  readonly everyMs: number;
  readonly nearMs: number;
  readonly nearWindowMs: number;
  readonly tickMs: number;

  private readonly concurrency: number;
  private readonly batch: number;
  /** When a payment is read again: the store's due-payment query follows it. */
  readonly schedule: ReadSchedule;
  /** Parked payments, as last counted (null before the first pass); and when that was last logged. */
  private parked: number | null = null;
  private parkedLogged: { count: number; at: number } | null = null;
  /** When the last pass ended (this.clock.monotonic()), null before the first: the proxy's metrics show its age. */
  lastPassEnded: number | null = null;

  private get clock(): Clock {
    return this.options.runtime?.clock ?? REAL_CLOCK;
  }

  constructor(private readonly options: ReconcilerOptions) {
    ({ everyMs: this.everyMs, nearMs: this.nearMs, nearWindowMs: this.nearWindowMs, tickMs: this.tickMs } = options);
    ({ concurrency: this.concurrency, batch: this.batch } = options);
    this.schedule = {
      everyMs: this.everyMs,
      nearMs: this.nearMs,
      nearWindowMs: this.nearWindowMs,
      cancelAfterMs: CANCEL_AFTER_EXPIRY_MS,
      parkAfterMs: CANCEL_AFTER_EXPIRY_MS + options.parkAfterCancelMs,
      parkedEveryMs: options.parkedEveryMs,
    };
  }

  /** The longest a missed outcome stays unknown once the partner answers: `everyMs + tickMs`. */
  get boundMs(): number {
    return this.everyMs + this.tickMs;
  }

  /**
   * When a payment is next asked about, from its last read (`updatedAt` unless a later check is
   * known). The stores' `payments.due` query is this rule in SQL.
   */
  dueAt(p: Pick<PaymentRecord, 'updatedAt' | 'expiresAt'>, now: number, lastReadAt = p.updatedAt): number {
    const s = this.schedule;
    if (p.expiresAt + s.parkAfterMs < now) return lastReadAt + s.parkedEveryMs;
    const near = Math.abs(now - p.expiresAt) <= s.nearWindowMs || Math.abs(now - (p.expiresAt + s.cancelAfterMs)) <= s.nearWindowMs;
    return lastReadAt + (near ? Math.min(s.nearMs, s.everyMs) : s.everyMs);
  }

  /** Payments still open long after their cancellation (parked), as the last pass counted them; null before the first. */
  parkedPayments(): number | null {
    return this.parked;
  }

  /** /ready's warning about parked payments, or null when there are none. */
  parkedWarning(): string | null {
    if (!this.parked) return null;
    const after = Math.round((this.schedule.parkAfterMs - this.schedule.cancelAfterMs) / 60_000);
    return (
      `${this.parked} payment${this.parked === 1 ? ' is' : 's are'} still open ${after} min past ${this.parked === 1 ? 'its' : 'their'} automatic cancellation: ` +
      `the partner's answers about ${this.parked === 1 ? 'it' : 'them'} cannot be decided; read again hourly (see the log)`
    );
  }

  /** Starts the passes: one now, then every `tickMs`. */
  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.loop(0);
  }

  /** Stops the passes and waits for the one in flight. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.clock.clearTimer(this.timer);
    await this.current?.catch(() => undefined);
  }

  /** Whether a pass is running now (what a shutdown waits for). */
  passRunning(): boolean {
    return this.current !== null;
  }

  /** One pass (shared with a pass already running). */
  runOnce(): Promise<ReconcileReport> {
    this.current ??= this.pass().finally(() => (this.current = null));
    return this.current;
  }

  private loop(delay: number): void {
    this.timer = this.clock.setTimeout(() => void this.tick(), delay);
    this.timer.unref?.();
  }

  private async tick(): Promise<void> {
    const { outage } = this.options;
    const started = outage?.started();
    try {
      await this.runOnce();
      outage?.recovered('reconciler', started);
    } catch (error) {
      if (outage && error instanceof StoreError) outage.failed('reconciler', error);
      else this.options.log.error({ err: { message: (error as Error).message } }, 'reconciler pass failed');
    }
    if (!this.stopped) this.loop(this.tickMs);
  }

  private async pass(): Promise<ReconcileReport> {
    const { store, payments, transfers, processor, now, log } = this.options;
    const batch = this.batch;
    const report: ReconcileReport = { checked: 0, final: 0, failed: 0 };
    // Notifications the partner never confirmed stop waiting (the payments they named are still followed below).
    const expired = await store.webhookEvents.expireUnprocessed(now() - this.options.pendingRetentionMs, now());
    if (expired > 0) log.warn({ expired }, 'notifications never confirmed by the partner were set aside');
    await processor.drain();
    await this.options.expireSendingPayouts?.();

    const at = now();
    await this.countParked(at);
    const duePayments = await store.payments.due(at, batch, this.schedule);
    const dueTransfers = await store.transfers.due(at, batch, this.everyMs);
    const checked: string[] = [];
    const checkedTransfers: string[] = [];
    const tasks: (() => Promise<boolean>)[] = [
      // Shared with the other instances: a payment another one is asking about now is left to it.
      // Read or not (the partner failed), it goes to the back of the line: the next read is a full interval away.
      ...duePayments.map((p) => async () => {
        try {
          return (await payments.reads.confirm(p.reference, null, true))?.final ?? false;
        } finally {
          checked.push(p.reference);
        }
      }),
      ...dueTransfers.map((t) => async () => {
        try {
          return (await this.mayConfirm(`transfer:${t.reference}`)) ? ((await transfers.confirm(t.reference)) ?? false) : false;
        } finally {
          checkedTransfers.push(t.reference);
        }
      }),
    ];
    const run = async (task: () => Promise<boolean>) => {
      report.checked++;
      try {
        if (await task()) report.final++;
      } catch (error) {
        report.failed++;
        log.warn({ err: { message: (error as Error).message } }, 'reconciler: the partner did not answer; asking again next pass');
      }
    };
    await runPool(tasks, this.concurrency, run, () => this.stoppedDuringPass());
    await store.payments.markChecked(checked, now());
    await store.transfers.markChecked(checkedTransfers, now());
    if (report.checked > 0) log.info(report, 'reconciler pass');
    this.lastPassEnded = this.clock.monotonic();
    return report;
  }

  /** Counts the parked payments; logs them when their number changes, and hourly while there are some. */
  private async countParked(at: number): Promise<void> {
    const { store, log } = this.options;
    const count = await store.payments.countOpenExpiredBefore(at - this.schedule.parkAfterMs);
    this.parked = count;
    const logged = this.parkedLogged;
    if (count === 0) {
      if (logged && logged.count > 0) log.info({ parked: 0 }, 'no payment is parked any more');
      this.parkedLogged = { count: 0, at };
      return;
    }
    if (logged && logged.count === count && at - logged.at < this.schedule.parkedEveryMs) return;
    this.parkedLogged = { count, at };
    log.warn(
      { parked: count, read_every_s: this.schedule.parkedEveryMs / 1000 },
      "payments still open long after their automatic cancellation: the partner's answers about them cannot be decided (see the status codes in /ready); they are read again hourly",
    );
  }

  /** Across instances, one reconciles a transfer at a time (a lease for one pass's length); alone, always. */
  private async mayConfirm(lease: string): Promise<boolean> {
    return (await this.options.store.cluster?.lease(lease, this.tickMs)) ?? true;
  }

  private stoppedDuringPass(): boolean {
    // A pass started by runOnce() (tests, CLI) runs to its end even when the loop is not started.
    return this.stopped && this.timer !== undefined;
  }
}
