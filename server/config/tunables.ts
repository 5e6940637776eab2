/** The numbers no variable sets: DEFAULTS holds them beside the table's defaults (settings.ts). */
import { LIMITS } from '../../src/shared/limits.ts';

export const TUNABLES = {
  /** Where the API is served: the widget's `endpoint`. */
  basePath: '/api',
  /**
   * Partner reads follow the webhooks' health (domain/webhooks/health.ts): while the partner's
   * notifications arrive on time, a pending payment is asked about at most every `trustedMs`
   * (PIX_WEBHOOK_READ_INTERVAL_MS); when they stop or lag, and near a payment's expiry, every
   * staleAfterMs / watchIntervalMs.
   */
  partnerReads: { recentMs: 10 * 60_000, graceMs: 10_000, lateMs: 5000, evidence: 3, nearExpiryMs: 60_000 },
  /** The largest JSON body a proxy endpoint accepts; a real one is under 500 bytes. */
  maxJsonBodyBytes: LIMITS.maxJsonBodyBytes,
  /** The partner's notifications (routes/webhooks.ts, domain/webhooks/processor.ts). */
  webhookIntake: {
    /** Stored notifications confirmed with the partner at once. */
    concurrency: 8,
    /** One reference is confirmed with the partner at most this often (real time); notifications meanwhile share the answer. */
    confirmIntervalMs: 2000,
    /** Notifications waiting to be confirmed, at most: past it the intake answers 503 and the partner retries. */
    pendingCap: 10_000,
    /** A notification the partner has not confirmed in this long is marked `expired` (the reconciler still follows the payment). */
    pendingRetentionMs: 24 * 3_600_000,
    /**
     * A confirmation that could not be applied yet (the partner still says pending, its code's meaning
     * is not known yet, it is down) is tried again after `firstRetryMs`, doubling up to `maxRetryMs`:
     * an authenticated notification's words while the payment is open (until `retryMarginMs` before
     * its automatic cancellation: after it, a final code may be that cancellation, and stale words
     * must not read it), a notification without them `plainRetries` times.
     */
    firstRetryMs: 1000,
    maxRetryMs: 30_000,
    plainRetries: 8,
    retryMarginMs: 5 * 60_000,
    /**
     * Unreadable notifications are kept whole, this many an hour; past it (a flood from an open
     * intake) only their first `auditBytes`, so anyone able to post cannot fill the disk.
     */
    unreadableWholePerHour: 100,
    auditBytes: 1024,
    /**
     * A stored notification keeps at most this much of its body (a real one is under 2 KiB); the rest
     * is cut and the record says so. One about a reference this proxy never issued keeps `auditBytes`.
     */
    keptBytes: 16 * 1024,
  },
  /** The reconciler (domain/reconciler.ts), beside its three variables. */
  reconcile: {
    /** How close to a payment's expiry counts as near. */
    nearWindowMs: 5 * 60_000,
    /** Partner calls in flight at most. */
    concurrency: 8,
    /** Records looked at per pass at most. */
    batch: 5000,
    /**
     * A payment still open this long after its automatic cancellation (an hour after expiry) cannot
     * be decided from what the partner answers: it is parked, read again only every `parkedEveryMs`,
     * and reported (/ready, the log).
     */
    parkAfterCancelMs: 15 * 60_000,
    parkedEveryMs: 3_600_000,
  },
  /** The merchant webhook's delivery and retry policy (domain/merchant-notify.ts, docs/webhooks.md "Retries"). */
  merchantWebhook: {
    /** Deadline of one attempt. */
    timeoutMs: 10_000,
    /**
     * The delay after each failed attempt (the first after the first failure), ±10% jitter; the last
     * one repeats: 30 s, 2 min, 10 min, 1 h, then every 6 h. A receiver's Retry-After, when later, wins.
     */
    retryScheduleMs: [30_000, 120_000, 600_000, 3_600_000, 6 * 3_600_000],
    /** The last attempt is made this long after the outcome (3 days); a failure then gives it up (`deliveries replay` sends it again). */
    giveUpAfterMs: 3 * 24 * 3_600_000,
    /** An endpoint that has answered nothing but failures for this long (a whole day) is disabled until `deliveries resume`. */
    disableAfterMs: 24 * 3_600_000,
    /** A Retry-After later than this is read as this (a receiver cannot park a delivery past its window). */
    maxRetryAfterMs: 24 * 3_600_000,
    /** How often due deliveries are looked for (real time); new outcomes wake the worker at once. */
    pollMs: 1000,
    /** Deliveries in flight at most. */
    concurrency: 8,
  },
  /** Postgres's own deadlines beside PIX_DATABASE_STATEMENT_TIMEOUT_MS (store/postgres/deadlines.ts, given by config/database.ts). */
  database: {
    /** The longest a statement waits for a lock (`lock_timeout`; never above the statement timeout). */
    lockTimeoutMs: 3000,
    /** A session left idle inside a transaction this long is ended by Postgres (`idle_in_transaction_session_timeout`). */
    idleInTransactionMs: 60_000,
    /** The driver gives up on a query the server has not answered this long after its statement timeout (`query_timeout`: the network, not the query). */
    answerMarginMs: 2000,
  },
  /** `/ready` answers within this long, whatever hangs: a store or partner that has not answered by then is named as the cause. */
  readinessDeadlineMs: 2000,
  /**
   * The store's part of `/ready` (its ping, all statements together): with a ready answer kept at most
   * PIX_READY_CACHE_MS (0.5 s), a frozen database shows as 503 within 1.5 s of the freeze.
   */
  readinessStoreDeadlineMs: 1000,
  /** After the grace period (PIX_SHUTDOWN_GRACE_MS), this long for closing the store before the process exits 1 anyway. */
  shutdown: {
    hardCutMarginMs: 2000,
    /**
     * PIX_SHUTDOWN_DRAIN_MS when unset behind a balancer (PIX_TRUSTED_PROXIES above 0), within the grace
     * period: `/ready` answers 503 this long before the port closes, so a balancer probing every 2 s
     * with 2 failures to mark it down sees it fail before connections are refused.
     */
    balancerDrainMs: 5000,
  },
  /** The merchant server's API key in sandbox mode: a published test value, like the account. */
  sandboxApiKey: 'sandbox-api-key',
} as const;
