/**
 * The intake of the partner's notifications: who may send them, what is kept, and when the partner
 * is asked to send again. The route (routes/webhooks.ts) reads the body and answers in HTTP; what to
 * decide is here.
 *
 * A notification is stored before it is acknowledged, and processed afterwards
 * (domain/webhooks/processor.ts): nothing upstream is asked before answering. The intake keeps
 * everything that passed the source and secret checks: the partner stops after two retries, so a
 * refusal would lose an event for good. A notification (JSON or form-encoded) that names a reference
 * in any plausible field (partner/notification.ts) is stored to be confirmed with the partner,
 * whoever it is about; one we cannot read at all is stored whole too (only its start during a flood
 * of them), already processed with the result `unreadable` (or `ambiguous`: it names two different
 * references), logged, and listed for the operator (`pix-checkout webhook received --unreadable`).
 * Calls from a wrong source or to a wrong secret path are refused and not stored (anyone can send
 * them, so storing them would let anyone fill the disk).
 *
 * What is stored is bounded: a body keeps at most its first `keptBytes` (16 KiB; a real
 * notification is under 2 KiB), and one about a reference this proxy never issued (no payment, no
 * transfer in the store) its first `auditBytes` (1 KiB), as a refused one does, so a flood of made-up
 * notifications grows the store by about a KiB each. A cut record says so and how long the body was
 * (`originalBytes`). A cut body cannot decide money: it is confirmed with the partner from the body as
 * received, its words never count, and after a restart its stored start is never read as if whole.
 */
import { timingSafeEqual } from 'node:crypto';
import type { Logger } from '../../log.ts';
import { examineNotification, notificationBody, type PartnerNotification } from '../../partner/notification.ts';
import { withoutStoreBudget } from '../../store/deadline.ts';
import type { StoreOutage } from '../../store/outage.ts';
import { StoreError, type Store } from '../../store/store.ts';
import { byExternalReference } from './references.ts';
import type { IntakeTally, NotificationReason } from '../telemetry.ts';
import type { WebhookHealth } from './health.ts';
import type { WebhookProcessor } from './processor.ts';

export interface WebhookIntakeLimits {
  /** Unreadable notifications per hour stored whole; past it, only their first `auditBytes`. */
  unreadableWholePerHour: number;
  auditBytes: number;
  /** The most of a body any stored notification keeps; the rest is cut (and the record says so). */
  keptBytes: number;
  /** Notifications waiting to be confirmed, at most: past it the partner is asked to retry. */
  pendingCap: number;
}

export interface WebhookIntakeOptions {
  store: Store;
  now: () => number;
  /** The secret last path segment the partner must call; none when unset. */
  secretPath?: string | undefined;
  /** Addresses notifications may come from; any when empty. */
  sourceIps?: readonly string[] | undefined;
  limits: WebhookIntakeLimits;
  /** Told of each notification about a payment we issued (the pace of our own reads follows it). */
  health: WebhookHealth;
  /** Confirms each stored notification with the partner, after the answer. */
  processor: WebhookProcessor;
  /** Counts what becomes of each notification (the proxy's metrics). */
  tally?: IntakeTally | undefined;
  /** Told of each notification the store could not take: one line per outage, counting them (store/outage.ts). */
  outage?: StoreOutage | undefined;
}

/** What became of a notification that passed the source and secret checks. */
export type IntakeResult =
  /** Stored (to be confirmed, or for the operator): acknowledge it. */
  | { kind: 'stored' }
  /** Nothing to keep: an empty body (a body parser that ran before the proxy). */
  | { kind: 'empty' }
  /** Too many notifications wait for confirmation: the partner retries later. */
  | { kind: 'full' }
  /** The store could not take it: the partner retries. */
  | { kind: 'not_stored' };

export class WebhookIntake {
  /** Whether a notification's words count as evidence: the intake is authenticated (a secret path or the partner's addresses). */
  readonly authenticated: boolean;
  private readonly allowed: Set<string>;
  private readonly secret: Buffer | null;
  /** When the last unreadable notifications came (the last hour's). */
  private readonly unreadable: number[] = [];

  constructor(private readonly options: WebhookIntakeOptions) {
    this.allowed = new Set((options.sourceIps ?? []).map(normalizeIp));
    this.secret = options.secretPath ? Buffer.from(options.secretPath) : null;
    this.authenticated = isAuthenticatedIntake(options);
  }

  /** Whether notifications must name the secret path segment. */
  get secretRequired(): boolean {
    return this.secret !== null;
  }

  /** Whether `given` is the secret path segment; constant time: the segment is a credential. */
  secretMatches(given: string | undefined): boolean {
    const candidate = Buffer.from(given ?? '');
    return this.secret !== null && candidate.length === this.secret.length && timingSafeEqual(candidate, this.secret);
  }

  /** Whether a source allow-list is set: then a listed source is the partner, and no per-source limit applies. */
  get sourcesListed(): boolean {
    return this.allowed.size > 0;
  }

  /** Whether a notification may come from this address. */
  sourceAllowed(address: string): boolean {
    return this.allowed.size === 0 || this.allowed.has(normalizeIp(address));
  }

  /** A notification refused by the route before it reached the intake (wrong path or source, too large): counted. */
  refused(reason: NotificationReason): void {
    this.options.tally?.('rejected', reason);
  }

  /** Keeps a notification's body (already size-checked) and, once stored, has it processed. */
  async receive(raw: string, contentType: string | undefined, log: Logger): Promise<IntakeResult> {
    const { store, now, limits } = this.options;
    const receivedAt = now();
    if (raw.trim() === '') {
      // Nothing to keep: the partner always sends a body, so an empty one is a body parser that ran before the proxy.
      log.warn('webhook refused: empty body');
      this.options.tally?.('rejected', 'empty');
      return { kind: 'empty' };
    }
    const reading = examineNotification(notificationBody(raw, contentType));
    if ('ambiguous' in reading || 'unreadable' in reading) {
      // Kept and acknowledged: refusing it would lose it for good. Whole, unless a flood of them
      // is arriving: then only its start (the intake may be open to anyone). One naming two different
      // references is processed as neither: the operator decides.
      const result = 'ambiguous' in reading ? 'ambiguous' : 'unreadable';
      const hourAgo = receivedAt - 3_600_000;
      while (this.unreadable.length > 0 && this.unreadable[0]! <= hourAgo) this.unreadable.shift();
      const whole = this.unreadable.length < limits.unreadableWholePerHour;
      this.unreadable.push(receivedAt);
      try {
        const kept = keepFirstBytes(raw, whole ? limits.keptBytes : limits.auditBytes);
        const id = await store.webhookEvents.addRejected(kept.body, receivedAt, result, kept.originalBytes);
        const fields = {
          webhook_event: id,
          bytes: Buffer.byteLength(raw),
          ...(kept.originalBytes !== undefined ? { kept_bytes: Buffer.byteLength(kept.body) } : {}),
        };
        if ('ambiguous' in reading) {
          log.warn(
            { ...fields, references: reading.ambiguous.slice(0, 5) },
            'webhook ambiguous: it names different references; stored for the operator (pix-checkout webhook received --unreadable)',
          );
        } else log.error(fields, 'webhook unreadable: stored for the operator (pix-checkout webhook received --unreadable)');
      } catch (error) {
        return this.notStored(error, log);
      }
      this.options.tally?.('unreadable', 'ambiguous' in reading ? 'ambiguous' : '');
      return { kind: 'stored' };
    }
    // A list of payments is split: each item stored (the notification with its list cut to that item)
    // and confirmed as one notification.
    const items =
      'batch' in reading ? reading.batch.map((item) => ({ event: item.notification, raw: JSON.stringify(item.body) })) : [{ event: reading.notification, raw }];
    const stored: { id: number; event: PartnerNotification; kept: KeptBody; authenticated: boolean }[] = [];
    try {
      // Bounded: past the cap the service is asked to retry rather than the disk filling up.
      if ((await store.webhookEvents.countUnprocessed(limits.pendingCap)) + items.length > limits.pendingCap) {
        log.error({ cap: limits.pendingCap }, 'webhook not stored: too many notifications wait for confirmation');
        this.options.tally?.('rejected', 'full');
        return { kind: 'full' };
      }
      // Items of a list about nothing of ours are kept once, as the list's start (the flood bound of one
      // notification holds for a list too), when nobody would ask about them: a transaction id that is
      // none of ours, or (open intake) a reference the store does not know.
      let strangers = 0;
      for (const item of items) {
        // Named by our transaction id (`txid`): the transaction it belongs to, if it is one of ours.
        const event = await byExternalReference(store, item.event);
        const known = event === null ? null : await this.issued(event.reference);
        if (items.length > 1 && (event === null || (!known && !this.authenticated))) {
          strangers++;
          continue;
        }
        if (event === null) {
          const kept = keepFirstBytes(item.raw, limits.auditBytes);
          const id = await store.webhookEvents.addRejected(kept.body, receivedAt, 'unknown_reference', kept.originalBytes);
          log.warn(
            { webhook_event: id, reference_field: item.event.referenceField },
            'webhook names a transaction id that is none of ours; stored for the operator',
          );
          continue;
        }
        const kept = keepFirstBytes(item.raw, known ? limits.keptBytes : limits.auditBytes);
        // Whether its words count is stored with it, before the answer: a crash right after the 202
        // must not turn an authenticated notification into an unauthenticated one.
        const authenticated = this.authenticated && kept.originalBytes === undefined;
        const id = await store.webhookEvents.add(kept.body, receivedAt, kept.originalBytes, authenticated);
        stored.push({ id, event, kept, authenticated });
        // About one of ours, a cut body is out of the ordinary (one about a made-up reference is the flood's).
        if (kept.originalBytes !== undefined && known)
          log.warn(
            { webhook_event: id, bytes: kept.originalBytes, kept_bytes: Buffer.byteLength(kept.body) },
            'webhook body cut: stored its start only; its words do not count',
          );
        if (known === 'payment') this.options.health.notified(event.reference);
      }
      if (strangers > 0) {
        const kept = keepFirstBytes(raw, limits.auditBytes);
        const id = await store.webhookEvents.addRejected(kept.body, receivedAt, 'unknown_reference', kept.originalBytes);
        log.warn({ webhook_event: id, items: strangers }, 'webhook lists transactions that are none of ours; its start stored for the operator');
      }
    } catch (error) {
      return this.notStored(error, log);
    }
    if (items.length > 1)
      log.info({ webhook_events: stored.map((s) => s.id), items: items.length }, 'webhook lists several transactions: each stored and confirmed');
    for (const { id, event, kept, authenticated } of stored) {
      this.options.tally?.('accepted');
      // After the write, not awaited: the answer does not wait for the partner. A notification's words
      // are evidence only when the intake is authenticated, and never from a body stored cut.
      // Outside this request's store budget: the processing outlives the answer.
      withoutStoreBudget(() => void this.options.processor.process(id, kept.body, { event, authenticated }));
    }
    return { kind: 'stored' };
  }

  /**
   * The store could not take a notification: the partner is asked to send it again (503). At warn: during
   * an outage every notification fails so, and the outage's own lines (store/outage.ts) say so once and
   * count them; a store failure outside an outage opens one.
   */
  private notStored(error: unknown, log: Logger): IntakeResult {
    log.warn({ err: { message: (error as Error).message } }, 'webhook not stored: answering 503 so the service retries');
    if (error instanceof StoreError) this.options.outage?.failed('webhook-intake', error, 'notifications refused (the partner sends them again)');
    this.options.tally?.('rejected', 'not_stored');
    return { kind: 'not_stored' };
  }

  /** What the store knows the reference as: a payment this proxy issued, a transfer it follows, or nothing. */
  private async issued(reference: string): Promise<'payment' | 'transfer' | null> {
    const { store } = this.options;
    if ((store.payments.peek?.(reference) ?? (await store.payments.get(reference))) !== null) return 'payment';
    return (await store.transfers.get(reference)) !== null ? 'transfer' : null;
  }
}

/** A body as stored: whole, or its first bytes and how long it was. */
export interface KeptBody {
  body: string;
  /** Set when cut: the body's length in bytes (UTF-8). */
  originalBytes?: number;
}

/** The body's first `maxBytes` bytes of UTF-8, cut before a character that would not fit whole. */
export function keepFirstBytes(raw: string, maxBytes: number): KeptBody {
  const bytes = Buffer.from(raw, 'utf8');
  if (bytes.length <= maxBytes) return { body: raw };
  let end = Math.max(0, maxBytes);
  // A continuation byte (10xxxxxx) at the cut: the character it belongs to starts before it.
  while (end > 0 && (bytes[end]! & 0xc0) === 0x80) end--;
  return { body: bytes.subarray(0, end).toString('utf8'), originalBytes: bytes.length };
}

/** Whether an intake with these settings is authenticated: a secret path, or a source allow-list. */
export function isAuthenticatedIntake(settings: { secretPath?: string | undefined; sourceIps?: readonly string[] | undefined }): boolean {
  return Boolean(settings.secretPath) || (settings.sourceIps?.length ?? 0) > 0;
}

/** IPv4-mapped IPv6 (`::ffff:1.2.3.4`, what a dual-stack socket reports) is the IPv4 address. */
export function normalizeIp(address: string): string {
  const trimmed = address.trim().toLowerCase();
  return trimmed.startsWith('::ffff:') && trimmed.includes('.') ? trimmed.slice(7) : trimmed;
}
