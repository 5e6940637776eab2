/** Notifications from the partner (webhooks), kept before they are acknowledged. */

/** A webhook exactly as received, kept before it is processed. */
export interface WebhookEventRecord {
  id: number;
  rawBody: string;
  receivedAt: number;
  processedAt: number | null;
  /** What processing made of it (applied, duplicate, unknown_reference, invalid_json...). */
  result?: string | null;
  /** It came through an authenticated intake (secret path, listed source), recorded with it at intake: its words count. */
  authenticated?: boolean;
  /**
   * Set when only the body's first bytes were kept (domain/webhooks/intake.ts): its length in bytes
   * as received. A cut body is never read as if whole.
   */
  originalBytes?: number;
}

/**
 * Notifications from the partner, kept before they are acknowledged. Processing one is claimed: the
 * instance that received it holds it for the store's claim time, so no other instance confirms it
 * at the same time; a claim runs out when its instance dies, and another takes the event up.
 */
export interface WebhookEventStore {
  /**
   * Stores one, claimed by this instance (its intake processes it at once). `originalBytes`: the
   * body is only the first bytes of one this long (cut by the intake). `authenticated`: it came
   * through an authenticated intake and was stored whole, so its words count; stored with it, before
   * the acknowledgment, so a crash right after the 202 does not lose it.
   */
  add(rawBody: string, receivedAt: number, originalBytes?: number, authenticated?: boolean): Promise<number>;
  /** Keeps a refused notification for audit, already processed, with why it was refused (`originalBytes` as for add). */
  addRejected(rawBody: string, receivedAt: number, result: string, originalBytes?: number): Promise<number>;
  markProcessed(id: number, processedAt: number, result?: string): Promise<void>;
  /** Oldest first, whoever holds them (the operator's view). */
  unprocessed(limit: number): Promise<WebhookEventRecord[]>;
  /** Unprocessed ones no other instance holds (never claimed, claimed by this one, or a claim run out), claimed now; oldest first. */
  claimUnprocessed(limit: number, now: number): Promise<WebhookEventRecord[]>;
  /** How many wait to be confirmed, counting no further than `upTo` (the intake's cap: bounded work per notification). */
  countUnprocessed(upTo?: number): Promise<number>;
  /** Processed notifications with one of these results (`unreadable`, `unknown_reference`), newest first: for the operator. */
  listByResult(results: readonly string[], limit: number): Promise<WebhookEventRecord[]>;
  /** Marks those received before `receivedBefore` and never confirmed as processed, `expired`; answers how many. */
  expireUnprocessed(receivedBefore: number, at: number): Promise<number>;
  /**
   * Keeps an unprocessed one waiting to be confirmed again at `retryAt` (result `waiting`): claimed
   * by this instance until then plus the claim time, so no other instance takes it meanwhile, and
   * after a crash it is taken up again. `authenticated` (never unset once set): its words count then too.
   */
  keep(id: number, retryAt: number, authenticated: boolean): Promise<void>;
}
