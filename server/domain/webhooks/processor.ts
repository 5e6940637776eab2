/**
 * Processing stored notifications, after the answer: each is confirmed by reading the payment or
 * transfer from the partner (the body is never trusted), then only a final status is applied, and a
 * final one is never changed. The same event twice, or events out of order, change nothing.
 *
 * A confirmation that could not be applied yet (the partner still says pending, this instance does
 * not know its code's meaning yet, the partner is down) is never consumed: its events stay unprocessed
 * (`waiting`, claimed by this instance) and are confirmed again on a short schedule (1 s, doubling up
 * to 30 s): an authenticated notification's words while the payment is open, until they apply or are
 * contradicted; a notification without them a few times, then the reconciler follows the payment. A
 * crash loses nothing: the next start takes them up (drain), words and all when they were authenticated.
 * Authenticated words that contradict a final payment open a dispute (domain/disputes.ts).
 *
 * Notifications about one reference share the partner's answer: one confirmation at a time per
 * reference, at most one every `confirmIntervalMs`, and each confirmation settles every notification
 * of that reference received before it started. A flood of copies (or spoofs) of one notification
 * costs the partner one call every couple of seconds, not one call each; on an open intake, a flood
 * of references the store does not know costs it nothing, and takes no place in the queue.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from '../../log.ts';
import { notificationBody, readNotification, type PartnerNotification } from '../../partner/notification.ts';
import { LIMITS } from '../../../src/shared/limits.ts';
import type { PaymentRecord, Store } from '../../store/store.ts';
import { recordedOutcome, type DisputeService } from '../disputes.ts';
import type { PaymentService } from '../payments.ts';
import type { StatusNumbering } from '../numbering/status-numbering.ts';
import type { TransferService } from '../transfers.ts';
import { groupKey, newGroup, round, type Group } from './groups.ts';
import { byExternalReference } from './references.ts';
import { isReturnable } from '../returns.ts';

/** The schedule of confirmations tried again, resolved by the composition. */
export interface RetrySettings {
  firstRetryMs: number;
  maxRetryMs: number;
  /** Tries again of a notification without authenticated words. */
  plainRetries: number;
  /** Authenticated words are tried until this long before the payment's automatic cancellation. */
  retryMarginMs: number;
  /** ...and, for a transfer, this long after the first try. */
  pendingRetentionMs: number;
}

export interface ProcessorDeps {
  store: Store;
  payments: PaymentService;
  transfers: TransferService;
  now: () => number;
  log: Logger;
  /** Partner calls in flight at most. */
  concurrency: number;
  /** One reference is confirmed at most this often (real time). */
  confirmIntervalMs: number;
  /**
   * Whether only the partner can reach the intake (a secret path or source addresses). When it is
   * open, anyone can name any reference: only the payments and transfers the store knows are
   * confirmed, and the others are settled `unknown_reference` without asking the partner.
   */
  intakeAuthenticated: boolean;
  /** Read again at once when it cannot decide yet: another instance may have verified it. */
  numbering?: StatusNumbering;
  /** Where authenticated words that contradict a final payment go. */
  disputes: DisputeService;
  retry: RetrySettings;
}

/**
 * What processing made of an event (stored as `webhook_events.result`): `not_confirmed` once its
 * tries again are over; `contradicted`, authenticated words the partner's verified code contradicts;
 * `disputed`, authenticated words that contradict a final payment; `cut`, a body stored cut
 * (webhook-intake.ts) taken up again after a restart, never read.
 */
export type ProcessResult = 'applied' | 'already_final' | 'not_confirmed' | 'unknown_reference' | 'invalid' | 'contradicted' | 'disputed' | 'cut';

/** A confirmation that could not be applied yet: tried again later. */
type Attempt = ProcessResult | 'retry';

export class WebhookProcessor {
  private readonly groups = new Map<string, Group>();
  private readonly waiting: (() => void)[] = [];
  private running = 0;
  private closed = false;
  private readonly retry: RetrySettings;

  constructor(private readonly deps: ProcessorDeps) {
    this.retry = deps.retry;
  }

  /**
   * Processes one stored event, with the others of its reference; resolves when the confirmation that
   * covers it has ended (settled, or kept to be confirmed again). `received`: the intake's reading of
   * a notification it just stored, and whether the intake is authenticated; a stored event taken up
   * again (drain) is read anew, and its words count only when it was kept as authenticated.
   */
  async process(id: number, rawBody: string, received?: { event: PartnerNotification | null; authenticated: boolean }): Promise<void> {
    if (this.closed) return;
    const read = received?.event ?? parseEvent(rawBody);
    const authenticated = received?.authenticated ?? false;
    if (!read) return this.settle([id], 'invalid');
    // Named by our transaction id (`txid`): followed as the transaction it belongs to.
    let event: PartnerNotification | null;
    try {
      event = await byExternalReference(this.deps.store, read);
    } catch (error) {
      this.deps.log.warn(
        { webhook_event: id, err: { message: error instanceof Error ? error.message : String(error) } },
        'webhook not processed yet; will retry',
      );
      return;
    }
    if (!event) return this.settle([id], 'unknown_reference');
    // Decided before it takes a group or a slot: a flood of made-up references never delays real ones.
    if (!this.deps.intakeAuthenticated) {
      let known: boolean;
      try {
        known = await this.known(event.reference);
      } catch (error) {
        // The store could not say: left unprocessed, taken up again by the next pass.
        this.deps.log.warn(
          { webhook_event: id, err: { message: error instanceof Error ? error.message : String(error) } },
          'webhook not processed yet; will retry',
        );
        return;
      }
      if (!known) return this.settle([id], 'unknown_reference');
      if (this.closed) return;
    }
    const key = groupKey(event);
    let group = this.groups.get(key);
    if (!group) {
      group = newGroup(event);
      this.groups.set(key, group);
    }
    // Words count only from a notification that came through an authenticated intake (to this
    // process, or to one before a restart that kept it so).
    if (authenticated && event.outcome !== null) {
      group.explicit = event.outcome;
      group.trusted.add(id);
    }
    // A return, likewise only from an authenticated notification.
    if (authenticated && event.returned !== null) {
      const before = group.returned;
      const cents =
        before === null ? event.returned.cents : before.cents === null || event.returned.cents === null ? null : Math.max(before.cents, event.returned.cents);
      group.returned = { cents };
      group.trusted.add(id);
    } else if (event.returned !== null) {
      this.deps.log.warn(
        { webhook_event: id, reference: event.reference },
        'a notification states a return, but the intake is not authenticated (PIX_WEBHOOK_SECRET_PATH, PIX_WEBHOOK_SOURCE_IPS): its words are no evidence; the payment is confirmed as any other',
      );
    }
    if (group.taken.has(id)) return group.current?.done;
    // Already waiting for its try again (a drain found it still unprocessed): it keeps its schedule.
    if (group.deferred.has(id)) return;
    group.ids.add(id);
    const waitFor = (group.next ??= round()).done;
    this.run(key, group);
    return waitFor;
  }

  private run(key: string, group: Group): void {
    group.runner ??= this.confirmAll(group).finally(() => {
      group.runner = null;
      if (group.ids.size > 0 && !this.closed) return this.run(key, group);
      if (group.ids.size === 0 && group.deferred.size === 0 && this.groups.get(key) === group) this.groups.delete(key);
    });
  }

  /** Takes up every stored event not processed yet (startup, and each reconciler pass). */
  async drain(limit = 1000): Promise<void> {
    if (this.closed) return;
    // Those no other instance is processing (each instance processes what its intake received).
    const events = await this.deps.store.webhookEvents.claimUnprocessed(limit, this.deps.now());
    // A body stored cut is never read as if whole (its start may parse as another notification):
    // settled `cut`, unless this process holds it from its intake (read whole there, waiting for its
    // try again); the reconciler follows the payment it may have been about.
    const cut = events.filter((e) => e.originalBytes !== undefined && !this.holds(e.id)).map((e) => e.id);
    if (cut.length > 0) await this.settle(cut, 'cut');
    const whole = events.filter((e) => e.originalBytes === undefined);
    await Promise.all(whole.map((e) => this.process(e.id, e.rawBody, e.authenticated ? { event: parseEvent(e.rawBody), authenticated: true } : undefined)));
  }

  /** Whether this process is confirming the event or keeps it for its try again. */
  private holds(id: number): boolean {
    for (const group of this.groups.values()) if (group.ids.has(id) || group.deferred.has(id) || group.taken.has(id)) return true;
    return false;
  }

  /** Resolves when nothing is in flight. */
  async idle(): Promise<void> {
    for (;;) {
      const runners = [...this.groups.values()].map((group) => group.runner).filter((runner) => runner !== null);
      if (runners.length === 0) return;
      await Promise.allSettled(runners);
    }
  }

  close(): void {
    this.closed = true;
    for (const group of this.groups.values()) clearTimeout(group.timer);
  }

  /** Confirms a reference until no notification of it is left waiting, one confirmation per interval. */
  private async confirmAll(group: Group): Promise<void> {
    while (group.ids.size > 0 && !this.closed) {
      const wait = group.lastStart + this.deps.confirmIntervalMs - performance.now();
      if (wait > 0) await sleep(wait, undefined, { ref: false });
      if (this.closed) break;
      // Those waiting for a try again are covered by this confirmation too.
      const ids = [...group.ids, ...group.deferred];
      group.ids.clear();
      group.deferred.clear();
      clearTimeout(group.timer);
      group.timer = undefined;
      for (const id of ids) group.taken.add(id);
      group.current = group.next;
      group.next = null;
      group.lastStart = performance.now();
      group.firstAt ??= this.deps.now();
      try {
        let attempt: Attempt;
        try {
          attempt = await this.slot(() => this.apply(group, ids));
        } catch (error) {
          // The partner could not confirm it now: kept, and tried again.
          this.deps.log.warn(
            { webhook_events: ids, err: { message: error instanceof Error ? error.message : String(error) } },
            'webhook not confirmed yet; will retry',
          );
          attempt = 'retry';
        }
        if (attempt === 'retry') await this.later(group, ids);
        else await this.settle(ids, attempt);
      } finally {
        for (const id of ids) group.taken.delete(id);
        group.current?.end();
        group.current = null;
      }
    }
    // Closing: what still waits is left unprocessed for the next start, and its callers are released.
    if (this.closed) group.ids.clear();
    group.next?.end();
    group.next = null;
  }

  /**
   * A confirmation that could not be applied yet: its events are kept (unprocessed, `waiting`) and
   * confirmed again after the next delay of the schedule, or, when their tries are over, settled
   * `not_confirmed` (the reconciler still follows the payment).
   */
  private async later(group: Group, ids: number[]): Promise<void> {
    if (this.closed) return;
    const { log, now, store } = this.deps;
    const { firstRetryMs, maxRetryMs, plainRetries, pendingRetentionMs } = this.retry;
    group.attempts++;
    const delay = Math.min(firstRetryMs * 2 ** (group.attempts - 1), maxRetryMs);
    const at = now();
    const reference = group.event.reference;
    const over = group.explicit === null ? group.attempts > plainRetries : at + delay > (group.openUntil ?? (group.firstAt ?? at) + pendingRetentionMs);
    if (over) {
      if (group.explicit !== null)
        log.error(
          { reference, webhook_events: ids, outcome: group.explicit },
          'an authenticated notification could not be confirmed while the payment was open; the reconciler still follows it',
        );
      else log.info({ reference, webhook_events: ids }, 'a notification could not be confirmed; the reconciler follows the payment');
      group.attempts = 0;
      return this.settle(ids, 'not_confirmed');
    }
    // The events with authenticated words wait, each (their words must survive a restart); of copies
    // without them one is enough to carry the reference's next try, and the others are settled by
    // the confirmation they shared (a flood of copies keeps one row waiting, not one each).
    const trusted = ids.filter((id) => group.trusted.has(id));
    const carriers = trusted.length > 0 ? trusted : [Math.min(...ids)];
    const covered = ids.filter((id) => !carriers.includes(id));
    if (covered.length > 0) await this.settle(covered, 'not_confirmed');
    for (const id of carriers) {
      group.deferred.add(id);
      try {
        await store.webhookEvents.keep(id, at + delay, group.trusted.has(id));
      } catch (error) {
        // Still unprocessed: the next drain takes it up.
        log.warn({ webhook_event: id, err: { message: (error as Error).message } }, 'could not keep a webhook to confirm again');
      }
    }
    log.info({ reference, webhook_events: carriers, retry_in_ms: delay, attempts: group.attempts }, 'webhook not applied yet; confirming again soon');
    clearTimeout(group.timer);
    group.timer = setTimeout(() => {
      group.timer = undefined;
      if (this.closed || group.deferred.size === 0) return;
      for (const id of group.deferred) group.ids.add(id);
      group.deferred.clear();
      this.run(groupKey(group.event), group);
    }, delay);
    group.timer.unref?.();
  }

  private async settle(ids: number[], result: ProcessResult): Promise<void> {
    if (this.closed) return;
    const at = this.deps.now();
    for (const id of ids) {
      try {
        await this.deps.store.webhookEvents.markProcessed(id, at, result);
      } catch (error) {
        // Processing again is harmless (idempotent).
        this.deps.log.warn({ webhook_event: id, err: { message: (error as Error).message } }, 'could not mark a webhook processed');
        return;
      }
    }
    this.deps.log.info({ webhook_events: ids, result }, 'webhook processed');
  }

  private async slot<T>(task: () => Promise<T>): Promise<T> {
    if (this.running >= this.deps.concurrency) await new Promise<void>((resolve) => this.waiting.push(resolve));
    this.running++;
    try {
      return await task();
    } finally {
      this.running--;
      this.waiting.shift()?.();
    }
  }

  /** Whether the store knows the reference, as a payment this proxy issued or a transfer it follows. */
  private async known(reference: string): Promise<boolean> {
    const { store } = this.deps;
    return (store.peekPayment?.(reference) ?? (await store.getPayment(reference))) !== null || (await store.transfers.get(reference)) !== null;
  }

  /**
   * Confirms a notification with the partner. Its kind, when it does not say, is found by looking the
   * reference up: a payment this proxy issued, else a transfer the service may know. Its explicit
   * outcome (words), from an authenticated source, is applied where the status code cannot decide,
   * once the partner no longer reports the transaction pending. `retry`: not applied yet.
   */
  private async apply(group: Group, ids: readonly number[]): Promise<Attempt> {
    const { event, explicit: outcome } = group;
    const { reference } = event;
    const { numbering } = this.deps;
    // A payment this proxy issued is a payment, whatever kind the notification seems to name.
    const stored = await this.deps.store.getPayment(reference);
    if (stored) {
      // Words are tried again only while a final code can only be the payment's own outcome: before
      // its automatic cancellation (less a margin for clock skew), never against that cancellation.
      group.openUntil = stored.expiresAt + LIMITS.cancelAfterExpirationSeconds * 1000 - this.retry.retryMarginMs;
      if (stored.final) {
        if (group.returned !== null) return this.applyReturn(group, stored);
        // A paid payment notified again may have been returned: its code says so when one is listed `returned`.
        if (await this.deps.payments.reads.confirmReturn(reference)) return 'applied';
        return this.finalPayment(group, ids);
      }
      // Another instance sharing the store may have reached a verdict on the numbering a moment ago
      // (verified it, or proven it wrong): heard now, before deciding, not at the next reload.
      if (numbering && (numbering.report().state === 'unverified' || (this.deps.store.cluster && numbering.report().state !== 'mismatch')))
        await numbering.reload();
      // Confirmed with the partner; the body's status is never used alone.
      const record = await this.deps.payments.reads.confirm(reference, outcome);
      if (record?.final && group.returned !== null) return this.applyReturn(group, record);
      if (record?.final) return outcome !== null && recordedOutcome(record) !== outcome ? this.finalPayment(group, ids, record) : 'applied';
      // Contradicted only when this payment's own words were (another payment's mismatch meanwhile
      // leaves these words waiting: under a mismatch they are the only way it can be settled).
      if (outcome !== null && numbering?.wasContradicted(reference)) {
        this.deps.log.error(
          { reference, webhook_events: ids, outcome },
          "an authenticated notification's outcome is contradicted by the partner's status code: not applied (see /ready)",
        );
        return 'contradicted';
      }
      return 'retry';
    }
    // Only payments this proxy issued are followed.
    if (event.kind === 'payment') return 'unknown_reference';

    const known = await this.deps.store.transfers.get(reference);
    if (known?.final) return 'already_final';
    // Confirmed with the service, which knows whose it is: one it does not know is not ours.
    const final = await this.deps.transfers.confirm(reference, outcome);
    if (final === null) return 'unknown_reference';
    return final ? 'applied' : 'retry';
  }

  /**
   * A return an authenticated notification stated, of a final payment: recorded when it is paid
   * (domain/returns.ts); of a canceled one, nothing was paid to give back.
   */
  private async applyReturn(group: Group, payment: PaymentRecord): Promise<ProcessResult> {
    const returned = group.returned!;
    group.returned = null;
    if (!isReturnable(payment)) {
      this.deps.log.warn(
        { reference: payment.reference },
        'a notification states a return of a payment not recorded paid: nothing to give back, nothing recorded',
      );
      return 'already_final';
    }
    return (await this.deps.payments.reads.recordReturn(payment, returned.cents, 'notification')) ? 'applied' : 'already_final';
  }

  /** A final payment: authenticated words that contradict it open a dispute; anything else changes nothing. */
  private async finalPayment(group: Group, ids: readonly number[], record?: PaymentRecord): Promise<ProcessResult> {
    const payment = record ?? (await this.deps.store.getPayment(group.event.reference));
    if (!payment || group.explicit === null) return 'already_final';
    const eventId = ids.find((id) => group.trusted.has(id)) ?? null;
    return (await this.deps.disputes.contradicts(payment, group.explicit, eventId)) ? 'disputed' : 'already_final';
  }
}

function parseEvent(rawBody: string): PartnerNotification | null {
  return readNotification(notificationBody(rawBody, undefined));
}
