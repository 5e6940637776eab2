/**
 * A chunk of its own (dist/pix-checkout.status.js), loaded beside the later one (src/later.ts) once
 * the first QR is on screen (src/load-later.ts): it imports nothing of the main script but types;
 * what it needs of the contract comes in its options.
 */
import type { ReactiveController, ReactiveControllerHost } from 'lit';
import type { ProxyClient } from '../api/client.ts';
import type { PaymentView } from '../shared/contract.ts';
import type { PaymentStatus } from '../shared/status.ts';
import type { PixEnvironment } from './environment.ts';

/** `live`: answers arrive; `reconnecting`: the last attempt failed; `offline`: the browser is offline. */
export type Connection = 'live' | 'reconnecting' | 'offline';
export type Transport = 'stream' | 'polling';

export interface StatusControllerOptions {
  client: () => ProxyClient;
  env: () => PixEnvironment;
  onView: (view: PaymentView) => void;
  onError: (error: unknown) => void;
  onConnection: (connection: Connection) => void;
  /** The status stream's event name and how one's data is read: the view, or the error to report (src/api/client.ts). */
  stream: { event: string; read: (data: string) => PaymentView | Error };
  /** Whether a status is final (src/shared/status.ts): nothing follows it. */
  isFinal: (status: PaymentStatus) => boolean;
}

/** Polling cadence (Adyen's): every 2 s for the first minute, then every 10 s. */
export const POLL_FAST_MS = 2000;
export const POLL_SLOW_MS = 10_000;
export const POLL_FAST_FOR_MS = 60_000;
/** Longest wait between reads while they keep failing. */
export const MAX_BACKOFF_MS = 60_000;
/** Stream errors without a single message before giving up on the stream for polling. */
const STREAM_ATTEMPTS = 3;

const RESUME_EVENTS = ['focus', 'pageshow', 'online'] as const;

/**
 * Follows a payment until it reaches a final status: the proxy's Server-Sent Events stream first;
 * polling when streams are refused (HTTP error, no EventSource) or keep failing. Polling reads are
 * chained (the next is scheduled only when the last has answered), so two are never in flight; they
 * pause while the page is hidden or offline, and run at once when the customer comes back.
 */
export class StatusController implements ReactiveController {
  #reference: string | null = null;
  #transport: Transport = 'polling';
  #startedAt = 0;
  #timer: unknown;
  #inFlight: AbortController | null = null;
  #failures = 0;
  #stream: EventSource | null = null;
  #streamErrors = 0;
  #connected = false;

  readonly #options: StatusControllerOptions;

  constructor(host: ReactiveControllerHost, options: StatusControllerOptions) {
    this.#options = options;
    host.addController(this);
  }

  /** Starts following `reference`, whose current view the caller already has. */
  follow(reference: string): void {
    this.stop();
    this.#reference = reference;
    this.#failures = 0;
    this.#streamErrors = 0;
    this.#startedAt = this.#env().clock.now();
    this.#transport = this.#env().EventSource ? 'stream' : 'polling';
    if (this.#connected) this.#run(false);
  }

  stop(): void {
    this.#pause();
    this.#reference = null;
  }

  /** Checks at once (the customer came back, the countdown ran out); never a second request in flight. */
  checkNow(): void {
    if (this.#reference === null || !this.#connected) return;
    if (this.#transport === 'stream') {
      if (this.#stream?.readyState !== 1 /* OPEN */) this.#openStream();
    } else if (!this.#inFlight) {
      this.#clearTimer();
      void this.#read();
    }
  }

  hostConnected(): void {
    this.#connected = true;
    document.addEventListener('visibilitychange', this.#onVisibility);
    for (const type of RESUME_EVENTS) window.addEventListener(type, this.#onResume);
    window.addEventListener('offline', this.#onOffline);
    if (this.#reference !== null) this.#run(true);
  }

  hostDisconnected(): void {
    this.#connected = false;
    document.removeEventListener('visibilitychange', this.#onVisibility);
    for (const type of RESUME_EVENTS) window.removeEventListener(type, this.#onResume);
    window.removeEventListener('offline', this.#onOffline);
    this.#pause();
  }

  #env(): PixEnvironment {
    return this.#options.env();
  }

  #run(now: boolean): void {
    if (this.#transport === 'stream') this.#openStream();
    else if (now) this.checkNow();
    else this.#schedule(this.#interval());
  }

  readonly #onVisibility = () => {
    if (this.#env().hidden()) {
      if (this.#transport === 'polling') this.#clearTimer();
    } else this.checkNow();
  };

  readonly #onResume = () => this.checkNow();

  readonly #onOffline = () => {
    if (this.#reference === null) return;
    this.#options.onConnection('offline');
    if (this.#transport === 'polling') this.#clearTimer();
  };

  #pause(): void {
    this.#clearTimer();
    this.#inFlight?.abort();
    this.#inFlight = null;
    this.#closeStream();
  }

  #clearTimer(): void {
    this.#env().clock.clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  #interval(): number {
    return this.#env().clock.now() - this.#startedAt < POLL_FAST_FOR_MS ? POLL_FAST_MS : POLL_SLOW_MS;
  }

  #schedule(delayMs: number): void {
    this.#clearTimer();
    const env = this.#env();
    // Hidden or offline: no timer at all; visibilitychange / focus / pageshow / online call checkNow.
    if (env.hidden() || !env.online()) return;
    this.#timer = env.clock.setTimeout(() => void this.#read(), delayMs);
  }

  async #read(): Promise<void> {
    const reference = this.#reference;
    if (reference === null || this.#inFlight) return;
    const abort = new AbortController();
    this.#inFlight = abort;
    try {
      const view = await this.#options.client().getPayment(reference, abort.signal);
      if (abort.signal.aborted) return;
      this.#inFlight = null;
      this.#failures = 0;
      this.#receive(view);
      if (this.#reference !== null) this.#schedule(this.#interval());
    } catch (error) {
      if (abort.signal.aborted) return;
      this.#inFlight = null;
      this.#failures++;
      this.#options.onConnection(this.#env().online() ? 'reconnecting' : 'offline');
      this.#options.onError(error);
      // Exponential backoff with jitter, so many widgets do not retry in step after an outage.
      const backoff = Math.min(MAX_BACKOFF_MS, this.#interval() * 2 ** this.#failures);
      this.#schedule(backoff / 2 + this.#env().random() * (backoff / 2));
    }
  }

  #receive(view: PaymentView): void {
    this.#options.onConnection('live');
    if (this.#options.isFinal(view.status)) {
      // Final: stop before telling the host, so nothing reconnects after the stream ends.
      this.#pause();
      this.#reference = null;
    }
    this.#options.onView(view);
  }

  #openStream(): void {
    this.#closeStream();
    const Source = this.#env().EventSource;
    if (!Source || this.#reference === null) return this.#fallBack();
    const stream = new Source(this.#options.client().eventsUrl(this.#reference));
    this.#stream = stream;
    stream.addEventListener(this.#options.stream.event, (event) => {
      const read = this.#options.stream.read((event as MessageEvent<string>).data);
      if (read instanceof Error) return this.#options.onError(read);
      this.#streamErrors = 0;
      this.#receive(read);
    });
    stream.onerror = () => {
      if (this.#stream !== stream) return;
      // CLOSED: the server refused the stream (HTTP error, not text/event-stream): poll instead.
      // CONNECTING: the connection dropped; EventSource retries by itself after `retry:`.
      if (stream.readyState === 2 /* CLOSED */ || ++this.#streamErrors >= STREAM_ATTEMPTS) return this.#fallBack();
      this.#options.onConnection(this.#env().online() ? 'reconnecting' : 'offline');
    };
  }

  #closeStream(): void {
    this.#stream?.close();
    this.#stream = null;
  }

  #fallBack(): void {
    this.#closeStream();
    this.#transport = 'polling';
    this.checkNow();
  }
}
