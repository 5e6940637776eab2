/**
 * Readiness (`GET /ready`): the store answers (and which database it is; with Postgres, whether this
 * instance hears the others' changes), the partner service is logged in and reachable, and the
 * partner's status codes are not contradicted (a mismatch settles nothing: outcomes would never
 * reach the merchant).
 *
 * Within 2 s of a fault and of its end: a ready answer is kept at most `cacheMs` (0.5 s), and
 * dropped as soon as any store operation of this instance fails; a failure is never kept (each probe
 * asks again, probes at once sharing one check); the store's ping has `storeDeadlineMs` (1 s), its own
 * store budget, so a frozen database that never answers fails it in time.
 */
import type { PartnerClient, PartnerLogEntry } from '../partner/client.ts';
import { PartnerError } from '../partner/errors.ts';
import { withStoreBudget } from '../store/deadline.ts';
import { storeErrorCount } from '../store/errors.ts';
import type { Store } from '../store/store.ts';
import { RETURNS_WARNING_WINDOW_MS } from './returns.ts';
import type { DisputeService } from './disputes.ts';
import type { NumberingReport, NumberingState, StatusNumbering } from './numbering/status-numbering.ts';
import type { ReadsReport, WebhookHealth } from './webhooks/health.ts';
import { REAL_CLOCK, type Clock, type Runtime, type Timer } from '../runtime/runtime.ts';

/**
 * Remembers how the last call to the partner went, fed by the client's `log` option: readiness
 * then needs no request of its own (the client caches the tenant after the first login).
 */
export interface UpstreamTracker {
  record(entry: PartnerLogEntry): void;
  /** False while the last attempt got no answer or a 5xx. */
  healthy(): boolean;
}

export function trackUpstream(): UpstreamTracker {
  let healthy = true;
  return {
    record(entry) {
      // A 4xx is an answer (a not-found payment, a refused transfer): the service is up.
      if (entry.outcome === 'ok' || (entry.status >= 400 && entry.status < 500)) healthy = true;
      else if (entry.status === 0 || entry.status >= 500) healthy = false;
    },
    healthy: () => healthy,
  };
}

export interface ReadinessReport {
  ready: boolean;
  /** `not_checked`: the partner is not asked while the store (which holds its token) has failed. */
  checks: {
    store: 'ok' | 'failed';
    /** Which database the store is: `postgres` is shared by every instance on PIX_DATABASE_URL. */
    database: Store['kind'];
    /** Postgres only: whether this instance hears the others' changes now (its streams learn of them at once). */
    store_changes?: 'listening' | 'reconnecting';
    partner: 'ok' | 'failed' | 'not_checked';
    status_codes?: NumberingState;
  };
  /**
   * Which configured status codes proved themselves, per meaning (domain/numbering/status-numbering.ts);
   * `transfers` is `mismatch` while a transfer code is one; `transfer_codes`, the transfers' own
   * numbering (PIX_TRANSFER_STATUS_CODES). `pix-checkout numbering show` prints every code and its evidence.
   */
  status_codes?: {
    configured: string;
    codes: NumberingReport['codes'];
    transfers: 'ok' | 'mismatch';
    transfer_codes: { state: NumberingState; configured: string; codes: NumberingReport['codes'] };
  };
  /** Not ready: why, in words (the store's or the partner's failure, or which did not answer within the deadline). */
  cause?: string;
  /** What is not wrong enough to refuse traffic, but an operator should fix. */
  warnings?: string[];
  /** How often pending payments are asked about now, and why (domain/webhooks/health.ts). */
  reads?: ReadsReport;
}

export function readinessCheck(deps: {
  store: Store;
  partner: PartnerClient;
  upstream?: UpstreamTracker;
  /** How long a ready answer is kept (PIX_READY_CACHE_MS); a failure is never kept, nor a ready answer past a store failure. */
  cacheMs: number;
  /** The check answers within this long: what has not answered by then fails, named as the cause. */
  deadlineMs?: number;
  /** The store's ping answers within this long, all its statements together; default deadlineMs. */
  storeDeadlineMs?: number;
  now?: () => number;
  /** Time and timers (default the real ones). */
  runtime?: Pick<Runtime, 'clock'> | undefined;
  warnings?: readonly string[] | undefined;
  /** Whether the partner's status codes mean what PIX_STATUS_CODES says: a mismatch is named. */
  numbering?: StatusNumbering;
  /** The webhooks' health, which sets the pace of partner reads. */
  reads?: WebhookHealth;
  /** The reconciler's word on payments parked long past their cancellation (Reconciler.parkedWarning), if any. */
  parkedWarning?: () => string | null;
  /** The merchant deliveries' word on a disabled endpoint (MerchantNotifier.disabledWarning), if any. */
  deliveriesWarning?: () => string | null;
  /** Open disputes are named (not a reason to refuse traffic: an operator resolves them). */
  disputes?: DisputeService;
}): () => Promise<ReadinessReport> {
  const clock = deps.runtime?.clock ?? REAL_CLOCK;
  const now = deps.now ?? clock.now;
  const { cacheMs } = deps;

  /**
   * After a failure nothing else may call the partner (the load balancer stops sending traffic), so
   * readiness asks itself: a read of a reference that does not exist, answered 404 when it is up.
   */
  async function probe(): Promise<boolean> {
    try {
      await deps.partner.getPayment('readiness-probe');
      return true;
    } catch (error) {
      return error instanceof PartnerError && error.kind === 'not_found';
    }
  }

  async function check(): Promise<ReadinessReport> {
    const deadline = withDeadline(deps.deadlineMs, clock);
    let cause: string | undefined;
    const storeMs = deps.storeDeadlineMs ?? deps.deadlineMs;
    const ping = storeMs === undefined ? deps.store.ping() : withStoreBudget(storeMs, () => deps.store.ping());
    const store = await deadline(ping, 'the store', storeMs).then(
      () => 'ok' as const,
      (error: unknown) => {
        cause = error instanceof DeadlineError ? error.message : `the store failed (${codeOf(error)})`;
        return 'failed' as const;
      },
    );
    // A failing store fails the token's read too: the partner is not blamed for it.
    const numbering = deps.numbering?.report();
    const list = [...(deps.warnings ?? [])];
    // A code that contradicts the setting decides nothing, and only what it touches stops: the
    // warnings name each such code (pix-checkout numbering). One of the settling meanings (pending,
    // approved, canceled) a mismatch means paid payments may never be recorded paid, nor their
    // outcomes reach the merchant: not ready (the `status_codes` check), named as the cause; the
    // metric pix_checkout_status_numbering_state{state="mismatch"} alerts on it.
    const settling = numbering ? (['pending', 'approved', 'canceled'] as const).filter((meaning) => numbering.codes[meaning] === 'mismatch') : [];
    const mismatch = numbering !== undefined && settling.length > 0;
    if (numbering) list.push(...numbering.problems, ...numbering.transfers.problems);
    const cluster = deps.store.cluster;
    const changes = cluster ? { store_changes: cluster.listening() ? ('listening' as const) : ('reconnecting' as const) } : {};
    // Not a reason to refuse traffic either: its streams still poll, and reads still come from the shared store.
    if (changes.store_changes === 'reconnecting')
      list.push("not hearing other instances' changes now: this instance's streams learn of them at their next poll");
    const parked = deps.parkedWarning?.();
    if (parked) list.push(parked);
    const deliveries = deps.deliveriesWarning?.();
    if (deliveries) list.push(deliveries);
    if (store === 'ok' && deps.disputes) {
      const open = await deadline(deps.disputes.open(6), 'the store').catch(() => []);
      if (open.length > 0) {
        const named = open.slice(0, 5).map((d) => d.reference);
        list.push(
          `${open.length > 5 ? 'more than 5 payments are' : open.length === 1 ? '1 payment is' : `${open.length} payments are`} disputed (${named.join(', ')}${open.length > 5 ? ', ...' : ''}): ` +
            'an authenticated notification contradicts a final status; their checkouts are not refunded until resolved (pix-checkout disputes)',
        );
      }
    }
    if (store === 'ok') {
      // Returns of the last day (domain/returns.ts): not a fault, but money that went back to payers.
      const recent = await deadline(deps.store.payments.returnsSince(now() - RETURNS_WARNING_WINDOW_MS, 6), 'the store').catch(() => []);
      if (recent.length > 0) {
        const named = [...new Set(recent.map((r) => r.reference))].slice(0, 5);
        list.push(
          `${recent.length > 5 ? 'more than 5 returns' : recent.length === 1 ? '1 return' : `${recent.length} returns`} of paid payments in the last 24 hours (${named.join(', ')}${recent.length > 5 ? ', ...' : ''}): ` +
            'money given back to the payer (payment.returned was sent); it is never refunded again',
        );
      }
    }
    const warnings = list.length > 0 ? { warnings: list } : {};
    const reads = deps.reads ? { reads: deps.reads.report() } : {};
    const codes = numbering ? { status_codes: numbering.state } : {};
    const detail = numbering
      ? {
          status_codes: {
            configured: numbering.configured,
            codes: numbering.codes,
            transfers: numbering.transfers_problem ? ('mismatch' as const) : ('ok' as const),
            transfer_codes: { state: numbering.transfers.state, configured: numbering.transfers.configured, codes: numbering.transfers.codes },
          },
        }
      : {};
    const database = { database: deps.store.kind, ...changes };
    const because = cause ? { cause } : {};
    if (store === 'failed')
      return { ready: false, checks: { store, ...database, partner: 'not_checked', ...codes }, ...because, ...detail, ...reads, ...warnings };
    const partner = await deadline(
      deps.partner.getTenant().then(() => (deps.upstream?.healthy() === false ? probe() : true)),
      'the partner service',
    ).then(
      (ok) => {
        if (!ok) cause = 'the partner service failed a read (of a reference that does not exist)';
        return ok ? ('ok' as const) : ('failed' as const);
      },
      (error: unknown) => {
        cause = error instanceof DeadlineError ? error.message : `the partner service failed (${error instanceof PartnerError ? error.kind : codeOf(error)})`;
        return 'failed' as const;
      },
    );
    if (!cause && mismatch)
      cause = `the partner's ${settling.join(', ')} status code contradicts PIX_STATUS_CODES (${numbering.configured}), so payments are not settled by it: fix the setting, then pix-checkout numbering reset (pix-checkout numbering show tells what was seen)`;
    const why = cause ? { cause } : {};
    return {
      ready: store === 'ok' && partner === 'ok' && !mismatch,
      checks: { store, ...database, partner, ...codes },
      ...why,
      ...detail,
      ...reads,
      ...warnings,
    };
  }

  /** The check under way or kept: when it started, and the store's failure count then. */
  let kept: { at: number; failures: number | undefined; report: Promise<ReadinessReport>; settled?: ReadinessReport } | null = null;
  return () => {
    const failures = storeErrorCount(deps.store);
    const at = now();
    const usable =
      kept !== null &&
      // Under way: probes at once share it.
      (kept.settled === undefined ||
        // Kept only when ready, young, and no store operation failed since it began.
        (kept.settled.ready && at - kept.at < cacheMs && failures === kept.failures));
    if (!usable) {
      const entry: NonNullable<typeof kept> = { at, failures, report: check() };
      entry.report.then(
        (report) => (entry.settled = report),
        () => (kept = null),
      );
      kept = entry;
    }
    return kept!.report;
  };
}

/** An error's code for /ready's cause: words for an operator, never a host or a message (the answer is public). */
function codeOf(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^[\w.-]{1,40}$/.test(code) ? code : 'see the log';
}

/** What did not answer within the deadline: /ready names it rather than waiting for it. */
export class DeadlineError extends Error {
  override readonly name = 'DeadlineError';
}

/**
 * One deadline for a whole check: each step races what is left of it. The step itself is not
 * stopped (the store's own statement timeout ends it); only the answer stops waiting.
 */
function withDeadline(deadlineMs: number | undefined, clock: Clock): <T>(work: Promise<T>, what: string, withinMs?: number) => Promise<T> {
  if (deadlineMs === undefined) return (work) => work;
  const end = clock.monotonic() + deadlineMs;
  return <T>(work: Promise<T>, what: string, withinMs = deadlineMs) => {
    let timer: Timer | undefined;
    const waitMs = Math.max(0, Math.min(withinMs, end - clock.monotonic()));
    const late = new Promise<never>((_, reject) => {
      timer = clock.setTimeout(() => reject(new DeadlineError(`${what} did not answer within ${Math.min(withinMs, deadlineMs)} ms`)), waitMs);
    });
    return Promise.race([work, late]).finally(() => clock.clearTimer(timer));
  };
}
