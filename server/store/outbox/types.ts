/** The transactional outbox of outcome events for the merchant's webhook. */

/** One outcome event to pass on to the merchant's webhook, and how its delivery goes. */
export interface OutboxEntry {
  id: number;
  eventId: string;
  type: string;
  reference: string;
  /** The JSON sent, fixed when the outcome was recorded. */
  body: string;
  /** When the outcome was recorded; a replay moves it to the replay (the retry window starts again). */
  createdAt: number;
  /** pending (to send, or to retry), delivered (a 2xx), failed (gave up; replay sends it again). */
  state: 'pending' | 'delivered' | 'failed';
  attempts: number;
  nextAttemptAt: number;
  deliveredAt: number | null;
  lastError: string | null;
  /** The claim it was answered under (claimDue): renew, recordAttempt and release hold to it. */
  claim?: string | null;
}

export interface DeliveryAttemptRecord {
  deliveryId: number;
  at: number;
  status: number | null;
  error: string | null;
  durationMs: number;
}

/** One delivery attempt as `recordAttempt` is given it. */
export type DeliveryAttempt = Omit<DeliveryAttemptRecord, 'deliveryId'>;
/** What an entry becomes after an attempt. */
export type DeliveryNext = Pick<OutboxEntry, 'state' | 'nextAttemptAt' | 'lastError' | 'deliveredAt'>;

/** The transactional outbox of outcome events for the merchant's webhook, one row per event id. */
export interface OutboxStore {
  /**
   * Claims pending deliveries whose next attempt is due, oldest first: each is moved out of every
   * worker's sight for the store's claim time (its next attempt is put off), so two workers (two
   * instances) never send it at once, and a worker that dies leaves it due again when that runs out.
   * `recordAttempt` or `release` ends the claim. Each entry carries its claim (`claim`): a claim
   * that ran out before its entry was sent may be another worker's by then.
   */
  claimDue(now: number, limit: number): Promise<OutboxEntry[]>;
  /**
   * Renews the claim for the store's claim time from `now`, right before the entry is sent: false
   * when it is no longer held (it ran out and another worker claimed it, or it was delivered):
   * then it is not sent.
   */
  renew(id: number, claim: string, now: number): Promise<boolean>;
  /** Claimed but not attempted (shutdown): due again at `now`; with `claim`, only entries still held under it. */
  release(ids: readonly number[], now: number, claim?: string | null): Promise<void>;
  /**
   * Records one attempt and what comes next, in one transaction. A delivery is never undone: a
   * delivered entry keeps its state whatever is recorded after; with `claim`, a failure is recorded
   * on the entry only while that claim is held (another worker's claim decides it otherwise). The
   * attempt itself is always kept. Answers whether the entry took `next`.
   */
  recordAttempt(id: number, attempt: DeliveryAttempt, next: DeliveryNext, claim?: string | null): Promise<boolean>;
  list(filter?: { state?: OutboxEntry['state']; limit?: number }): Promise<OutboxEntry[]>;
  get(id: number): Promise<OutboxEntry | null>;
  attempts(id: number): Promise<DeliveryAttemptRecord[]>;
  /**
   * The deliveries waiting (pending: first attempts and retries) and when the oldest of them was
   * recorded (`createdAt`), or null when none waits. Reads the pending rows only (the due index),
   * for the metrics at every scrape.
   */
  backlog(): Promise<{ pending: number; oldestPendingAt: number | null }>;
  /**
   * Makes deliveries pending again, due at `now` (replay): one by id, or every failed one. Answers how many. A delivered
   * row whose body the retention pruned is not replayed (it would send an empty body).
   */
  replay(target: number | 'failed', now: number): Promise<number>;
  /**
   * The merchant endpoint is on again (`deliveries resume`): every pending delivery is due at `now`,
   * with a new retry window (created_at = now), its claim dropped. Answers how many.
   */
  resume(now: number): Promise<number>;
  /** Entries written after the entry `afterId`, by id (the order they were recorded), at most `limit`: the event stream of `pix-checkout listen`. */
  after(afterId: number, limit: number): Promise<OutboxEntry[]>;
  /** The id of the last entry written, 0 when none. */
  lastId(): Promise<number>;
}
