/**
 * Whether the partner's notifications can be relied on right now, and so how often the proxy asks
 * the partner about a payment itself. Webhooks are the primary channel; reads fill in when one is
 * late. The partner publishes no rate limit, and a thousand customers paying at once must not cost it
 * hundreds of reads a second.
 *
 * - `webhooks` mode: notifications are arriving (one about a payment this proxy issued within
 *   `recentMs`) and keeping up (fewer than `evidence` outcomes in `recentMs` that this proxy's own
 *   reads found first and whose notification then came more than `lateMs` later, or never within
 *   `graceMs`). A pending payment's stored status is then served for `trustedMs` (10 s) before the
 *   partner is asked again, and a watched payment is polled as often.
 * - `polling` mode, otherwise (also at start, until a notification arrives): every `fallbackMs` (2 s,
 *   PIX_STALE_AFTER_MS / PIX_WATCH_INTERVAL_MS), as before.
 * - In either mode, a payment within `nearExpiryMs` of its expiry, or of the partner's automatic
 *   cancellation an hour later, is asked about at the fallback pace: a payment made in the last
 *   seconds is shown paid, not expired.
 *
 * What a browser is told never depends on the mode: only how fresh the stored status is. Per instance:
 * each instance judges the notifications it receives and the outcomes its own reads find.
 */
import { LIMITS } from '../../../src/shared/limits.ts';
import type { Logger } from '../../log.ts';

/** The partner cancels an unpaid payment this long after it expires (spec 3). */
const CANCEL_AFTER_EXPIRY_MS = LIMITS.cancelAfterExpirationSeconds * 1000;

export type ReadMode = 'webhooks' | 'polling';

export interface WebhookHealthOptions {
  /** How fresh a pending status must be while notifications are healthy (ms). */
  trustedMs: number;
  /** A notification about one of our payments within this long counts as "arriving" (ms). */
  recentMs: number;
  /** An outcome our read found first, whose notification has not come after this long, was missed (ms). */
  graceMs: number;
  /** A notification this much later than our read that found its outcome was late (ms). */
  lateMs: number;
  /** Missed or late outcomes within `recentMs` that make the proxy poll at the fallback pace again. */
  evidence: number;
  /** Within this long of its expiry a payment is asked about at the fallback pace (ms). */
  nearExpiryMs: number;
}

export interface ReadsReport {
  mode: ReadMode;
  /** How fresh a pending status must be now, away from its expiry (ms). */
  fresh_ms: number;
  /** Seconds since the last notification about one of our payments; null: none yet. */
  last_notification_s: number | null;
  /** Outcomes within the recent window that our reads found first and whose notification was late or never came. */
  late: number;
  missed: number;
  reason: string;
}

export class WebhookHealth {
  private lastNotification = Number.NEGATIVE_INFINITY;
  /** Outcomes this instance's reads found first, waiting for their notification: reference -> when. */
  private readonly foundFirst = new Map<string, number>();
  /** When each late or missed outcome was judged so, oldest first. */
  private readonly lateAt: number[] = [];
  private readonly missedAt: number[] = [];
  private current: ReadMode = 'polling';
  /** Cached between evaluations (the hot read path asks on every read). */
  private evaluatedAt = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly options: WebhookHealthOptions,
    /** The fallback pace: the configured staleness window (PIX_STALE_AFTER_MS). */
    private readonly fallbackMs: number,
    private readonly now: () => number,
    private readonly log: Logger,
    /** Told when the mode changes (watches take the new pace at once). */
    private readonly onChange: (mode: ReadMode) => void = () => {},
  ) {}

  /** References notified lately (a read that finds their outcome after the notification was not first). */
  private readonly notifiedAt = new Map<string, number>();

  /** A notification about one of our payments arrived at the intake. */
  notified(reference: string): void {
    const now = this.now();
    this.lastNotification = now;
    this.notifiedAt.delete(reference);
    this.notifiedAt.set(reference, now);
    for (const [ref, at] of this.notifiedAt) {
      if (now - at < this.options.graceMs && this.notifiedAt.size <= 10_000) break;
      this.notifiedAt.delete(ref);
    }
    const found = this.foundFirst.get(reference);
    if (found !== undefined) {
      this.foundFirst.delete(reference);
      if (now - found > this.options.lateMs) this.lateAt.push(now);
    }
    this.evaluate(true);
  }

  /** This instance's own read of the partner found a payment's outcome before any notification told of it. */
  foundByRead(reference: string): void {
    // Its notification came first (the read was its confirmation, or ran meanwhile): not evidence.
    const notified = this.notifiedAt.get(reference);
    if (notified !== undefined && this.now() - notified < this.options.graceMs) return;
    // Bounded: a partner that never notifies must not grow this without end (the oldest are judged missed first).
    if (this.foundFirst.size >= 10_000) this.judge(Number.POSITIVE_INFINITY);
    this.foundFirst.set(reference, this.now());
  }

  /**
   * Whether a pending payment expiring at `expiresAt` may be read at the trusted pace now (webhooks
   * mode, away from its expiry); otherwise the fallback pace. Cheap: the hot read path asks.
   */
  trusted(expiresAt: number, now: number): boolean {
    if (now - this.evaluatedAt >= 1000) this.evaluate(false);
    const near = this.options.nearExpiryMs;
    // Near its expiry, and near the partner's automatic cancellation an hour later, at the fallback pace.
    return this.current === 'webhooks' && Math.abs(expiresAt - now) > near && Math.abs(expiresAt + CANCEL_AFTER_EXPIRY_MS - now) > near;
  }

  /** The trusted pace (ms). */
  get trustedMs(): number {
    return this.options.trustedMs;
  }

  mode(): ReadMode {
    this.evaluate(false);
    return this.current;
  }

  report(): ReadsReport {
    const mode = this.mode();
    const now = this.now();
    return {
      mode,
      fresh_ms: mode === 'webhooks' ? Math.max(this.fallbackMs, this.options.trustedMs) : this.fallbackMs,
      last_notification_s: Number.isFinite(this.lastNotification) ? Math.round((now - this.lastNotification) / 1000) : null,
      late: this.lateAt.length,
      missed: this.missedAt.length,
      reason: this.reason(now),
    };
  }

  private reason(now: number): string {
    const { recentMs, evidence } = this.options;
    if (!Number.isFinite(this.lastNotification)) return 'no notification from the partner yet';
    if (now - this.lastNotification > recentMs) return `no notification from the partner in the last ${Math.round(recentMs / 60_000)} min`;
    if (this.lateAt.length + this.missedAt.length >= evidence) {
      return `${this.missedAt.length} outcomes never notified and ${this.lateAt.length} notified late in the last ${Math.round(recentMs / 60_000)} min`;
    }
    return 'notifications are arriving on time';
  }

  /** Outcomes found first whose notification has not come within the grace time are missed. */
  private judge(now: number): void {
    for (const [reference, at] of this.foundFirst) {
      if (now - at < this.options.graceMs) break; // insertion order: the rest are younger
      this.foundFirst.delete(reference);
      this.missedAt.push(Math.min(now, at + this.options.graceMs));
    }
  }

  private evaluate(force: boolean): void {
    const now = this.now();
    if (!force && now - this.evaluatedAt < 1000) return;
    this.evaluatedAt = now;
    this.judge(now);
    const { recentMs, evidence } = this.options;
    for (const list of [this.lateAt, this.missedAt]) while (list.length > 0 && now - list[0]! > recentMs) list.shift();
    const arriving = now - this.lastNotification <= recentMs;
    const next: ReadMode = arriving && this.lateAt.length + this.missedAt.length < evidence ? 'webhooks' : 'polling';
    if (next === this.current) return;
    this.current = next;
    const fields = {
      reads: next,
      fresh_ms: next === 'webhooks' ? Math.max(this.fallbackMs, this.options.trustedMs) : this.fallbackMs,
      reason: this.reason(now),
    };
    if (next === 'webhooks') this.log.info(fields, 'partner notifications are arriving: pending payments read from the store, the partner asked less often');
    else this.log.warn(fields, 'partner notifications look late or missing: the partner asked about pending payments at the fallback pace');
    this.onChange(next);
  }
}
