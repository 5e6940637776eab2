/**
 * Passing outcomes on to the merchant's backend (PIX_MERCHANT_WEBHOOK_URL). Each outcome event is a
 * row of the store's outbox, written in the same transaction as the status change, unique per event
 * id. This worker POSTs due rows, signed (server/signature.ts), with the `Pix-Checkout-Event-Id`
 * header; a 2xx is delivered, anything else is retried with exponential backoff and jitter (10 s,
 * 20 s, 40 s... capped at 1 h) until `giveUpAfterMs` (24 h) after the outcome, then marked failed
 * (`pix-checkout deliveries replay` sends it again). Every attempt is recorded. Delivery is at least
 * once: a crash after the merchant answered but before the answer was recorded sends it again, with
 * the same event id, so the merchant's receiver must deduplicate on it.
 */
import { setMaxListeners } from 'node:events';
import type { Logger } from '../log.ts';
import { EVENT_ID_HEADER, SIGNATURE_HEADER, signWebhook } from './signature.ts';
import type { OutboxEntry, Store } from '../store/store.ts';

export interface MerchantNotifierOptions {
  store: Store;
  url: string;
  secret: string;
  /** The proxy's clock, for scheduling (injected in tests). */
  now: () => number;
  /** The wall clock for the signature's timestamp (the merchant compares it with its own). */
  wallNow?: () => number;
  log: Logger;
  /** Deadline of one attempt (default 10 s). */
  timeoutMs?: number;
  /** First retry delay (default 10 s), doubled each time, capped at `maxDelayMs` (default 1 h). */
  baseDelayMs?: number;
  maxDelayMs?: number;
  /** Stop retrying this long after the outcome (default 24 h). */
  giveUpAfterMs?: number;
  /** How often due deliveries are looked for (real time, default 1000 ms); new outcomes wake it at once. */
  pollMs?: number;
  concurrency?: number;
  random?: () => number;
}

export const DEFAULT_GIVE_UP_AFTER_MS = 24 * 3600_000;

export class MerchantNotifier {
  private readonly inFlight = new Set<number>();
  private timer: ReturnType<typeof setTimeout> | undefined;
  private current: Promise<number> | null = null;
  private again = false;
  private stopped = true;
  private readonly closing = new AbortController();

  constructor(private readonly options: MerchantNotifierOptions) {
    // One listener per delivery in flight.
    setMaxListeners(0, this.closing.signal);
  }

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.schedule(0);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    this.closing.abort();
    await this.current?.catch(() => undefined);
  }

  /** A new outcome was recorded: look for due deliveries now. */
  wake(): void {
    if (this.stopped) return;
    if (this.current) this.again = true;
    else this.schedule(0);
  }

  /** Delivers what is due now; resolves to how many attempts were made. */
  runOnce(): Promise<number> {
    if (this.current) {
      this.again = true;
      return this.current;
    }
    this.current = this.pass().finally(() => {
      this.current = null;
      if (this.again && !this.stopped) {
        this.again = false;
        this.schedule(0);
      }
    });
    return this.current;
  }

  private schedule(delay: number): void {
    clearTimeout(this.timer);
    const timer = setTimeout(async () => {
      try {
        await this.runOnce();
      } catch (error) {
        this.options.log.error({ err: { message: (error as Error).message } }, 'merchant delivery pass failed');
      }
      // A wake() during the pass has already set a sooner timer: keep it rather than the poll.
      if (!this.stopped && this.timer === timer) this.schedule(this.options.pollMs ?? 1000);
    }, delay);
    timer.unref?.();
    this.timer = timer;
  }

  private async pass(): Promise<number> {
    let attempts = 0;
    for (;;) {
      const due = (await this.options.store.outbox.due(this.options.now(), 200)).filter((e) => !this.inFlight.has(e.id));
      if (due.length === 0 || this.closing.signal.aborted) return attempts;
      let next = 0;
      const worker = async () => {
        while (next < due.length && !this.closing.signal.aborted) {
          await this.deliver(due[next++]!);
          attempts++;
        }
      };
      await Promise.all(Array.from({ length: Math.min(this.options.concurrency ?? 8, due.length) }, worker));
      // Whatever failed is scheduled later; loop only while more was due than one batch.
      if (due.length < 200) return attempts;
    }
  }

  private async deliver(entry: OutboxEntry): Promise<void> {
    const { store, url, secret, now, log } = this.options;
    this.inFlight.add(entry.id);
    const started = performance.now();
    const at = now();
    let status: number | null = null;
    let error: string | null = null;
    try {
      const response = await fetch(url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'user-agent': 'pix-checkout-webhooks',
          [EVENT_ID_HEADER]: entry.eventId,
          [SIGNATURE_HEADER]: signWebhook(entry.body, secret, (this.options.wallNow ?? Date.now)()),
        },
        body: entry.body,
        redirect: 'manual',
        signal: AbortSignal.any([AbortSignal.timeout(this.options.timeoutMs ?? 10_000), this.closing.signal]),
      });
      status = response.status;
      await response.body?.cancel().catch(() => undefined);
      if (status < 200 || status >= 300) error = `HTTP ${status}`;
    } catch (err) {
      error = (err as Error).name === 'TimeoutError' ? 'timeout' : 'connection_failed';
    }
    try {
      if (this.closing.signal.aborted && status === null) return; // shutting down: not an attempt
      const durationMs = Math.round(performance.now() - started);
      if (error === null) {
        await store.outbox.recordAttempt(entry.id, { at, status, error, durationMs }, { state: 'delivered', nextAttemptAt: at, lastError: null, deliveredAt: at });
        return;
      }
      const n = entry.attempts + 1;
      const base = this.options.baseDelayMs ?? 10_000;
      const cap = this.options.maxDelayMs ?? 3600_000;
      const delay = Math.min(base * 2 ** Math.min(n - 1, 30), cap) * (0.5 + (this.options.random ?? Math.random)() / 2);
      const giveUp = at + delay > entry.createdAt + (this.options.giveUpAfterMs ?? DEFAULT_GIVE_UP_AFTER_MS);
      await store.outbox.recordAttempt(entry.id, { at, status, error, durationMs }, { state: giveUp ? 'failed' : 'pending', nextAttemptAt: giveUp ? at : Math.round(at + delay), lastError: error, deliveredAt: null });
      log.warn({ delivery: entry.id, event_id: entry.eventId, attempt: n, error, gave_up: giveUp }, 'merchant webhook not delivered');
    } finally {
      this.inFlight.delete(entry.id);
    }
  }
}
