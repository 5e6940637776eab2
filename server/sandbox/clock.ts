/**
 * The sandbox's own clock, so tests can jump past an expiration (or the cancellation an hour after
 * it) in milliseconds instead of waiting.
 */
export interface SandboxClock {
  now(): number;
  /** Moves the clock forward; never backward, as real time does. */
  advance(ms: number): void;
  /** The current offset from the machine's clock, in ms. */
  offset(): number;
}

export function createClock(base: () => number = Date.now): SandboxClock {
  let offset = 0;
  return {
    now: () => base() + offset,
    advance(ms) {
      if (!Number.isFinite(ms) || ms < 0) throw new RangeError('the sandbox clock only moves forward');
      offset += ms;
    },
    offset: () => offset,
  };
}
