import type { ReactiveController, ReactiveControllerHost } from 'lit';
import type { Translation } from '../locales/translation.ts';
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

/**
 * When screen readers hear the time left (Adyen's cadence): every 3 minutes, every minute in the last
 * 5, every 30 s in the last minute. Returns a key that changes exactly at those moments.
 */
export function announcementSlot(seconds: number): string {
  if (seconds > 300) return `a${Math.ceil(seconds / 180)}`;
  if (seconds > 60) return `b${Math.ceil(seconds / 60)}`;
  return `c${Math.ceil(seconds / 30)}`;
}

/**
 * What the time-left live region says: the time left when its announcement slot changes, and, once
 * per code, the time left with the "I need more time" offer when that offer appears (or is due on
 * arrival). Null: nothing new to say.
 */
export class TimeAnnouncements {
  #lastSlot: string | null = null;
  /** The reference whose offer was announced. */
  #offered: string | null = null;

  /** `seconds`: null when no pending code is on screen. */
  next(t: Translation, seconds: number | null, reference: string | null, offersMoreTime: boolean): string | null {
    let said: string | null = null;
    if (seconds === null) this.#lastSlot = null;
    else {
      const slot = announcementSlot(seconds);
      if (this.#lastSlot !== null && slot !== this.#lastSlot && seconds > 0) said = t.timeLeft(...splitSeconds(seconds));
      this.#lastSlot = slot;
    }
    if (offersMoreTime && this.#offered !== reference) {
      this.#offered = reference;
      said = `${t.timeLeft(...splitSeconds(seconds!))} ${t.moreTimeOffer}`;
    }
    return said;
  }
}
