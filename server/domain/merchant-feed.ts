/**
 * What the merchant's server reads beside its checkouts: the accounting export (report.ts) and the
 * feed of outcome events `pix-checkout listen` forwards. The feed is the outbox itself, read in the
 * order it was written (its row ids), so it holds every instance's events, survives a reconnection
 * (the SSE id is the row id: Last-Event-ID resumes after it) and carries each event's body byte for
 * byte as the webhook sends it. New rows are looked for when this instance records an outcome, and
 * every `pollMs` for the others'.
 */
import type { ReportFormat } from '../../src/shared/merchant.ts';
import type { Store } from '../store/store.ts';
import { reportChunks } from './report.ts';
import { REAL_CLOCK, type Clock, type Runtime } from '../runtime/runtime.ts';

/** One outcome event of the feed: its sequence number (the SSE id), its type and its JSON. */
export interface FeedEvent {
  seq: number;
  type: string;
  body: string;
}

export interface MerchantFeedOptions {
  store: Store;
  now: () => number;
  /** Time and timers (default the real ones). */
  runtime?: Pick<Runtime, 'clock'> | undefined;
  /** The merchant's time zone (PIX_TIME_ZONE), the export's default. */
  timeZone: string;
  /** How often the feed looks for events other instances recorded (real time). */
  pollMs: number;
  /** A comment line this often keeps an idle stream open through proxies (real time). */
  keepAliveMs: number;
}

/** Rows read from the outbox at a time. */
const FEED_PAGE = 100;

export class MerchantFeed {
  private readonly listeners = new Set<() => void>();
  /** Aborted by close(): every open feed ends (a shutdown does not wait for their clients). */
  private readonly closing = new AbortController();

  constructor(private readonly options: MerchantFeedOptions) {}

  private get clock(): Clock {
    return this.options.runtime?.clock ?? REAL_CLOCK;
  }

  /** Ends every open feed now (shutdown): their clients reconnect to another instance and resume (Last-Event-ID). */
  close(): void {
    this.closing.abort();
  }

  get timeZone(): string {
    return this.options.timeZone;
  }

  /** An outcome was recorded here (Outcomes.onRecorded): open feeds look now. */
  recorded(): void {
    for (const wake of this.listeners) wake();
  }

  /** The export's text chunks, streamed a page at a time (report.ts). */
  report(query: { from: string; to: string; format: ReportFormat; timeZone?: string | undefined }): AsyncGenerator<string> {
    return reportChunks({
      reports: this.options.store.reports,
      from: query.from,
      to: query.to,
      zone: query.timeZone ?? this.options.timeZone,
      format: query.format,
      now: this.options.now(),
    });
  }

  /**
   * Outcome events written after `after` (null: from now on), as they are written, until `signal`
   * aborts; `null` now and then when nothing came for `keepAliveMs` (the stream's keep-alive).
   * A body the retention pruned is skipped.
   */
  async *events(after: number | null, client: AbortSignal): AsyncGenerator<FeedEvent | null> {
    const signal = AbortSignal.any([client, this.closing.signal]);
    let seq = after ?? (await this.options.store.outbox.lastId());
    let idleSince = this.clock.monotonic();
    while (!signal.aborted) {
      const rows = await this.options.store.outbox.after(seq, FEED_PAGE);
      for (const row of rows) {
        seq = row.id;
        if (row.body !== '') yield { seq: row.id, type: row.type, body: row.body };
      }
      if (rows.length === FEED_PAGE) continue;
      if (rows.length > 0) idleSince = this.clock.monotonic();
      if (this.clock.monotonic() - idleSince >= this.options.keepAliveMs) {
        idleSince = this.clock.monotonic();
        yield null;
      }
      await this.wait(signal);
    }
  }

  private wait(signal: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        this.clock.clearTimer(timer);
        this.listeners.delete(done);
        signal.removeEventListener('abort', done);
        resolve();
      };
      const timer = this.clock.setTimeout(done, this.options.pollMs);
      this.listeners.add(done);
      signal.addEventListener('abort', done, { once: true });
    });
  }
}
