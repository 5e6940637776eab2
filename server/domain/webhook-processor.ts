/**
 * Processing stored notifications, after the answer: each is confirmed by reading the payment or
 * transfer from the partner (the body is never trusted), then only a final status is applied, and a
 * final one is never changed. The same event twice, or events out of order, change nothing. An
 * event whose processing fails (the partner is down) stays unprocessed and is taken up again by the
 * reconciler's next pass, and at startup: a crash between the 202 and the processing loses nothing.
 *
 * Notifications about one reference share the partner's answer: one confirmation at a time per
 * reference, at most one every `confirmIntervalMs`, and each confirmation settles every notification
 * of that reference received before it started. A flood of copies (or spoofs) of one notification
 * costs the partner one call every couple of seconds, not one call each; on an open intake, a flood
 * of references the store does not know costs it nothing, and takes no place in the queue.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from '../log.ts';
import { notificationBody, readNotification, type PartnerNotification } from '../partner/notification.ts';
import type { Store } from '../store/store.ts';
import type { PaymentService } from './payments.ts';
import type { TransferService } from './transfers.ts';

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
}

/** What processing made of an event (stored as `webhook_events.result`). */
export type ProcessResult = 'applied' | 'already_final' | 'not_confirmed' | 'unknown_reference' | 'invalid';

/** The notifications of one reference waiting for a confirmation, and when the last one started. */
interface Group {
  event: PartnerNotification;
  /** The outcome an authenticated notification of this reference stated in words, if any. */
  explicit: 'approved' | 'canceled' | null;
  /** Waiting for the next confirmation, and that confirmation's end. */
  ids: Set<number>;
  next: Round | null;
  /** Being confirmed now (a drain that finds them still unprocessed does not queue them again), and its end. */
  taken: Set<number>;
  current: Round | null;
  lastStart: number;
  runner: Promise<void> | null;
}

/** One confirmation: each notification waits for the round that covers it, never for later copies. */
interface Round {
  done: Promise<void>;
  end: () => void;
}

function round(): Round {
  let end = () => {};
  const done = new Promise<void>((resolve) => (end = resolve));
  return { done, end };
}

export class WebhookProcessor {
  private readonly groups = new Map<string, Group>();
  private readonly waiting: (() => void)[] = [];
  private running = 0;
  private closed = false;

  constructor(private readonly deps: ProcessorDeps) {}

  /**
   * Processes one stored event, with the others of its reference; resolves when the confirmation that
   * covers it has ended (settled, or failed and left for the next pass). `received`: the intake's
   * reading of a notification it just stored, and whether the intake is authenticated; a stored event
   * taken up again (drain) is read anew and its words never count.
   */
  async process(id: number, rawBody: string, received?: { event: PartnerNotification; authenticated: boolean }): Promise<void> {
    if (this.closed) return;
    const event = received?.event ?? parseEvent(rawBody);
    const authenticated = received?.authenticated ?? false;
    if (!event) return this.settle([id], 'invalid');
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
    const key = `${event.kind ?? 'any'}:${event.reference}`;
    let group = this.groups.get(key);
    if (!group) {
      group = { event, explicit: null, ids: new Set(), next: null, taken: new Set(), current: null, lastStart: -Infinity, runner: null };
      this.groups.set(key, group);
    }
    // Words count only from a notification that came through an authenticated intake, to this
    // process (one left over from before a restart may have come through an open one).
    if (authenticated && event.outcome !== null) group.explicit = event.outcome;
    if (group.taken.has(id)) return group.current?.done;
    group.ids.add(id);
    const waitFor = (group.next ??= round()).done;
    const current = group;
    current.runner ??= this.confirmAll(current).finally(() => {
      current.runner = null;
      if (current.ids.size === 0 && this.groups.get(key) === current) this.groups.delete(key);
    });
    return waitFor;
  }

  /** Takes up every stored event not processed yet (startup, and each reconciler pass). */
  async drain(limit = 1000): Promise<void> {
    if (this.closed) return;
    // Those no other instance is processing (each instance processes what its intake received).
    const events = await this.deps.store.webhookEvents.claimUnprocessed(limit, this.deps.now());
    await Promise.all(events.map((e) => this.process(e.id, e.rawBody)));
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
  }

  /** Confirms a reference until no notification of it is left waiting, one confirmation per interval. */
  private async confirmAll(group: Group): Promise<void> {
    while (group.ids.size > 0 && !this.closed) {
      const wait = group.lastStart + this.deps.confirmIntervalMs - performance.now();
      if (wait > 0) await sleep(wait, undefined, { ref: false });
      if (this.closed) break;
      const ids = [...group.ids];
      group.ids.clear();
      for (const id of ids) group.taken.add(id);
      group.current = group.next;
      group.next = null;
      group.lastStart = performance.now();
      try {
        await this.settle(ids, await this.slot(() => this.apply(group.event, group.explicit)));
      } catch (error) {
        // The partner could not confirm it now: left unprocessed, taken up again by the next pass.
        this.deps.log.warn(
          { webhook_events: ids, err: { message: error instanceof Error ? error.message : String(error) } },
          'webhook not confirmed yet; will retry',
        );
      } finally {
        for (const id of ids) group.taken.delete(id);
        group.current?.end();
        group.current = null;
      }
    }
    // Closing: what still waits is left unprocessed for the next start, and its callers are released.
    group.ids.clear();
    group.next?.end();
    group.next = null;
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
   * once the partner no longer reports the transaction pending.
   */
  private async apply(event: PartnerNotification, outcome: 'approved' | 'canceled' | null): Promise<ProcessResult> {
    const { reference } = event;
    // A payment this proxy issued is a payment, whatever kind the notification seems to name.
    const stored = await this.deps.store.getPayment(reference);
    if (stored) {
      if (stored.final) return 'already_final';
      // Confirmed with the partner; the body's status is never used alone.
      const record = await this.deps.payments.confirm(reference, outcome);
      return record?.final ? 'applied' : 'not_confirmed';
    }
    // Only payments this proxy issued are followed.
    if (event.kind === 'payment') return 'unknown_reference';

    const known = await this.deps.store.transfers.get(reference);
    if (known?.final) return 'already_final';
    // Confirmed with the service, which knows whose it is: one it does not know is not ours.
    const final = await this.deps.transfers.confirm(reference, outcome);
    if (final === null) return 'unknown_reference';
    return final ? 'applied' : 'not_confirmed';
  }
}

function parseEvent(rawBody: string): PartnerNotification | null {
  return readNotification(notificationBody(rawBody, undefined));
}
