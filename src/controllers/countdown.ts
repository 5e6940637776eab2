import type { ReactiveController, ReactiveControllerHost } from 'lit';
import type { Clock } from './environment.ts';

/**
 * Time left until the server's expiry, from the wall clock (no drift from counting ticks) and corrected
 * for a wrong device clock with the server's time. Because it reads `expires_at` from the server, a
 * reload shows the same time left. Re-renders the host on each whole second.
 */
export class CountdownController implements ReactiveController {
  #expiresAt = NaN;
  #startedAt = NaN;
  /** Server clock minus device clock, in ms. */
  #skew = 0;
  #timer: unknown;
  #connected = false;

  readonly #host: ReactiveControllerHost;
  readonly #clock: () => Clock;
  readonly #onZero: () => void;

  constructor(host: ReactiveControllerHost, clock: () => Clock, onZero: () => void) {
    this.#host = host;
    this.#clock = clock;
    this.#onZero = onZero;
    host.addController(this);
  }

  /** Follows a payment's expiry; `serverTime` is when the server answered. */
  set(createdAt: string, expiresAt: string, serverTime: string): void {
    this.#startedAt = Date.parse(createdAt);
    this.#expiresAt = Date.parse(expiresAt);
    const server = Date.parse(serverTime);
    this.#skew = Number.isFinite(server) ? server - this.#clock().now() : 0;
    this.#schedule();
  }

  stop(): void {
    this.#clock().clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#expiresAt = NaN;
  }

  /** Whole seconds left (rounded up, so 0 means expired); null when nothing is counted. */
  get seconds(): number | null {
    const ms = this.#remainingMs();
    return ms === null ? null : Math.max(0, Math.ceil(ms / 1000));
  }

  /** Share of the code's lifetime left, 0 to 1. */
  get fraction(): number {
    const ms = this.#remainingMs();
    const total = this.#expiresAt - this.#startedAt;
    return ms === null || !(total > 0) ? 0 : Math.min(1, Math.max(0, ms / total));
  }

  hostConnected(): void {
    this.#connected = true;
    this.#schedule();
  }

  hostDisconnected(): void {
    this.#connected = false;
    this.#clock().clearTimeout(this.#timer);
  }

  #remainingMs(): number | null {
    return Number.isFinite(this.#expiresAt) ? this.#expiresAt - (this.#clock().now() + this.#skew) : null;
  }

  #schedule(): void {
    const clock = this.#clock();
    clock.clearTimeout(this.#timer);
    const ms = this.#remainingMs();
    if (ms === null || !this.#connected) return;
    if (ms <= 0) {
      this.#onZero();
      return;
    }
    // Wake at the next whole second of time left, so the display changes exactly then.
    this.#timer = clock.setTimeout(
      () => {
        this.#host.requestUpdate();
        this.#schedule();
      },
      ms % 1000 || 1000,
    );
  }
}

/** Whole seconds as [hours, minutes, seconds]: what the display and the announcement both read. */
export function splitSeconds(seconds: number): [h: number, m: number, s: number] {
  return [Math.floor(seconds / 3600), Math.floor((seconds % 3600) / 60), seconds % 60];
}

/** 59:07, or 1:00:00 when an hour or more is left. */
export function formatTimeLeft(seconds: number): string {
  const [h, m, s] = splitSeconds(seconds);
  const two = (n: number) => String(n).padStart(2, '0');
  return `${h > 0 ? `${h}:` : ''}${two(m)}:${two(s)}`;
}
