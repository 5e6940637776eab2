/**
 * The process's time, timers, chance and outbound fetch, as one value the composition hands down
 * (createServices' `runtime`, the partner client's `runtime` option). Production takes the real ones
 * (REAL_RUNTIME); the simulation hands in a clock it steps and a seeded random source, so a seed
 * replays the same run by construction. The domain reads none of these globals itself (eslint's
 * rule on server/domain), so no call escapes the one that was handed in.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { setTimeout as sleepFor } from 'node:timers/promises';

/** A timer a Clock started: Node's Timeout, or the simulation's own. */
export interface Timer {
  /** Lets the process exit while it waits (Node's `unref`). */
  unref: () => Timer;
}

export interface Clock {
  /** Epoch milliseconds: what records carry. */
  now: () => number;
  /** Milliseconds from an arbitrary origin that never goes back: for durations and pacing. */
  monotonic: () => number;
  setTimeout: (callback: () => void, ms: number) => Timer;
  setInterval: (callback: () => void, ms: number) => Timer;
  /** Stops a timer of setTimeout or setInterval; undefined is ignored. */
  clearTimer: (timer: Timer | undefined) => void;
  /** Resolves after `ms`; `unref` lets the process exit meanwhile. */
  sleep: (ms: number, options?: { unref?: boolean }) => Promise<void>;
}

export interface RandomSource {
  /** A version 4 UUID: the transaction ids sent to the partner, idempotency keys. */
  uuid: () => string;
  /** Random bytes: ids of checkouts and payouts, a cipher's IV. */
  bytes: (size: number) => Buffer;
  /** A number in [0, 1): jitter of retries. */
  fraction: () => number;
}

export interface Runtime {
  clock: Clock;
  random: RandomSource;
  /** The HTTP client of the merchant's deliveries (the partner client has its own transport). */
  fetch: typeof fetch;
}

export const REAL_CLOCK: Clock = {
  now: () => Date.now(),
  monotonic: () => performance.now(),
  setTimeout: (callback, ms) => setTimeout(callback, ms),
  setInterval: (callback, ms) => setInterval(callback, ms),
  clearTimer: (timer) => clearTimeout(timer as ReturnType<typeof setTimeout> | undefined),
  sleep: async (ms, options) => void (await sleepFor(ms, undefined, { ref: !options?.unref })),
};

export const CRYPTO_RANDOM: RandomSource = {
  uuid: () => randomUUID(),
  bytes: (size) => randomBytes(size),
  fraction: () => Math.random(),
};

export const REAL_RUNTIME: Runtime = {
  clock: REAL_CLOCK,
  random: CRYPTO_RANDOM,
  fetch: (input, init) => globalThis.fetch(input, init),
};

/** The runtime given, its missing parts real. */
export function runtimeOf(given?: Partial<Runtime>): Runtime {
  return {
    clock: given?.clock ?? REAL_CLOCK,
    random: given?.random ?? CRYPTO_RANDOM,
    fetch: given?.fetch ?? REAL_RUNTIME.fetch,
  };
}
