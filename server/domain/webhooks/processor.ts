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
import { notificationBody, readNotification, type PartnerNotification } from '../../partner/notification.ts';
import { NotificationConfirmation, type Attempt, type ConfirmationDeps, type ProcessResult } from './confirmation.ts';
import { groupKey, newGroup, round, type Group } from './groups.ts';
import { byExternalReference } from './references.ts';
import { REAL_CLOCK, type Clock, type Runtime } from '../../runtime/runtime.ts';

export type { ProcessResult } from './confirmation.ts';

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

export interface ProcessorDeps extends ConfirmationDeps {
  now: () => number;
  /** Time and timers (default the real ones). */
  runtime?: Pick<Runtime, 'clock'> | undefined;
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
  retry: RetrySettings;
}

export class WebhookProcessor {
  private readonly groups = new Map<string, Group>();
  private readonly waiting: (() => void)[] = [];
  private running = 0;
  private closed = false;
  private readonly retry: RetrySettings;
  private readonly confirmation: NotificationConfirmation;

  private get clock(): Clock {
    return this.deps.runtime?.clock ?? REAL_CLOCK;
  }

  constructor(private readonly deps: ProcessorDeps) {
    this.retry = deps.retry;
    this.confirmation = new NotificationConfirmation(deps);
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
    const event = await this.askStore(id, () => byExternalReference(this.deps.store, read));
    if (event === undefined) return;
    if (!event) return this.settle([id], 'unknown_reference');
    // Decided before it takes a group or a slot: a flood of made-up references never delays real ones.
    if (!this.deps.intakeAuthenticated) {
      const known = await this.askStore(id, () => this.confirmation.known(event.reference));
      if (known === undefined) return;
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

  /** What the store says before an event is processed; undefined when it cannot say: the event is left unprocessed, taken up again by the next pass. */
  private async askStore<T>(id: number, ask: () => Promise<T>): Promise<T | undefined> {
    try {
      return await ask();
    } catch (error) {
      this.deps.log.warn(
        { webhook_event: id, err: { message: error instanceof Error ? error.message : String(error) } },
        'webhook not processed yet; will retry',
      );
      return undefined;
    }
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
    for (const group of this.groups.values()) this.clock.clearTimer(group.timer);
  }

  /** Confirms a reference until no notification of it is left waiting, one confirmation per interval. */
  private async confirmAll(group: Group): Promise<void> {
    while (group.ids.size > 0 && !this.closed) {
      const wait = group.lastStart + this.deps.confirmIntervalMs - this.clock.monotonic();
      if (wait > 0) await this.clock.sleep(wait, { unref: true });
      if (this.closed) break;
      // Those waiting for a try again are covered by this confirmation too.
      const ids = [...group.ids, ...group.deferred];
      group.ids.clear();
      group.deferred.clear();
      this.clock.clearTimer(group.timer);
      group.timer = undefined;
      for (const id of ids) group.taken.add(id);
      group.current = group.next;
      group.next = null;
      group.lastStart = this.clock.monotonic();
      group.firstAt ??= this.deps.now();
      try {
        let attempt: Attempt;
        try {
          attempt = await this.slot(() => this.confirmation.apply(group, ids));
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
    this.clock.clearTimer(group.timer);
    group.timer = this.clock.setTimeout(() => {
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
}

function parseEvent(rawBody: string): PartnerNotification | null {
  return readNotification(notificationBody(rawBody, undefined));
}
