/**
 * Reads and freshness: a payment's stored record, refreshed from the partner when it is not final and
 * older than the staleness window; concurrent refreshes of one payment share one upstream call, and
 * across instances sharing a store one instance asks about a payment at a time (its poll lease). What
 * a read learns is applied here, as far as the status numbering lets it be trusted.
 */
import type { Logger } from '../../log.ts';
import type { PartnerClient, PaymentDetails } from '../../partner/client.ts';
import type { PartnerStatus } from '../../partner/read.ts';
import { PARTNER_STATUS, isFinalPartnerStatus } from '../../partner/wire.ts';
import type { PaymentRecord, Store } from '../../store/store.ts';
import { DomainError } from '../errors.ts';
import { amountMismatchOutcome, paymentOutcome, type Outcomes } from '../outcomes.ts';
import { isReturnable, recordReturn } from '../returns.ts';
import type { Signal } from '../signal.ts';
import type { StatusNumbering } from '../numbering/status-numbering.ts';
import type { WebhookHealth } from '../webhooks/health.ts';
import { REAL_CLOCK, type Clock, type Runtime } from '../../runtime/runtime.ts';

/** Who learned a status: a read of our own (a browser's, a poll, the reconciler), or a notification's confirmation. */
export type Source = 'read' | 'notification';

export interface PaymentReadsOptions {
  store: Store;
  now: () => number;
  log: Logger;
  /** A stored, unfinished status younger than this is served without asking the partner. */
  staleAfterMs: number;
  /** How often a watched, unfinished payment is asked about (and so how long a poll lease lasts). */
  watchIntervalMs: number;
  outcomes: Outcomes;
  numbering: StatusNumbering;
  health?: WebhookHealth | undefined;
  /** Time, timers and chance (default the real ones). */
  runtime?: Runtime | undefined;
  /** Told of each record that became final here, after the store has it (the watches tell their streams). */
  finals: Signal<PaymentRecord>;
}

/** The lease of whoever asks the partner about a payment now, across instances. */
export const pollLease = (reference: string) => `poll:${reference}`;

export class PaymentReads {
  private readonly refreshing = new Map<string, Promise<PaymentRecord>>();
  /** Across instances: reads waiting to learn whether this instance holds a payment's poll lease. */
  private readonly deciding = new Map<string, Promise<PaymentRecord>>();

  constructor(
    private readonly partner: PartnerClient,
    private readonly options: PaymentReadsOptions,
  ) {}

  /**
   * The stored record, refreshed from the partner first when it is unfinished and older than
   * `maxAgeMs`; `forced` (before a new code is issued) asks even when another instance is polling it.
   * Only payments this proxy issued are served: others are not found.
   */
  async record(reference: string, maxAgeMs?: number, forced = false): Promise<PaymentRecord> {
    const stored = await this.options.store.payments.get(reference);
    if (!stored) throw new DomainError('not_found', 'No such payment.');
    const now = this.options.now();
    if (stored.final || now - stored.updatedAt < (maxAgeMs ?? this.freshFor(stored.expiresAt, now))) return stored;
    return this.refresh(stored, forced);
  }

  /** The record the store holds in memory, when it is final or fresh enough to serve without I/O. */
  peekFresh(reference: string): PaymentRecord | undefined {
    const stored = this.options.store.payments.peek?.(reference);
    if (!stored) return undefined;
    const now = this.options.now();
    return stored.final || now - stored.updatedAt < this.freshFor(stored.expiresAt, now) ? stored : undefined;
  }

  /**
   * How fresh a pending payment's stored status must be to be served: the staleness window, or
   * while the partner's notifications arrive on time and away from its expiry, the longer trusted one.
   */
  freshFor(expiresAt: number, now: number): number {
    const { health, staleAfterMs } = this.options;
    return health?.trusted(expiresAt, now) ? Math.max(staleAfterMs, health.trustedMs) : staleAfterMs;
  }

  /** How often a watched payment is polled: as freshFor, from the watch interval. */
  intervalFor(expiresAt: number, now: number): number {
    const { health, watchIntervalMs } = this.options;
    return health?.trusted(expiresAt, now) ? Math.max(watchIntervalMs, health.trustedMs) : watchIntervalMs;
  }

  /**
   * Asks the partner, once for all concurrent callers, and stores what it says. Across instances
   * (a shared store), unless `forced`, one instance asks about a payment at a time: it holds the
   * payment's poll lease, renewed by each of its polls and lasting two watch intervals (so it does not
   * lapse between them, and another instance takes over within two intervals of its holder dying);
   * the others answer what the store has and learn the result from the store's change notifications
   * (PaymentWatches.onStoreChange).
   */
  private refresh(stored: PaymentRecord, forced = false, source: Source = 'read'): Promise<PaymentRecord> {
    const { reference } = stored;
    const asking = this.refreshing.get(reference);
    if (asking) return asking;
    const cluster = this.options.store.cluster;
    if (forced || !cluster) return this.ask(stored, source);
    // Concurrent reads share one lease decision as they share one call: one lease write per refresh.
    let deciding = this.deciding.get(reference);
    if (!deciding) {
      deciding = cluster
        .lease(pollLease(reference), 2 * this.intervalFor(stored.expiresAt, this.options.now()))
        .then(async (held) =>
          // Not ours to ask: the database's row, past this instance's copy (the holder may have just
          // recorded an answer whose change notification has not arrived here yet).
          held
            ? (this.refreshing.get(reference) ?? this.ask(stored, source))
            : ((await this.options.store.payments.get(reference, { uncached: true })) ?? stored),
        )
        .finally(() => this.deciding.delete(reference));
      this.deciding.set(reference, deciding);
    }
    return deciding;
  }

  /** Asks the partner, once for all concurrent callers, and stores what it says. */
  private ask(stored: PaymentRecord, source: Source): Promise<PaymentRecord> {
    const { reference } = stored;
    const pending = (async () => {
      const askedAt = this.options.now();
      const upstream = await this.partner.getPayment(reference);
      if (stored.favoured == null && upstream.favoured !== null)
        await rememberFavoured(this.options.store, reference, upstream.favoured, this.options.runtime?.clock ?? REAL_CLOCK);
      return (await this.applyDetails(stored, upstream, null, source, askedAt)) ?? stored;
    })().finally(() => this.refreshing.delete(reference));
    this.refreshing.set(reference, pending);
    return pending;
  }

  /**
   * Asks the partner about a payment now (a webhook's confirmation; the reconciler, with `shared`:
   * then, across instances, only if no other instance is asking about it), sharing a call already in
   * flight, and records what it says. Null when the proxy does not know the payment.
   */
  async confirm(reference: string, explicit: 'approved' | 'canceled' | null = null, shared = false): Promise<PaymentRecord | null> {
    const stored = await this.options.store.payments.get(reference);
    if (!stored) return null;
    if (stored.final) return stored;
    // The reconciler's (shared) ask is a read of our own; the others confirm a notification.
    const source: Source = shared ? 'read' : 'notification';
    if (explicit === null) return this.refresh(stored, !shared, source);
    // A notification's words are checked against the partner's own answer (never trusted alone).
    const askedAt = this.options.now();
    const upstream = await this.partner.getPayment(reference);
    return (await this.applyDetails(stored, upstream, explicit, source, askedAt)) ?? stored;
  }

  /**
   * A paid payment the partner notified again: when the setting lists a `returned` code,
   * the partner is asked, and a code that means returned (verified so by this very read: a paid
   * payment's other code can only be a return) records the return (domain/returns.ts; its amount not
   * stated by a code: the whole payment). True when one was recorded.
   */
  async confirmReturn(reference: string): Promise<boolean> {
    const { store, numbering, now } = this.options;
    const stored = await store.payments.get(reference);
    if (!stored || !isReturnable(stored) || numbering.codes.returned.length === 0) return false;
    const askedAt = now();
    const upstream = await this.partner.getPayment(reference);
    await numbering.observe(upstream.status, { reference, expiresAt: stored.expiresAt, createdAt: stored.createdAt, now: now(), askedAt, paid: true });
    if (numbering.meaning(upstream.status) !== 'returned') return false;
    return this.recordReturn(stored, null, 'status');
  }

  /**
   * Records a return of a paid payment (domain/returns.ts): `notifiedCents` the total stated, null
   * when unstated. True when it was new.
   */
  recordReturn(payment: PaymentRecord, notifiedCents: number | null, source: 'notification' | 'status'): Promise<boolean> {
    const { store, outcomes, log, now } = this.options;
    return recordReturn({ store, outcomes, log, now }, payment, notifiedCents, source);
  }

  /**
   * Before a checkout issues another code: asks the partner about this payment now (whoever else is
   * polling it) and records what it says. `paid` or `canceled` once recorded final; `pending` only
   * when the answer reads as pending (or expired) for sure (StatusNumbering.meaning); `unknown` for anything else
   * (a status whose meaning is not known, none at all, another value than ours, an unreadable answer,
   * the partner down): then the code may have been paid, and no new one may be issued.
   */
  async confirmNotPaid(reference: string): Promise<'pending' | 'canceled' | 'paid' | 'unknown'> {
    const { store, numbering, log } = this.options;
    const stored = await store.payments.get(reference);
    if (!stored) return 'unknown';
    if (stored.final) return finalState(stored);
    let upstream: PaymentDetails;
    const askedAt = this.options.now();
    try {
      upstream = await this.partner.getPayment(reference);
    } catch (error) {
      log.warn({ reference, err: { message: error instanceof Error ? error.message : String(error) } }, 'could not confirm that an earlier code was not paid');
      return 'unknown';
    }
    if (stored.favoured == null && upstream.favoured !== null)
      await rememberFavoured(store, reference, upstream.favoured, this.options.runtime?.clock ?? REAL_CLOCK);
    const record = (await this.applyDetails(stored, upstream, null, 'read', askedAt)) ?? stored;
    if (record.final) return finalState(record);
    if (amountDiffers(stored, upstream)) return 'unknown';
    await numbering.load();
    // An expired code (verified) is unpaid now, as a pending one is: payable or not, a later payment
    // of it is caught as one is of a pending code. A failed attempt, or anything unverified: unknown.
    const meaning = numbering.meaning(upstream.status);
    return meaning === 'pending' || meaning === 'expired' ? 'pending' : 'unknown';
  }

  /**
   * A read's details, its value checked against ours first (the partner's `value`, read tolerantly:
   * partner/read.ts; absent, it decides nothing). Another value is flagged (the record, a
   * `payment.amount_mismatch` event, an error log) and the read makes the payment nothing but
   * canceled: it is never recorded paid while the values differ, and stays unfinished with the
   * mismatch recorded, for an operator to settle with the partner.
   */
  private async applyDetails(
    stored: PaymentRecord,
    upstream: PaymentDetails,
    explicit: 'approved' | 'canceled' | null,
    source: Source,
    askedAt?: number,
  ): Promise<PaymentRecord | null> {
    if (!amountDiffers(stored, upstream)) return this.applyRead(stored, upstream.status, explicit, source, askedAt);
    const reportedCents = Math.round(upstream.value! * 100);
    const at = this.options.now();
    const change = await this.options.store.payments.flagAmountMismatch(stored.reference, reportedCents, at, (p, orderId) =>
      amountMismatchOutcome(p, orderId, at),
    );
    if (change.changed) {
      this.options.log.error(
        { reference: stored.reference, checkout_id: stored.checkoutId, value: stored.valueCents / 100, reported_value: reportedCents / 100 },
        'the partner reported another value for a payment than the one issued: it is not taken as paid; settle it with the partner',
      );
      this.options.outcomes.published(change.outcome);
    }
    await this.options.numbering.load();
    if (explicit !== 'approved' && this.options.numbering.meaning(upstream.status) === 'canceled') {
      return this.applyRead(stored, upstream.status, explicit, source, askedAt);
    }
    return this.options.store.payments.get(stored.reference);
  }

  /**
   * Records what a read of the partner says, as far as it can be trusted (domain/numbering/status-numbering.ts):
   * a code decides only once it is verified; an authenticated notification's explicit outcome only
   * where the code cannot, and when the partner no longer reports the payment pending.
   */
  private async applyRead(
    stored: PaymentRecord,
    status: PartnerStatus | null,
    explicit: 'approved' | 'canceled' | null,
    source: Source,
    askedAt?: number,
  ): Promise<PaymentRecord | null> {
    const { numbering } = this.options;
    // When the code was read in the payment's life may verify it (or prove it wrong) before anything is decided.
    const now = this.options.now();
    await numbering.observe(status, { reference: stored.reference, expiresAt: stored.expiresAt, createdAt: stored.createdAt, now, askedAt: askedAt ?? now });
    let meaning = numbering.meaning(status);
    // The partner's answer decides when it can; words only where it cannot. Words that contradict a
    // verified code (or the setting) make the numbering a mismatch, so the code is read again: it decides nothing now.
    if (explicit !== null && meaning !== explicit) {
      const confirmed = numbering.confirmExplicit(explicit, status, stored.reference);
      meaning = confirmed && meaning === null ? explicit : numbering.meaning(status);
    }
    if (meaning === null) {
      this.options.log.warn(
        { reference: stored.reference, status: status?.code ?? status?.word ?? null, status_codes: numbering.report().state },
        'a payment status was not applied: its meaning is not known for sure',
      );
      // What the store holds, past this instance's copy: another instance may have recorded it meanwhile.
      return this.options.store.payments.get(stored.reference, { uncached: true });
    }
    // Expired and failed are never final (the code may still be paid); a return is recorded by whoever handles returns.
    if (meaning !== 'pending' && meaning !== 'approved' && meaning !== 'canceled') return this.options.store.payments.get(stored.reference, { uncached: true });
    // Re-read inside: a final status stored meanwhile (a webhook) wins over what this call saw.
    return this.applyStatus(stored.reference, PARTNER_STATUS[meaning], source);
  }

  /**
   * Records a status the partner confirmed, in the proxy's own numbering (PARTNER_STATUS: the
   * partner's code already translated), never downgrading a final one. When it makes the
   * payment final, open streams get it at once and its outcome is published. Answers the stored record.
   */
  async applyStatus(reference: string, partnerStatus: number, source?: Source): Promise<PaymentRecord | null> {
    const final = isFinalPartnerStatus(partnerStatus);
    const change = await this.options.store.payments.updateStatus(reference, partnerStatus, final, this.options.now(), paymentOutcome);
    const record = await this.options.store.payments.get(reference);
    if (change.changed && record?.final) {
      // Our own read found the outcome: its notification is now expected (or late, or missing).
      if (source === 'read') this.options.health?.foundByRead(reference);
      void this.options.finals.emit(record);
      this.options.outcomes.published(change.outcome);
    }
    return record;
  }
}

/** Who is being paid, once read: kept on the record (the read may finish before the issuer stored it, so it waits a little). */
export async function rememberFavoured(store: Store, reference: string, favoured: string, clock: Clock): Promise<void> {
  for (let attempt = 0; attempt < 20; attempt++) {
    const stored = await store.payments.get(reference);
    if (stored) {
      if (stored.favoured == null) await store.payments.setFavoured(reference, favoured);
      return;
    }
    await clock.sleep(50);
  }
}

/** What a final record says of its code, for a checkout about to issue another. */
function finalState(record: PaymentRecord): 'paid' | 'canceled' | 'unknown' {
  if (record.partnerStatus === PARTNER_STATUS.approved) return 'paid';
  return record.partnerStatus === PARTNER_STATUS.canceled ? 'canceled' : 'unknown';
}

/** Whether the partner reported a value for the payment, and another than ours (to the cent). */
function amountDiffers(stored: PaymentRecord, upstream: PaymentDetails): boolean {
  return upstream.value != null && Math.round(upstream.value * 100) !== stored.valueCents;
}
