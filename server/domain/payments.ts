/**
 * The payments the proxy serves to browsers: issuing, reads and live watching, all turned into the
 * browser's view. One service over four parts (server/domain/payments/):
 * - issue.ts: creating a payment with the partner;
 * - reads.ts: reads and freshness. Reads are answered from the store; the partner is asked only when
 *   a record is not final and older than the staleness window, concurrent refreshes of one payment
 *   share one upstream call, and across instances sharing a store one instance polls a payment at a
 *   time (a lease); what a read learns is applied there;
 * - watches.ts: every watcher of a payment shares one poller, so a thousand open pages cost the
 *   partner service one call at a time; the other instances' results arrive through the store's
 *   change notifications;
 * - view.ts: the browser's view of a record and its JSON bytes, from one ordered field list.
 */
import type { PaymentView } from '../../src/shared/contract.ts';
import type { PartnerClient } from '../partner/client.ts';
import type { PaymentRecord } from '../store/store.ts';
import type { StoreOutage } from '../store/outage.ts';
import { PaymentIssuer, type IssueInput } from './payments/issue.ts';
import { UnrecordedPayments } from './payments/unrecorded.ts';
import { PaymentReads, type PaymentReadsOptions, type Source } from './payments/reads.ts';
import { PaymentViews } from './payments/view.ts';
import { PaymentWatches, type Listener } from './payments/watches.ts';
import { recordReturn } from './returns.ts';
import { Signal } from './signal.ts';

export type { IssueInput } from './payments/issue.ts';

/** The reads' options (store, clock, log, freshness, outcomes, numbering, health), and how long a code stays payable. */
export interface PaymentServiceOptions extends Omit<PaymentReadsOptions, 'finals'> {
  /** Seconds each QR code stays payable; sent to the partner and stored as `expires_at`. */
  expirationSeconds: number;
  /** Where store failures of the watches (and unrecorded payments' recording) are told: one line per outage (store/outage.ts). */
  outage?: StoreOutage | undefined;
}

export class PaymentService {
  private readonly views: PaymentViews;
  private readonly issuer: PaymentIssuer;
  private readonly reads: PaymentReads;
  private readonly watches: PaymentWatches;
  /** Payments the partner created that the store could not take yet (payments/unrecorded.ts). */
  readonly unrecorded: UnrecordedPayments;

  constructor(
    partner: PartnerClient,
    private readonly options: PaymentServiceOptions,
  ) {
    const { store, now, log, numbering } = options;
    this.views = new PaymentViews(now);
    this.unrecorded = new UnrecordedPayments({ store, log, now });
    this.issuer = new PaymentIssuer(partner, { store, expirationSeconds: options.expirationSeconds, now, log, numbering, unrecorded: this.unrecorded });
    // A read that makes a payment final tells the watches, built after the reads.
    const finals = new Signal<PaymentRecord>();
    this.reads = new PaymentReads(partner, {
      store,
      now,
      log,
      staleAfterMs: options.staleAfterMs,
      watchIntervalMs: options.watchIntervalMs,
      outcomes: options.outcomes,
      numbering,
      health: options.health,
      finals,
    });
    this.watches = new PaymentWatches({ store, now, log, reads: this.reads, views: this.views, finals, outage: options.outage });
  }

  /**
   * Creates a payment with the partner and returns its record, not yet stored: the caller stores it
   * (alone, or attached to its checkout in one transaction).
   */
  issue(input: IssueInput, checkoutId: string | null): Promise<PaymentRecord> {
    return this.issuer.issue(input, checkoutId);
  }

  /**
   * Whether a code may be issued after another at all (domain/numbering/status-numbering.ts): the pending code
   * is verified and nothing contradicted the setting, so a code read as pending is unpaid for sure.
   * Each earlier code must still read so (or as a verified canceled or approved one): per read,
   * `numbering.meaning(status)` is null for a code not verified, which decides nothing.
   */
  statusCodesTrusted(): boolean {
    return this.options.numbering.decides('pending');
  }

  /** Issues an open-amount payment and stores it. */
  async create(input: IssueInput): Promise<PaymentView> {
    const record = await this.issue(input, null);
    try {
      await this.options.store.payments.insert(record);
    } catch (error) {
      this.unrecorded.keep(record, error);
      throw error;
    }
    return this.view(record);
  }

  async read(reference: string): Promise<PaymentView> {
    return this.view(await this.record(reference));
  }

  /**
   * `JSON.stringify(await read(reference))`, the same bytes, made cheaply: the hot path of every
   * polling page (PaymentViews.json). A fresh, final or missing record answers without an extra await.
   */
  readJson(reference: string): Promise<string> | string {
    return this.freshJson(reference) ?? this.record(reference).then((record) => this.views.json(record));
  }

  /**
   * The view's JSON when it can be answered at once: the store holds the payment in memory and its
   * status is final or fresh. Otherwise undefined, having started nothing.
   */
  freshJson(reference: string): string | undefined {
    const stored = this.reads.peekFresh(reference);
    return stored ? this.views.json(stored) : undefined;
  }

  /** `JSON.stringify(this.view(p))`, from the record's cached serialization. */
  viewJson(p: PaymentRecord): string {
    return this.views.json(p);
  }

  /** The browser's view of a record, at the proxy's current time. */
  view(p: PaymentRecord): PaymentView {
    return this.views.view(p);
  }

  /** The stored record, refreshed first when stale (PaymentReads.record). */
  record(reference: string, maxAgeMs?: number, forced = false): Promise<PaymentRecord> {
    return this.reads.record(reference, maxAgeMs, forced);
  }

  /** Asks the partner about a payment now and records what it says (PaymentReads.confirm). */
  confirm(reference: string, explicit: 'approved' | 'canceled' | null = null, shared = false): Promise<PaymentRecord | null> {
    return this.reads.confirm(reference, explicit, shared);
  }

  /** Before a checkout issues another code: whether this one is unpaid for sure (PaymentReads.confirmNotPaid). */
  confirmNotPaid(reference: string): Promise<'pending' | 'canceled' | 'paid' | 'unknown'> {
    return this.reads.confirmNotPaid(reference);
  }

  /**
   * Records a return of a paid payment (domain/returns.ts): `notifiedCents` the total stated, null
   * when unstated. True when it was new.
   */
  recordReturn(payment: PaymentRecord, notifiedCents: number | null, source: 'notification' | 'status'): Promise<boolean> {
    const { store, outcomes, log, now } = this.options;
    return recordReturn({ store, outcomes, log, now }, payment, notifiedCents, source);
  }

  /** A paid payment notified again: a return its code states is recorded (PaymentReads.confirmReturn). */
  confirmReturn(reference: string): Promise<boolean> {
    return this.reads.confirmReturn(reference);
  }

  /** Records a status the partner confirmed (PaymentReads.applyStatus). */
  applyStatus(reference: string, partnerStatus: number, source?: Source): Promise<PaymentRecord | null> {
    return this.reads.applyStatus(reference, partnerStatus, source);
  }

  /** The webhooks' health changed: watches take the new pace now. */
  rescheduleWatches(): void {
    this.watches.rescheduleWatches();
  }

  /** How many listeners watch this payment now (its open streams on this instance). */
  watching(reference: string): number {
    return this.watches.watching(reference);
  }

  /** Calls `listener` with the current view, then on every status change (PaymentWatches.watch). */
  watch(reference: string, listener: Listener): Promise<() => void> {
    return this.watches.watch(reference, listener);
  }

  /** Called when the service closes (shutdown), so open streams can end. */
  onClose(callback: () => void): () => void {
    return this.watches.onClose(callback);
  }

  /** Stops every poller and ends every stream (shutdown). */
  close(): void {
    this.watches.close();
  }
}
