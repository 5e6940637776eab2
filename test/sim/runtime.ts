/**
 * The simulation's time and chance, handed to the proxy through createApp's `runtime` (server/runtime):
 * a clock the run steps and a random source seeded per run, so a seed replays the same run by
 * construction and no global is patched.
 *
 * Timers: the clock never moves inside a step, so a timer the proxy starts (a watch's next poll, a
 * kept notification's try again, a deadline of /ready) is held until the run moves the clock past
 * it (a clock step, the heal's passes): then it fires, earliest first, as it would have in that
 * time. A sleep (a pause inside work in progress: the confirmations' pace, a backoff) is over at
 * the next turn of the event loop, the clock unmoved.
 */
import type { Clock, RandomSource, Timer } from '../../server/runtime/runtime.ts';

interface Held {
  due: number;
  /** Order of creation: timers due at once fire in the order they were set. */
  seq: number;
  callback: () => void;
  /** Set for setInterval: fires again this much later. */
  everyMs: number | null;
}

export class SimClock implements Clock {
  /** Timers started and not cleared, until they fire. */
  private readonly held = new Map<Timer, Held>();
  private seq = 0;

  constructor(
    /** The run's time, epoch ms. */
    private readonly time: () => number,
    /** Where monotonic time starts: the run's first instant. */
    private readonly origin: number,
  ) {}

  now = (): number => this.time();
  monotonic = (): number => this.time() - this.origin;

  setTimeout = (callback: () => void, ms: number): Timer => this.hold(callback, ms, null);
  setInterval = (callback: () => void, ms: number): Timer => this.hold(callback, ms, Math.max(1, ms));

  clearTimer = (timer: Timer | undefined): void => {
    if (timer) this.held.delete(timer);
  };

  sleep = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

  /** Timers waiting to fire. */
  get pending(): number {
    return this.held.size;
  }

  /**
   * Fires every timer due by now, earliest first (one set while firing, and due, fires too); an
   * interval is set again. Answers how many fired.
   */
  fireDue(): number {
    let fired = 0;
    for (;;) {
      let next: [Timer, Held] | null = null;
      for (const entry of this.held) if (!next || entry[1].due < next[1].due || (entry[1].due === next[1].due && entry[1].seq < next[1].seq)) next = entry;
      if (!next || next[1].due > this.time()) return fired;
      const [timer, held] = next;
      if (held.everyMs === null) this.held.delete(timer);
      else this.held.set(timer, { ...held, due: held.due + held.everyMs, seq: ++this.seq });
      fired++;
      held.callback();
    }
  }

  private hold(callback: () => void, ms: number, everyMs: number | null): Timer {
    const timer: Timer = { unref: () => timer };
    this.held.set(timer, { due: this.time() + Math.max(0, ms), seq: ++this.seq, callback, everyMs });
    return timer;
  }
}

/** A seeded source (xorshift128+ on 32-bit halves, sfc32): the same seed draws the same ids and jitter. */
export class SeededRandom implements RandomSource {
  private a: number;
  private b: number;
  private c: number;
  private d: number;

  constructor(seed: number) {
    this.a = 0x9e3779b9;
    this.b = 0x243f6a88;
    this.c = 0xb7e15162;
    this.d = seed >>> 0;
    for (let i = 0; i < 16; i++) this.next();
  }

  /** sfc32: 32 random bits. */
  private next(): number {
    const t = (((this.a + this.b) >>> 0) + this.d) >>> 0;
    this.d = (this.d + 1) >>> 0;
    this.a = this.b ^ (this.b >>> 9);
    this.b = (this.c + (this.c << 3)) >>> 0;
    this.c = ((this.c << 21) | (this.c >>> 11)) >>> 0;
    this.c = (this.c + t) >>> 0;
    return t;
  }

  bytes = (size: number): Buffer => {
    const out = Buffer.alloc(size);
    for (let i = 0; i < size; i += 4) {
      const word = this.next();
      for (let j = 0; j < 4 && i + j < size; j++) out[i + j] = (word >>> (8 * j)) & 0xff;
    }
    return out;
  };

  uuid = (): string => {
    const b = this.bytes(16);
    b[6] = (b[6]! & 0x0f) | 0x40;
    b[8] = (b[8]! & 0x3f) | 0x80;
    const hex = b.toString('hex');
    return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
  };

  fraction = (): number => this.next() / 2 ** 32;
}

/** A 32-bit seed from a run's configuration (FNV-1a of its JSON): each run its own stream, the same each time. */
export function seedOf(value: unknown): number {
  let hash = 0x811c9dc5;
  for (const ch of JSON.stringify(value)) {
    hash ^= ch.charCodeAt(0);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash;
}
