/**
 * The background reconciler: a missed or lost webhook heals by itself. Every pass it
 *  1. takes up stored notifications not processed yet (the partner was down, the process died);
 *  2. asks the partner about every payment that is not final and is due: every `everyMs`, every
 *     `nearMs` within `nearWindowMs` of its expiry and of its
 *     automatic cancellation (1 h after expiry), until a final status is known;
 *  3. asks about every transfer it follows that is not final, every `everyMs`.
 * "Due" is measured from the record's last confirmation (`updatedAt`), which lives in the store, so
 * a restart neither loses nor repeats the schedule. Bound: an outcome the partner knows is recorded
 * within `everyMs + tickMs` (65 s by default) once the partner answers, whatever happened to its
 * webhook. Time comes from `now` (injected), so tests move it instead of waiting. Every instance
 * sharing a store runs passes; leases keep two from asking about one record at once, and the store's
 * claims keep two from processing one notification.
 */
import { LIMITS } from '../../src/shared/limits.ts';
import { DEFAULTS, type ReconcileSettings } from '../config.ts';
import type { Logger } from '../log.ts';
import type { PaymentRecord, Store } from '../store/store.ts';
import type { PaymentService } from './payments.ts';
import type { TransferService } from './transfers.ts';
import type { WebhookProcessor } from './webhook-processor.ts';

/** The partner cancels an unpaid payment this long after it expires (spec 3). */
export const CANCEL_AFTER_EXPIRY_MS = LIMITS.cancelAfterExpirationSeconds * 1000;

export interface ReconcilerOptions extends Partial<ReconcileSettings> {
  store: Store;
  payments: PaymentService;
  transfers: TransferService;
  processor: WebhookProcessor;
  /** Payouts cut off mid-call by a crash become `unknown` on each pass (PayoutService.expireSending). */
  expireSendingPayouts?: () => Promise<number>;
  now: () => number;
  log: Logger;
}

export interface ReconcileReport {
  checked: number;
  final: number;
  failed: number;
}

export class Reconciler {
  private timer: ReturnType<typeof setTimeout> | undefined;
  private current: Promise<ReconcileReport> | null = null;
  private stopped = true;
  readonly everyMs: number;
  readonly nearMs: number;
  readonly nearWindowMs: number;
  readonly tickMs: number;

  private readonly concurrency: number;
  private readonly batch: number;

  constructor(private readonly options: ReconcilerOptions) {
    this.everyMs = options.everyMs ?? DEFAULTS.reconcile.everyMs;
    this.nearMs = options.nearMs ?? DEFAULTS.reconcile.nearMs;
    this.nearWindowMs = options.nearWindowMs ?? DEFAULTS.reconcile.nearWindowMs;
    this.tickMs = options.tickMs ?? DEFAULTS.reconcile.tickMs;
    this.concurrency = options.concurrency ?? DEFAULTS.reconcile.concurrency;
    this.batch = options.batch ?? DEFAULTS.reconcile.batch;
  }

  /** The longest a missed outcome stays unknown once the partner answers: `everyMs + tickMs`. */
  get boundMs(): number {
    return this.everyMs + this.tickMs;
  }

  /** When a payment is next asked about. */
  dueAt(p: Pick<PaymentRecord, 'updatedAt' | 'expiresAt'>, now: number): number {
    const near = Math.abs(now - p.expiresAt) <= this.nearWindowMs || Math.abs(now - (p.expiresAt + CANCEL_AFTER_EXPIRY_MS)) <= this.nearWindowMs;
    return p.updatedAt + (near ? Math.min(this.nearMs, this.everyMs) : this.everyMs);
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
    clearTimeout(this.timer);
    await this.current?.catch(() => undefined);
  }

  /** One pass (shared with a pass already running). */
  runOnce(): Promise<ReconcileReport> {
    this.current ??= this.pass().finally(() => (this.current = null));
    return this.current;
  }

  private loop(delay: number): void {
    this.timer = setTimeout(() => void this.tick(), delay);
    this.timer.unref?.();
  }

  private async tick(): Promise<void> {
    try {
      await this.runOnce();
    } catch (error) {
      this.options.log.error({ err: { message: (error as Error).message } }, 'reconciler pass failed');
    }
    if (!this.stopped) this.loop(this.tickMs);
  }

  private async pass(): Promise<ReconcileReport> {
    const { store, payments, transfers, processor, now, log } = this.options;
    const batch = this.batch;
    const report: ReconcileReport = { checked: 0, final: 0, failed: 0 };
    // Notifications the partner never confirmed stop waiting (the payments they named are still followed below).
    const expired = await store.webhookEvents.expireUnprocessed(now() - DEFAULTS.webhookIntake.pendingRetentionMs, now());
    if (expired > 0) log.warn({ expired }, 'notifications never confirmed by the partner were set aside');
    await processor.drain();
    await this.options.expireSendingPayouts?.();

    const at = now();
    const duePayments = (await store.nonFinalPayments(batch)).filter((p) => this.dueAt(p, at) <= at);
    const dueTransfers = (await store.transfers.nonFinal(batch)).filter((t) => t.updatedAt + this.everyMs <= at);
    const tasks: (() => Promise<boolean>)[] = [
      // Shared with the other instances: a payment another one is asking about now is left to it.
      ...duePayments.map((p) => async () => (await payments.confirm(p.reference, null, true))?.final ?? false),
      ...dueTransfers.map((t) => async () => ((await this.mayConfirm(`transfer:${t.reference}`)) ? ((await transfers.confirm(t.reference)) ?? false) : false)),
    ];
    let next = 0;
    const worker = async () => {
      while (next < tasks.length && !this.stoppedDuringPass()) {
        const task = tasks[next++]!;
        report.checked++;
        try {
          if (await task()) report.final++;
        } catch (error) {
          report.failed++;
          log.warn({ err: { message: (error as Error).message } }, 'reconciler: the partner did not answer; asking again next pass');
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(this.concurrency, tasks.length) }, worker));
    if (report.checked > 0) log.info(report, 'reconciler pass');
    return report;
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
