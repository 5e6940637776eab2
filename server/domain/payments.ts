/**
 * The payments the proxy serves to browsers: issuing, reads and live watching, all turned into the
 * browser's view. Reads are answered from the store; the partner is asked only when a record is not
 * final and older than the staleness window, and concurrent refreshes of one payment share one
 * upstream call. Every watcher of a payment shares one poller, so a thousand open pages cost the
 * partner service one call at a time; across instances sharing a store, one instance polls a payment
 * at a time (a lease) and the others hear its result (the store's change notifications).
 */
import { randomUUID } from 'node:crypto';
import type { PaymentView } from '../../src/shared/contract.ts';
import { isFinalStatus, type PaymentStatus } from '../../src/shared/status.ts';
import type { Logger } from '../log.ts';
import type { PartnerClient, PaymentDetails } from '../partner/client.ts';
import { PartnerError } from '../partner/errors.ts';
import type { PartnerStatus } from '../partner/read.ts';
import { PARTNER_STATUS, isFinalPartnerStatus } from '../partner/wire.ts';
import type { PaymentRecord, Store, StoreChange } from '../store/store.ts';
import { logBrCodeWarnings } from './brcode-warnings.ts';
import { DomainError } from './errors.ts';
import { amountMismatchOutcome, paymentOutcome, type Outcomes } from './outcomes.ts';
import type { StatusNumbering } from './status-numbering.ts';
import type { WebhookHealth } from './webhook-health.ts';

export interface PaymentServiceOptions {
  store: Store;
  /** Seconds each QR code stays payable; sent to the partner and stored as `expires_at`. */
  expirationSeconds: number;
  now: () => number;
  log: Logger;
  /** A stored, unfinished status younger than this is served without asking the partner. */
  staleAfterMs: number;
  /** How often a watched, unfinished payment is asked about. */
  watchIntervalMs: number;
  /** Told of each payment that becomes final here (a webhook, the reconciler, a read), after the store has it. */
  outcomes: Outcomes;
  /** What the partner's status codes mean, and whether that can be trusted yet. */
  numbering: StatusNumbering;
  /** Whether the partner's notifications arrive on time: then pending payments are asked about less often. */
  health?: WebhookHealth;
}

/** What a payment is issued with; customer data comes from the merchant's server only. */
export interface IssueInput {
  value: number;
  description?: string | undefined;
  name?: string | undefined;
  document?: string | undefined;
  callback?: string | undefined;
}

type Listener = (view: PaymentView) => void;

interface Watch {
  listeners: Set<Listener>;
  timer: ReturnType<typeof setTimeout> | undefined;
  last: PaymentStatus | null;
  /** The payment's expiry: near it, it is polled at the fallback pace whatever the webhooks' health. */
  expiresAt: number;
}

/** Who learned a status: a read of our own (a browser's, a poll, the reconciler), or a notification's confirmation. */
type Source = 'read' | 'notification';

export class PaymentService {
  private readonly refreshing = new Map<string, Promise<PaymentRecord>>();
  /** Across instances: reads waiting to learn whether this instance holds a payment's poll lease. */
  private readonly deciding = new Map<string, Promise<PaymentRecord>>();
  private readonly watches = new Map<string, Watch>();
  private readonly staleAfterMs: number;
  private readonly watchIntervalMs: number;
  /** Ended streams are told through this: shutdown. */
  private readonly closers = new Set<() => void>();
  /** Each stored record's view, serialized but for its status and server_time (viewJson). */
  private readonly serialized = new WeakMap<PaymentRecord, { head: string; tail: string }>();
  /** The last server_time formatted, and for which ms: many reads share one millisecond. */
  private isoAt = Number.NaN;
  private iso = '';

  /** Stops hearing other instances' changes (close). */
  private readonly unheard: () => void;

  constructor(
    private readonly partner: PartnerClient,
    private readonly options: PaymentServiceOptions,
  ) {
    this.staleAfterMs = options.staleAfterMs;
    this.watchIntervalMs = options.watchIntervalMs;
    // Several instances: a change another one recorded (its webhook, its poll) reaches the streams held here at once.
    this.unheard = options.store.cluster?.onChange((change) => void this.heard(change)) ?? (() => {});
  }

  /**
   * Creates a payment with the partner and returns its record, not yet stored: the caller stores it
   * (alone, or attached to its checkout in one transaction).
   */
  async issue(input: IssueInput, checkoutId: string | null): Promise<PaymentRecord> {
    // Our own reference travels with the request, so an unknown outcome can be reconciled later.
    const transactionId = randomUUID();
    const { expirationSeconds, now, numbering } = this.options;
    // When the answer carries no creation time, the time the request left: the payment expires no later than shown.
    const sentAt = now();
    try {
      const created = await this.partner.createPayment({ ...input, expiration: expirationSeconds, transaction_id: transactionId });
      logBrCodeWarnings(this.options.log, created.externalReference, created.pixKey);
      // Never later than the request left: a partner clock ahead of ours (or a created_at in the
      // wrong zone) must not push the expiry, and with it the hour before which a final code can only
      // be approved (domain/status-numbering.ts), past the partner's real cancellation.
      const createdAt = Math.min(created.createdAt ?? sentAt, sentAt);
      if (created.status) await numbering.observeFresh(created.status, created.externalReference);
      // One read after the create, in the background, when its answer lacked the status the numbering
      // still needs or who is being paid: the first QR does not wait for it.
      if ((!created.status && numbering.needsFreshRead()) || created.favoured === null) void this.freshRead(created.externalReference);
      return {
        reference: created.externalReference,
        checkoutId,
        valueCents: Math.round(input.value * 100),
        description: input.description ?? null,
        partnerStatus: PARTNER_STATUS.pending,
        brcode: created.pixKey,
        qrCodeUrl: created.qrCodeUrl ?? '',
        checkoutUrl: created.checkoutUrl ?? '',
        createdAt,
        expiresAt: createdAt + expirationSeconds * 1000,
        transactionId,
        updatedAt: now(),
        final: false,
        favoured: created.favoured,
      };
    } catch (error) {
      if (error instanceof PartnerError && error.details.outcomeUnknown) {
        // The customer never saw this payment's code, so it cannot be paid: the operator may look it
        // up by transaction_id; a checkout simply issues another.
        this.options.log.error(
          { transaction_id: transactionId, checkout_id: checkoutId, ...(error.details.rawBody ? { raw_answer: error.details.rawBody } : {}) },
          'payment creation outcome unknown: reconcile by transaction_id',
        );
      }
      throw error;
    }
  }

  /** One read of a payment just created whose answer had no status: its code verifies the numbering. */
  private async freshRead(reference: string): Promise<void> {
    try {
      const details = await this.partner.getPayment(reference);
      if (details.status && this.options.numbering.needsFreshRead()) await this.options.numbering.observeFresh(details.status, reference);
      if (details.favoured !== null) await this.rememberFavoured(reference, details.favoured);
    } catch (error) {
      this.options.log.warn(
        { reference, err: { message: error instanceof Error ? error.message : String(error) } },
        'could not read a new payment to check the status codes',
      );
    }
  }

  /** Who is being paid, once read: kept on the record (the read may finish before the issuer stored it, so it waits a little). */
  private async rememberFavoured(reference: string, favoured: string): Promise<void> {
    const { store } = this.options;
    for (let attempt = 0; attempt < 20; attempt++) {
      const stored = await store.getPayment(reference);
      if (stored) {
        if (stored.favoured == null) await store.setPaymentFavoured(reference, favoured);
        return;
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  /**
   * Whether a code may be issued after another at all (domain/status-numbering.ts): the pending code
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
    await this.options.store.insertPayment(record);
    return this.view(record);
  }

  async read(reference: string): Promise<PaymentView> {
    return this.view(await this.record(reference));
  }

  /**
   * `JSON.stringify(await read(reference))`, the same bytes, made cheaply: the hot path of every
   * polling page. A record's fixed fields are serialized once per stored version (records are
   * replaced, never mutated, when their status changes); only the status and server_time are
   * filled in per read. A fresh, final or missing record answers without an extra await.
   */
  readJson(reference: string): Promise<string> | string {
    return this.freshJson(reference) ?? this.record(reference).then((record) => this.viewJson(record));
  }

  /**
   * The view's JSON when it can be answered at once: the store holds the payment in memory and its
   * status is final or fresh. Otherwise undefined, having started nothing.
   */
  freshJson(reference: string): string | undefined {
    const stored = this.options.store.peekPayment?.(reference);
    if (!stored) return undefined;
    const now = this.options.now();
    return stored.final || now - stored.updatedAt < this.freshFor(stored.expiresAt, now) ? this.viewJson(stored) : undefined;
  }

  /** `JSON.stringify(this.view(p))`, from the record's cached serialization. */
  viewJson(p: PaymentRecord): string {
    const now = this.options.now();
    let parts = this.serialized.get(p);
    if (!parts) {
      parts = serializedParts(p);
      this.serialized.set(p, parts);
    }
    if (now !== this.isoAt) {
      this.isoAt = now;
      this.iso = new Date(now).toISOString();
    }
    return parts.head + statusFor(p.partnerStatus, p.expiresAt, now) + parts.tail + this.iso + '"}';
  }

  /**
   * The stored record, refreshed from the partner first when it is unfinished and older than
   * `maxAgeMs`; `forced` (before a new code is issued) asks even when another instance is polling it.
   * Only payments this proxy issued are served: others are not found.
   */
  async record(reference: string, maxAgeMs?: number, forced = false): Promise<PaymentRecord> {
    const stored = await this.options.store.getPayment(reference);
    if (!stored) throw new DomainError('not_found', 'No such payment.');
    const now = this.options.now();
    if (stored.final || now - stored.updatedAt < (maxAgeMs ?? this.freshFor(stored.expiresAt, now))) return stored;
    return this.refresh(stored, forced);
  }

  /**
   * How fresh a pending payment's stored status must be to be served: the staleness window, or
   * while the partner's notifications arrive on time and away from its expiry, the longer trusted one.
   */
  private freshFor(expiresAt: number, now: number): number {
    const health = this.options.health;
    return health?.trusted(expiresAt, now) ? Math.max(this.staleAfterMs, health.trustedMs) : this.staleAfterMs;
  }

  /** How often a watched payment is polled: as freshFor, from the watch interval. */
  private intervalFor(expiresAt: number, now: number): number {
    const health = this.options.health;
    return health?.trusted(expiresAt, now) ? Math.max(this.watchIntervalMs, health.trustedMs) : this.watchIntervalMs;
  }

  /** The webhooks' health changed: watches take the new pace now (from the fallback's sooner polls, at once). */
  repace(): void {
    for (const [reference, watch] of this.watches) this.schedule(reference, watch);
  }

  /**
   * Asks the partner, once for all concurrent callers, and stores what it says. Across instances
   * (a shared store), unless `forced`, one instance asks about a payment at a time: it holds the
   * payment's poll lease, renewed by each of its polls and lasting two watch intervals (so it does not
   * lapse between them, and another instance takes over within two intervals of its holder dying);
   * the others answer what the store has and hear the result (PaymentService.heard).
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
          held ? (this.refreshing.get(reference) ?? this.ask(stored, source)) : ((await this.options.store.getPayment(reference)) ?? stored),
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
      const upstream = await this.partner.getPayment(reference);
      if (stored.favoured == null && upstream.favoured !== null) await this.rememberFavoured(reference, upstream.favoured);
      return (await this.applyDetails(stored, upstream, null, source)) ?? stored;
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
    const stored = await this.options.store.getPayment(reference);
    if (!stored) return null;
    if (stored.final) return stored;
    // The reconciler's (shared) ask is a read of our own; the others confirm a notification.
    const source: Source = shared ? 'read' : 'notification';
    if (explicit === null) return this.refresh(stored, !shared, source);
    // A notification's words are checked against the partner's own answer (never trusted alone).
    const upstream = await this.partner.getPayment(reference);
    return (await this.applyDetails(stored, upstream, explicit, source)) ?? stored;
  }

  /**
   * Before a checkout issues another code: asks the partner about this payment now (whoever else is
   * polling it) and records what it says. `paid` or `canceled` once recorded final; `pending` only
   * when the answer reads as pending for sure (StatusNumbering.meaning); `unknown` for anything else
   * (a status whose meaning is not known, none at all, another value than ours, an unreadable answer,
   * the partner down): then the code may have been paid, and no new one may be issued.
   */
  async confirmNotPaid(reference: string): Promise<'pending' | 'canceled' | 'paid' | 'unknown'> {
    const { store, numbering, log } = this.options;
    const stored = await store.getPayment(reference);
    if (!stored) return 'unknown';
    if (stored.final) return finalState(stored);
    let upstream: PaymentDetails;
    try {
      upstream = await this.partner.getPayment(reference);
    } catch (error) {
      log.warn({ reference, err: { message: error instanceof Error ? error.message : String(error) } }, 'could not confirm that an earlier code was not paid');
      return 'unknown';
    }
    if (stored.favoured == null && upstream.favoured !== null) await this.rememberFavoured(reference, upstream.favoured);
    const record = (await this.applyDetails(stored, upstream, null, 'read')) ?? stored;
    if (record.final) return finalState(record);
    if (amountDiffers(stored, upstream)) return 'unknown';
    await numbering.load();
    return numbering.meaning(upstream.status) === 'pending' ? 'pending' : 'unknown';
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
  ): Promise<PaymentRecord | null> {
    if (!amountDiffers(stored, upstream)) return this.applyRead(stored, upstream.status, explicit, source);
    const reportedCents = Math.round(upstream.value! * 100);
    const at = this.options.now();
    const change = await this.options.store.flagAmountMismatch(stored.reference, reportedCents, at, (p, orderId) => amountMismatchOutcome(p, orderId, at));
    if (change.changed) {
      this.options.log.error(
        { reference: stored.reference, checkout_id: stored.checkoutId, value: stored.valueCents / 100, reported_value: reportedCents / 100 },
        'the partner reported another value for a payment than the one issued: it is not taken as paid; settle it with the partner',
      );
      this.options.outcomes.published(change.outcome);
    }
    await this.options.numbering.load();
    if (explicit !== 'approved' && this.options.numbering.meaning(upstream.status) === 'canceled') {
      return this.applyRead(stored, upstream.status, explicit, source);
    }
    return this.options.store.getPayment(stored.reference);
  }

  /**
   * Records what a read of the partner says, as far as it can be trusted (domain/status-numbering.ts):
   * a code decides only once it is verified; an authenticated notification's explicit outcome only
   * where the code cannot, and when the partner no longer reports the payment pending.
   */
  private async applyRead(
    stored: PaymentRecord,
    status: PartnerStatus | null,
    explicit: 'approved' | 'canceled' | null,
    source: Source,
  ): Promise<PaymentRecord | null> {
    const { numbering } = this.options;
    // The spec's cancellation hour may verify a code (or prove the setting wrong) before anything is decided.
    await numbering.observe(status, { reference: stored.reference, expiresAt: stored.expiresAt, now: this.options.now() });
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
      return this.options.store.getPayment(stored.reference);
    }
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
    const change = await this.options.store.updatePaymentStatus(reference, partnerStatus, final, this.options.now(), paymentOutcome);
    const record = await this.options.store.getPayment(reference);
    if (change.changed && record?.final) {
      // Our own read found the outcome: its notification is now expected (or late, or missing).
      if (source === 'read') this.options.health?.foundByRead(reference);
      this.push(record);
      this.options.outcomes.published(change.outcome);
    }
    return record;
  }

  /** How many listeners watch this payment now (its open streams on this instance). */
  watching(reference: string): number {
    return this.watches.get(reference)?.listeners.size ?? 0;
  }

  /** Gives watchers of this payment its final view now, instead of at their next poll. */
  private push(record: PaymentRecord): void {
    const watch = this.watches.get(record.reference);
    if (watch) this.tell(record.reference, watch, this.view(record));
  }

  /** Tells a payment's watchers of a new status; a final one ends the watch. */
  private tell(reference: string, watch: Watch, view: PaymentView): void {
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
  private async heard(change: StoreChange): Promise<void> {
    const references = change.kind === 'payment' ? [change.reference] : [...this.watches.keys()];
    for (const reference of references) {
      const watch = this.watches.get(reference);
      if (!watch) continue;
      try {
        const record = await this.options.store.getPayment(reference);
        if (record && this.watches.get(reference) === watch) this.tell(reference, watch, this.view(record));
      } catch (error) {
        // The watch's own poll tries again.
        this.options.log.warn({ reference, err: { message: error instanceof Error ? error.message : String(error) } }, 'reading a changed payment failed');
      }
    }
  }

  /**
   * Calls `listener` with the current view at once, then on every status change, until the payment
   * is final or the returned function is called. Rejects when the first read fails.
   */
  async watch(reference: string, listener: Listener): Promise<() => void> {
    const record = await this.record(reference);
    const first = this.view(record);
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

  /** Called when the service closes (shutdown), so open streams can end. */
  onClose(callback: () => void): () => void {
    this.closers.add(callback);
    return () => this.closers.delete(callback);
  }

  /** Stops every poller and ends every stream (shutdown). */
  close(): void {
    this.unheard();
    for (const [reference, watch] of this.watches) this.unwatch(reference, watch);
    for (const callback of [...this.closers]) callback();
    this.closers.clear();
  }

  private unwatch(reference: string, watch: Watch): void {
    clearTimeout(watch.timer);
    if (this.watches.get(reference) !== watch) return;
    this.watches.delete(reference);
    // No one watches it here any more: another instance's watchers may poll it at once.
    this.options.store.cluster?.release(pollLease(reference)).catch(() => undefined);
  }

  private schedule(reference: string, watch: Watch): void {
    clearTimeout(watch.timer);
    watch.timer = setTimeout(() => void this.poll(reference, watch), this.intervalFor(watch.expiresAt, this.options.now()));
    watch.timer.unref?.();
  }

  private async poll(reference: string, watch: Watch): Promise<void> {
    if (this.watches.get(reference) !== watch) return;
    let view: PaymentView;
    try {
      // Fresh as of half an interval: a browser's read that just refreshed it counts.
      view = this.view(await this.record(reference, this.intervalFor(watch.expiresAt, this.options.now()) / 2));
    } catch (error) {
      // A failed poll changes nothing the browser sees; the next one may succeed.
      this.options.log.warn({ reference, err: { message: error instanceof Error ? error.message : String(error) } }, 'watching a payment failed');
      this.schedule(reference, watch);
      return;
    }
    if (this.watches.get(reference) !== watch) return;
    this.tell(reference, watch, view);
    if (!isFinalStatus(view.status)) this.schedule(reference, watch);
  }

  /** The browser's view of a record, at the proxy's current time. */
  view(p: PaymentRecord): PaymentView {
    const now = this.options.now();
    return {
      reference: p.reference,
      status: statusFor(p.partnerStatus, p.expiresAt, now),
      value: p.valueCents / 100,
      brcode: p.brcode,
      qr_code_url: p.qrCodeUrl,
      checkout_url: p.checkoutUrl,
      created_at: isoTime(p.createdAt),
      expires_at: isoTime(p.expiresAt),
      favoured: p.favoured ?? null,
      paid_at: paidAt(p),
      server_time: new Date(now).toISOString(),
    };
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

/** The lease of whoever asks the partner about a payment now, across instances. */
const pollLease = (reference: string) => `poll:${reference}`;

/**
 * The view's JSON around its two per-read fields, in the view's key order (view() above): status
 * goes between head and tail, server_time after tail.
 */
function serializedParts(p: PaymentRecord): { head: string; tail: string } {
  const s = JSON.stringify;
  return {
    head: `{"reference":${s(p.reference)},"status":"`,
    tail:
      `","value":${s(p.valueCents / 100)},"brcode":${s(p.brcode)},"qr_code_url":${s(p.qrCodeUrl)},"checkout_url":${s(p.checkoutUrl)}` +
      `,"created_at":"${isoTime(p.createdAt)}","expires_at":"${isoTime(p.expiresAt)}"` +
      `,"favoured":${s(p.favoured ?? null)},"paid_at":${s(paidAt(p))},"server_time":"`,
  };
}

/** When a paid record was recorded paid (its last update: a final record never changes again); null otherwise. */
function paidAt(p: PaymentRecord): string | null {
  return p.final && p.partnerStatus === PARTNER_STATUS.approved ? isoTime(p.updatedAt) : null;
}

/** ISO 8601 of an epoch ms; an unreadable one (a partner's bad created_at) is the epoch, never a crash. */
function isoTime(ms: number): string {
  const date = new Date(ms);
  return Number.isNaN(date.getTime()) ? new Date(0).toISOString() : date.toISOString();
}

function statusFor(partnerStatus: number, expiresAtMs: number, nowMs: number): PaymentStatus {
  if (partnerStatus === PARTNER_STATUS.approved) return 'paid';
  if (partnerStatus === PARTNER_STATUS.canceled) return 'canceled';
  if (partnerStatus === PARTNER_STATUS.pending) return nowMs >= expiresAtMs ? 'expired' : 'pending';
  // A code we do not know is never shown as success, nor as final: report it and keep asking.
  throw new DomainError('unknown_status', `The partner reported status ${partnerStatus}, which this proxy does not know.`);
}
