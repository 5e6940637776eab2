/**
 * The payments the proxy serves to browsers: issuing, reads and live watching, all turned into the
 * browser's view. One service over its parts (server/domain/payments/), each exposed as it is:
 * - `issuer` (issue.ts): creating a payment with the partner;
 * - `reads` (reads.ts): reads and freshness. Reads are answered from the store; the partner is asked
 *   only when a record is not final and older than the staleness window, concurrent refreshes of one
 *   payment share one upstream call, and across instances sharing a store one instance polls a
 *   payment at a time (a lease); what a read learns is applied there;
 * - `watches` (watches.ts): every watcher of a payment shares one poller, so a thousand open pages
 *   cost the partner service one call at a time; the other instances' results arrive through the
 *   store's change notifications;
 * - `views` (view.ts): the browser's view of a record and its JSON bytes, from one ordered field list;
 * - `unrecorded` (unrecorded.ts): payments the partner created that the store could not take yet.
 * The service itself holds only what joins them: an open-amount payment created and stored, a read
 * answered as the browser's view.
 */
import type { PaymentView } from '../../src/shared/contract.ts';
import type { PartnerClient } from '../partner/client.ts';
import type { PaymentRecord } from '../store/store.ts';
import type { StoreOutage } from '../store/outage.ts';
import { PaymentIssuer, type IssueInput } from './payments/issue.ts';
import { UnrecordedPayments } from './payments/unrecorded.ts';
import { PaymentReads, type PaymentReadsOptions } from './payments/reads.ts';
import { PaymentViews } from './payments/view.ts';
import { PaymentWatches } from './payments/watches.ts';
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
  /** The browser's view of a record and its JSON (payments/view.ts). */
  readonly views: PaymentViews;
  /** Creates a payment with the partner; the caller stores the record (payments/issue.ts). */
  readonly issuer: PaymentIssuer;
  /** The stored records, refreshed from the partner when stale, and what the partner confirms (payments/reads.ts). */
  readonly reads: PaymentReads;
  /** The status streams' shared pollers (payments/watches.ts). */
  readonly watches: PaymentWatches;
  /** Payments the partner created that the store could not take yet (payments/unrecorded.ts). */
  readonly unrecorded: UnrecordedPayments;

  constructor(
    partner: PartnerClient,
    private readonly options: PaymentServiceOptions,
  ) {
    const { store, now, log, numbering, runtime } = options;
    this.views = new PaymentViews(now);
    this.unrecorded = new UnrecordedPayments({ store, log, now, runtime });
    this.issuer = new PaymentIssuer(partner, {
      store,
      expirationSeconds: options.expirationSeconds,
      now,
      log,
      numbering,
      unrecorded: this.unrecorded,
      runtime,
    });
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
      runtime,
    });
    this.watches = new PaymentWatches({ store, now, log, reads: this.reads, views: this.views, finals, outage: options.outage, runtime });
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
    const record = await this.issuer.issue(input, null);
    try {
      await this.options.store.payments.insert(record);
    } catch (error) {
      this.unrecorded.keep(record, error);
      throw error;
    }
    return this.views.view(record);
  }

  /** The browser's view of the payment, refreshed first when stale. */
  async read(reference: string): Promise<PaymentView> {
    return this.views.view(await this.reads.record(reference));
  }

  /**
   * `JSON.stringify(await read(reference))`, the same bytes, made cheaply: the hot path of every
   * polling page (PaymentViews.json). A fresh, final or missing record answers without an extra await.
   */
  readJson(reference: string): Promise<string> | string {
    return this.freshJson(reference) ?? this.reads.record(reference).then((record) => this.views.json(record));
  }

  /**
   * The view's JSON when it can be answered at once: the store holds the payment in memory and its
   * status is final or fresh. Otherwise undefined, having started nothing.
   */
  freshJson(reference: string): string | undefined {
    const stored = this.reads.peekFresh(reference);
    return stored ? this.views.json(stored) : undefined;
  }
}
