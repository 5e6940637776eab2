/**
 * The background reconciler: a missed or lost webhook heals by itself. Every pass it
 *  1. takes up stored notifications not processed yet (the partner was down, the process died);
 *  2. asks the partner about every payment that is not final and is due: every `everyMs` (default
 *     60 s), every `nearMs` (default 10 s) within `nearWindowMs` (5 min) of its expiry and of its
 *     automatic cancellation (1 h after expiry), until a final status is known;
 *  3. asks about every transfer it follows that is not final, every `everyMs`.
 * "Due" is measured from the record's last confirmation (`updatedAt`), which lives in the store, so
 * a restart neither loses nor repeats the schedule. Bound: an outcome the partner knows is recorded
 * within `everyMs + tickMs` (65 s by default) once the partner answers, whatever happened to its
 * webhook. Time comes from `now` (injected), so tests move it instead of waiting.
 */
import { LIMITS } from '../../src/shared/limits.ts';
import type { Logger } from '../log.ts';
import type { PaymentService } from './payments.ts';
import type { PaymentRecord, Store, TransferRecord } from '../store/store.ts';
import type { PartnerClient } from '../partner/client.ts';
import { applyTransferStatus, type WebhookProcessor } from './webhook-processor.ts';

/** The partner cancels an unpaid payment this long after it expires (spec 3). */
export const CANCEL_AFTER_EXPIRY_MS = LIMITS.cancelAfterExpirationSeconds * 1000;

export interface ReconcilerOptions {
  store: Store;
  partner: PartnerClient;
  payments: PaymentService;
  processor: WebhookProcessor;
  now: () => number;
  log: Logger;
  onTransferFinal?: (transfer: TransferRecord) => void;
  /** Time between passes (real time, default 5000 ms). */
  tickMs?: number;
  /** How often an open payment or transfer is asked about (default 60 s). */
  everyMs?: number;
  /** How often near its expiry or cancellation (default 10 s). */
  nearMs?: number;
  /** How close counts as near (default 5 min). */
  nearWindowMs?: number;
  /** Partner calls in flight at most (default 8). */
  concurrency?: number;
  /** Records looked at per pass at most (default 5000). */
  batch?: number;
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

  constructor(private readonly options: ReconcilerOptions) {
    this.everyMs = options.everyMs ?? 60_000;
    this.nearMs = options.nearMs ?? 10_000;
    this.nearWindowMs = options.nearWindowMs ?? 5 * 60_000;
    this.tickMs = options.tickMs ?? 5000;
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
    this.timer = setTimeout(async () => {
      try {
        await this.runOnce();
      } catch (error) {
        this.options.log.error({ err: { message: (error as Error).message } }, 'reconciler pass failed');
      }
      if (!this.stopped) this.loop(this.tickMs);
    }, delay);
    this.timer.unref?.();
  }

  private async pass(): Promise<ReconcileReport> {
    const { store, partner, payments, processor, now, log } = this.options;
    const batch = this.options.batch ?? 5000;
    const report: ReconcileReport = { checked: 0, final: 0, failed: 0 };
    await processor.drain();

    const at = now();
    const duePayments = (await store.nonFinalPayments(batch)).filter((p) => this.dueAt(p, at) <= at);
    const dueTransfers = (await store.transfers.nonFinal(batch)).filter((t) => t.updatedAt + this.everyMs <= at);
    const tasks: (() => Promise<boolean>)[] = [
      ...duePayments.map((p) => async () => (await payments.confirm(p.reference))?.final ?? false),
      ...dueTransfers.map((t) => async () => {
        const upstream = await partner.checkTransfer(t.reference);
        return applyTransferStatus({ store, now, log, onTransferFinal: this.options.onTransferFinal }, t.reference, upstream.status, t.valueCents);
      }),
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
    await Promise.all(Array.from({ length: Math.min(this.options.concurrency ?? 8, tasks.length) }, worker));
    if (report.checked > 0) log.info(report, 'reconciler pass');
    return report;
  }

  private stoppedDuringPass(): boolean {
    // A pass started by runOnce() (tests, CLI) runs to its end even when the loop is not started.
    return this.stopped && this.timer !== undefined;
  }
}

