/**
 * Live watching: every watcher of a payment on this instance shares one poller, so a thousand open
 * pages cost the partner service one call at a time. A payment made final here (PaymentReads'
 * `finals`) or by another instance sharing the store (its change notifications) reaches the watchers
 * at once, not at their next poll.
 */
import type { PaymentView } from '../../../src/shared/contract.ts';
import { isFinalStatus, type PaymentStatus } from '../../../src/shared/status.ts';
import type { Logger } from '../../log.ts';
import type { StoreOutage } from '../../store/outage.ts';
import { StoreError, type PaymentRecord, type Store, type StoreChange } from '../../store/store.ts';
import type { Signal } from '../signal.ts';
import { pollLease, type PaymentReads } from './reads.ts';
import type { PaymentViews } from './view.ts';
import { REAL_CLOCK, type Clock, type Runtime, type Timer } from '../../runtime/runtime.ts';

export type Listener = (view: PaymentView) => void;

interface Watch {
  listeners: Set<Listener>;
  timer: Timer | undefined;
  last: PaymentStatus | null;
  /** The payment's expiry: near it, it is polled at the fallback pace whatever the webhooks' health. */
  expiresAt: number;
}

export interface PaymentWatchesOptions {
  store: Store;
  now: () => number;
  /** Time and timers (default the real ones). */
  runtime?: Pick<Runtime, 'clock'> | undefined;
  log: Logger;
  reads: PaymentReads;
  views: PaymentViews;
  /** Records made final on this instance, after the store has them. */
  finals: Signal<PaymentRecord>;
  /** Told of each poll the store failed: one line per outage, counting them, not one warning per payment (store/outage.ts). */
  outage?: StoreOutage | undefined;
}

export class PaymentWatches {
  private readonly watches = new Map<string, Watch>();
  /** Ended streams are told through this: shutdown. */
  private readonly closers = new Set<() => void>();
  private closed = false;
  /** Stops listening to the store's and this instance's changes (close). */
  private readonly stopListening: () => void;

  private get clock(): Clock {
    return this.options.runtime?.clock ?? REAL_CLOCK;
  }

  constructor(private readonly options: PaymentWatchesOptions) {
    const stopFinals = options.finals.subscribe((record) => this.publishFinal(record));
    // Several instances: a change another one recorded (its webhook, its poll) reaches the streams held here at once.
    const stopStore = options.store.cluster?.onChange((change) => void this.onStoreChange(change)) ?? (() => {});
    this.stopListening = () => {
      stopFinals();
      stopStore();
    };
  }

  /** How many listeners watch this payment now (its open streams on this instance). */
  watching(reference: string): number {
    return this.watches.get(reference)?.listeners.size ?? 0;
  }

  /** The webhooks' health changed: watches take the new pace now (from the fallback's sooner polls, at once). */
  rescheduleWatches(): void {
    for (const [reference, watch] of this.watches) this.schedule(reference, watch);
  }

  /**
   * Calls `listener` with the current view at once, then on every status change, until the payment
   * is final or the returned function is called. Rejects when the first read fails.
   */
  async watch(reference: string, listener: Listener): Promise<() => void> {
    const record = await this.options.reads.record(reference);
    const first = this.options.views.view(record);
    listener(first);
    if (isFinalStatus(first.status)) return () => {};
    let watch = this.watches.get(reference);
    if (!watch) {
      watch = { listeners: new Set(), timer: undefined, last: first.status, expiresAt: record.expiresAt };
      this.watches.set(reference, watch);
      this.schedule(reference, watch);
    }
    watch.listeners.add(listener);
    const current = watch;
    return () => {
      current.listeners.delete(listener);
      if (current.listeners.size === 0) this.unwatch(reference, current);
    };
  }

  /**
   * Called when the service closes (shutdown), so open streams can end; at once when it already has
   * (a stream whose first read was still in flight at the shutdown ends too, rather than holding it).
   */
  onClose(callback: () => void): () => void {
    if (this.closed) {
      callback();
      return () => {};
    }
    this.closers.add(callback);
    return () => this.closers.delete(callback);
  }

  /** Stops every poller and ends every stream (shutdown). */
  close(): void {
    this.closed = true;
    this.stopListening();
    for (const [reference, watch] of this.watches) this.unwatch(reference, watch);
    for (const callback of [...this.closers]) callback();
    this.closers.clear();
  }

  /** Gives watchers of a payment made final here its final view now, instead of at their next poll. */
  private publishFinal(record: PaymentRecord): void {
    const watch = this.watches.get(record.reference);
    if (watch) this.publish(record.reference, watch, this.options.views.view(record));
  }

  /** Tells a payment's watchers of a new status; a final one ends the watch. */
  private publish(reference: string, watch: Watch, view: PaymentView): void {
    if (view.status !== watch.last) {
      watch.last = view.status;
      for (const listener of watch.listeners) listener(view);
    }
    if (isFinalStatus(view.status)) this.unwatch(reference, watch);
  }

  /**
   * Another instance changed a payment (or, `resync`, changes may have been missed): its watchers
   * here get the stored record's view now, not at their next poll.
   */
  private async onStoreChange(change: StoreChange): Promise<void> {
    const references = change.kind === 'payment' ? [change.reference] : [...this.watches.keys()];
    for (const reference of references) {
      const watch = this.watches.get(reference);
      if (!watch) continue;
      try {
        const record = await this.options.store.payments.get(reference);
        if (record && this.watches.get(reference) === watch) this.publish(reference, watch, this.options.views.view(record));
      } catch (error) {
        // The watch's own poll tries again.
        this.failed(reference, error, 'reading a changed payment failed', 'changed payments not read');
      }
    }
  }

  /**
   * A watch's read failed. The store's failure is the outage's (its lines count them; this one at
   * debug): during one, every watched payment fails each poll. Any other failure (the partner's) at warn.
   */
  private failed(reference: string, error: unknown, message: string, what: string): void {
    const fields = { reference, err: { message: error instanceof Error ? error.message : String(error) } };
    const { outage, log } = this.options;
    if (outage && error instanceof StoreError) {
      outage.failed('payment-watches', error, what);
      log.debug(fields, message);
    } else log.warn(fields, message);
  }

  private unwatch(reference: string, watch: Watch): void {
    this.clock.clearTimer(watch.timer);
    if (this.watches.get(reference) !== watch) return;
    this.watches.delete(reference);
    // No one watches it here any more: another instance's watchers may poll it at once.
    this.options.store.cluster?.release(pollLease(reference)).catch(() => undefined);
  }

  private schedule(reference: string, watch: Watch): void {
    this.clock.clearTimer(watch.timer);
    watch.timer = this.clock.setTimeout(() => void this.poll(reference, watch), this.options.reads.intervalFor(watch.expiresAt, this.options.now()));
    watch.timer.unref?.();
  }

  private async poll(reference: string, watch: Watch): Promise<void> {
    if (this.watches.get(reference) !== watch) return;
    const { reads, views, now } = this.options;
    let view: PaymentView;
    try {
      // Fresh as of half an interval: a browser's read that just refreshed it counts.
      view = views.view(await reads.record(reference, reads.intervalFor(watch.expiresAt, now()) / 2));
    } catch (error) {
      // A failed poll changes nothing the browser sees; the next one may succeed.
      this.failed(reference, error, 'watching a payment failed', 'payment polls failed');
      this.schedule(reference, watch);
      return;
    }
    if (this.watches.get(reference) !== watch) return;
    this.publish(reference, watch, view);
    if (!isFinalStatus(view.status)) this.schedule(reference, watch);
  }
}
