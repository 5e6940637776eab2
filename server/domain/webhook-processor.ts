/**
 * Processing stored notifications, after the answer: each is confirmed by reading the payment or
 * transfer from the partner (the body is never trusted), then only a final status is applied, and a
 * final one is never changed. The same event twice, or events out of order, change nothing. An
 * event whose processing fails (the partner is down) stays unprocessed and is taken up again by the
 * reconciler's next pass, and at startup: a crash between the 202 and the processing loses nothing.
 */
import type { Logger } from '../log.ts';
import { parseWebhook } from '../partner/wire.ts';
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
}

/** What processing made of an event (stored as `webhook_events.result`). */
export type ProcessResult = 'applied' | 'already_final' | 'not_confirmed' | 'unknown_reference' | 'invalid';

export class WebhookProcessor {
  private readonly inFlight = new Map<number, Promise<void>>();
  private readonly waiting: (() => void)[] = [];
  private running = 0;
  private readonly concurrency: number;
  private closed = false;

  constructor(private readonly deps: ProcessorDeps) {
    this.concurrency = deps.concurrency;
  }

  /** Processes one stored event (once at a time per id); failures leave it for the next pass. */
  process(id: number, rawBody: string): Promise<void> {
    const existing = this.inFlight.get(id);
    if (existing) return existing;
    const work = this.slot(() => this.run(id, rawBody)).finally(() => this.inFlight.delete(id));
    this.inFlight.set(id, work);
    return work;
  }

  /** Takes up every stored event not processed yet (startup, and each reconciler pass). */
  async drain(limit = 1000): Promise<void> {
    if (this.closed) return;
    const events = await this.deps.store.webhookEvents.unprocessed(limit);
    await Promise.all(events.map((e) => this.process(e.id, e.rawBody)));
  }

  /** Resolves when nothing is in flight. */
  async idle(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight.values()]);
  }

  close(): void {
    this.closed = true;
  }

  private async slot<T>(task: () => Promise<T>): Promise<T> {
    if (this.running >= this.concurrency) await new Promise<void>((resolve) => this.waiting.push(resolve));
    this.running++;
    try {
      return await task();
    } finally {
      this.running--;
      this.waiting.shift()?.();
    }
  }

  private async run(id: number, rawBody: string): Promise<void> {
    if (this.closed) return;
    const log = this.deps.log.child({ webhook_event: id });
    let result: ProcessResult;
    try {
      result = await this.apply(rawBody);
    } catch (error) {
      // The partner could not confirm it now: left unprocessed, taken up again by the next pass.
      log.warn({ err: { message: error instanceof Error ? error.message : String(error) } }, 'webhook not confirmed yet; will retry');
      return;
    }
    if (this.closed) return;
    try {
      await this.deps.store.webhookEvents.markProcessed(id, this.deps.now(), result);
    } catch (error) {
      // Processing again is harmless (idempotent).
      log.warn({ err: { message: (error as Error).message } }, 'could not mark a webhook processed');
      return;
    }
    log.info({ result }, 'webhook processed');
  }

  private async apply(rawBody: string): Promise<ProcessResult> {
    let json: unknown;
    try {
      json = JSON.parse(rawBody);
    } catch {
      return 'invalid';
    }
    const event = parseWebhook(json);
    if (!event) return 'invalid';
    const reference = event.externalReference;

    if (event.kind === 'payment') {
      const stored = await this.deps.store.getPayment(reference);
      if (!stored) return 'unknown_reference';
      if (stored.final) return 'already_final';
      // Confirmed with the partner; the body's status is not used.
      const record = await this.deps.payments.confirm(reference);
      return record?.final ? 'applied' : 'not_confirmed';
    }

    const known = await this.deps.store.transfers.get(reference);
    if (known?.final) return 'already_final';
    // Confirmed with the service, which knows whose it is: one it does not know is not ours.
    const final = await this.deps.transfers.confirm(reference);
    if (final === null) return 'unknown_reference';
    return final ? 'applied' : 'not_confirmed';
  }
}
