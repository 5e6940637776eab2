/**
 * One voice for a store outage: while the database is down every loop of an instance fails (the
 * reconciler, the merchant deliveries, the connection that listens for other instances' changes, the
 * pool's idle connections), each on its own schedule, so logging each failure wrote a line every
 * second or so per instance. The loops tell this reporter instead, and it logs three kinds of line:
 *
 * - when the outage starts (error): `the store is unavailable`, with the real cause
 *   (`ECONNREFUSED`, `statement timeout (57014)`...) and the part that found it;
 * - at most once per `repeatMs` (a minute) while it lasts (error): `the store is still unavailable`,
 *   with how long so far, the failures since the last line and the parts failing;
 * - when it ends (warn): `the store is available again`, with how long it lasted, how many
 *   failures, and the first and last causes.
 *
 * Each failure in between is logged at debug level. Work refused or skipped because of the store
 * (a partner's notification answered 503, a payment's poll) is counted by what it was (`what`) and
 * the counts summed up in the lines above, so each such failure needs no line above warn of its own.
 * An outage ends at the first store operation a part reports done. A part that has no success to
 * report (a query it ran once) can still report failures. Any module may call it: it knows nothing
 * of who calls, only a source name for the log.
 */
import type { Logger } from '../log.ts';

export interface StoreOutageOptions {
  log: Logger;
  now?: () => number;
  /** The least time between two lines while an outage lasts (default a minute). */
  repeatMs?: number;
}

/** Names of the SQLSTATE codes an outage shows, for the log. */
const SQLSTATE_NAMES: Record<string, string> = {
  '57014': 'statement timeout',
  '57P01': 'the server shut down',
  '57P02': 'the server crashed',
  '57P03': 'the server is starting',
  '53300': 'too many connections',
  '53100': 'disk full',
  '08006': 'connection failure',
  '08001': 'cannot connect',
  '25006': 'read-only',
  '40P01': 'deadlock',
};

/** The real cause of a store error, in a few words: the driver's code when it has one, else its message's first line. */
export function outageCause(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && code !== '' && code !== 'connection') {
    const name = SQLSTATE_NAMES[code];
    return name ? `${name} (${code})` : code;
  }
  const message = error instanceof Error ? error.message : String(error);
  // pg's own words for a connection that went away or could not be made.
  const driver =
    /Connection terminated(?: unexpectedly)?|Connection terminated due to connection timeout|timeout exceeded when trying to connect|connect ECONNREFUSED/i.exec(
      message,
    );
  if (driver) return driver[0].startsWith('connect ECONNREFUSED') ? 'ECONNREFUSED' : driver[0];
  return message.split('\n')[0]!.slice(0, 200);
}

export class StoreOutage {
  private readonly log: Logger;
  private readonly now: () => number;
  private readonly repeatMs: number;
  private outage: {
    since: number;
    lastLineAt: number;
    failures: number;
    sinceLastLine: number;
    firstCause: string;
    lastCause: string;
    sources: Set<string>;
    /** Work refused or skipped because of the outage, by what it was: since the last line, and in all. */
    refused: Map<string, number>;
    refusedInAll: Map<string, number>;
  } | null = null;

  constructor(options: StoreOutageOptions) {
    this.log = options.log;
    this.now = options.now ?? Date.now;
    this.repeatMs = options.repeatMs ?? 60_000;
  }

  /** Whether an outage is going on (a failure not followed by a success yet). */
  get down(): boolean {
    return this.outage !== null;
  }

  /**
   * A store operation of `source` failed with `error`; `what`, when it cost a piece of work (`notifications
   * refused`, `payment polls failed`): counted in the outage's lines.
   */
  failed(source: string, error: unknown, what?: string): void {
    const at = this.now();
    const cause = outageCause(error);
    const outage = this.outage;
    if (!outage) {
      const refused = new Map(what ? [[what, 1]] : []);
      this.outage = {
        since: at,
        lastLineAt: at,
        failures: 1,
        sinceLastLine: 0,
        firstCause: cause,
        lastCause: cause,
        sources: new Set([source]),
        refused: new Map(),
        refusedInAll: refused,
      };
      // The first failure's own sentence too: the store names the real cause there (a lock or statement
      // timeout, a refused connection, the login), which the short cause cannot carry whole.
      const err = error instanceof Error ? { message: error.message, code: (error as { code?: unknown }).code } : undefined;
      this.log.error({ outage: 'store', source, cause, err }, `the store is unavailable (${cause}); logged again once a minute while it lasts`);
      return;
    }
    outage.failures++;
    outage.sinceLastLine++;
    if (what) {
      outage.refused.set(what, (outage.refused.get(what) ?? 0) + 1);
      outage.refusedInAll.set(what, (outage.refusedInAll.get(what) ?? 0) + 1);
    }
    outage.lastCause = cause;
    outage.sources.add(source);
    if (at - outage.lastLineAt < this.repeatMs) {
      // Each failure still leaves a trace for whoever asks for it.
      this.log.debug({ outage: 'store', source, cause }, 'store operation failed during an outage');
      return;
    }
    this.log.error(
      { outage: 'store', cause, down_ms: at - outage.since, failures: outage.sinceLastLine, sources: [...outage.sources], ...refusedFields(outage.refused) },
      `the store is still unavailable (${cause}), for ${seconds(at - outage.since)}${refusedWords(outage.refused, ' since the last line')}`,
    );
    outage.lastLineAt = at;
    outage.sinceLastLine = 0;
    outage.sources = new Set();
    outage.refused = new Map();
  }

  /** Now, on the reporter's clock: when an operation starts, for `recovered`. */
  started(): number {
    return this.now();
  }

  /**
   * A store operation of `source` succeeded: an outage going on ends. `startedAt` (from `started()`):
   * a success of an operation that began before the outage's first failure says nothing about the
   * store now (it was already under way), so the outage goes on; it would otherwise end and start
   * again, two lines for one outage.
   */
  recovered(source: string, startedAt = Number.POSITIVE_INFINITY): void {
    const outage = this.outage;
    if (!outage || startedAt < outage.since) return;
    this.outage = null;
    const lasted = this.now() - outage.since;
    this.log.warn(
      {
        outage: 'store',
        source,
        down_ms: lasted,
        failures: outage.failures,
        cause: outage.firstCause,
        ...(outage.lastCause !== outage.firstCause ? { last_cause: outage.lastCause } : {}),
        ...refusedFields(outage.refusedInAll),
      },
      `the store is available again after ${seconds(lasted)} (${outage.firstCause})${refusedWords(outage.refusedInAll, '')}`,
    );
  }
}

/** The counts of work refused, as a log field. */
function refusedFields(refused: Map<string, number>): { refused?: Record<string, number> } {
  return refused.size > 0 ? { refused: Object.fromEntries(refused) } : {};
}

/** The counts of work refused, in words: `; 12 notifications refused, 3 payment polls failed`. */
function refusedWords(refused: Map<string, number>, when: string): string {
  if (refused.size === 0) return '';
  return `; ${[...refused].map(([what, n]) => `${n} ${what}`).join(', ')}${when}`;
}

const seconds = (ms: number) => `${(ms / 1000).toFixed(ms < 10_000 ? 1 : 0)} s`;
