import type { ReactiveController, ReactiveControllerHost } from 'lit';
import type { PaymentView } from '../shared/contract.ts';
import { isFinalStatus } from '../shared/status.ts';

export interface StatusControllerOptions {
  read: (reference: string, signal: AbortSignal) => Promise<PaymentView>;
  onView: (view: PaymentView) => void;
  onError: (error: unknown) => void;
  /** Time between two reads while all is well. */
  intervalMs?: number;
  /** Longest wait between reads while they keep failing. */
  maxBackoffMs?: number;
}

/**
 * Polls a payment until it reaches a final status. Reads are chained (the next is scheduled only when
 * the last has answered), so two are never in flight; failures back off with jitter.
 */
export class StatusController implements ReactiveController {
  private reference: string | null = null;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private abort: AbortController | null = null;
  private failures = 0;

  constructor(
    host: ReactiveControllerHost,
    private readonly options: StatusControllerOptions,
  ) {
    host.addController(this);
  }

  /** Starts following `reference`; the first read comes after one interval. */
  follow(reference: string): void {
    this.stop();
    this.reference = reference;
    this.failures = 0;
    this.schedule(this.interval());
  }

  stop(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.abort?.abort();
    this.abort = null;
    this.reference = null;
  }

  hostConnected(): void {}

  hostDisconnected(): void {
    this.stop();
  }

  private interval(): number {
    return this.options.intervalMs ?? 2000;
  }

  private schedule(delayMs: number): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.tick(), delayMs);
  }

  private async tick(): Promise<void> {
    const reference = this.reference;
    if (reference === null) return;
    const abort = new AbortController();
    this.abort = abort;
    try {
      const view = await this.options.read(reference, abort.signal);
      if (abort.signal.aborted) return;
      this.failures = 0;
      this.options.onView(view);
      if (isFinalStatus(view.status)) {
        this.reference = null;
        return;
      }
      this.schedule(this.interval());
    } catch (error) {
      if (abort.signal.aborted) return;
      this.failures++;
      this.options.onError(error);
      const backoff = Math.min(this.options.maxBackoffMs ?? 30_000, this.interval() * 2 ** this.failures);
      this.schedule(backoff / 2 + Math.random() * (backoff / 2));
    } finally {
      if (this.abort === abort) this.abort = null;
    }
  }
}
