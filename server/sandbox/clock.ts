/**
 * The sandbox's own clock, so tests can jump past an expiration (or the cancellation an hour after
 * it) in milliseconds instead of waiting. It runs with real time plus an offset that only grows.
 */
export interface SandboxClock {
  /** Milliseconds since the epoch, sandbox time. A plain function: callers pass it around unbound. */
  now: () => number;
  /** Moves the clock forward; never backward, as real time does. */
  advance(ms: number): void;
  /** Moves the clock forward to `epochMs`; a time in the past is a RangeError. */
  set(epochMs: number): void;
  /** The current offset from the machine's clock, in ms. */
  offset(): number;
  /**
   * Calls `listener` after every jump, so what falls due (a cancellation, a bank's answer) happens
   * at once rather than at the next poll. Returns the unsubscribe function.
   */
  onJump(listener: () => void): () => void;
}

export function createClock(base: () => number = Date.now): SandboxClock {
  let offset = 0;
  const listeners = new Set<() => void>();
  const jump = (ms: number) => {
    if (!Number.isFinite(ms) || ms < 0) throw new RangeError('the sandbox clock only moves forward');
    offset += ms;
    for (const listener of listeners) listener();
  };
  return {
    now: () => base() + offset,
    advance: jump,
    set: (epochMs) => jump(epochMs - (base() + offset)),
    offset: () => offset,
    onJump(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
}
