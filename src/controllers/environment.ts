import { isServer } from 'lit';

/**
 * Everything the widget's controllers take from the outside world: time, the network, the clipboard,
 * storage and the page's visibility. The element passes these in, so tests replace time and inject
 * faults (a failing fetch, a refusing clipboard) without touching the rest.
 */
export interface Clock {
  now(): number;
  setTimeout(callback: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export interface PixEnvironment {
  clock: Clock;
  fetch: typeof fetch;
  /** null: never try the status stream, poll from the start. */
  EventSource: typeof EventSource | null;
  /** null: no Clipboard API (old browsers, iframes without clipboard-write). */
  clipboard: Pick<Clipboard, 'writeText'> | null;
  /** The select + execCommand('copy') fallback; returns whether the browser says it copied. */
  execCopy: () => boolean;
  /**
   * The Web Share API, where the browser has it (mostly phones and tablets; few desktop browsers): the
   * share button shows only then, and only for data `canShare` accepts. null: no share button.
   */
  share: { share(data: ShareData): Promise<void>; canShare?(data: ShareData): boolean } | null;
  /**
   * Saves a file as the browser's download ("Salvar QR Code" where the share sheet takes no files).
   * Absent: an `<a download>` with a blob URL, from the save chunk itself (src/save.ts).
   */
  download?: (file: File) => void;
  /** Where a payment's reference is kept so a reload resumes it; null: never resume. */
  storage: Pick<Storage, 'getItem' | 'setItem' | 'removeItem'> | null;
  hidden: () => boolean;
  online: () => boolean;
  random: () => number;
}

/** The parts only the status controller reads (a chunk of its own, loaded after the first QR). */
export type FollowingParts = 'EventSource' | 'hidden' | 'online' | 'random';

/**
 * The environment as the element makes it: the defaults of the parts only the status controller
 * reads are made where it is (statusOptions, src/controllers/session-later.ts), under the page's own.
 */
export type WidgetEnvironment = Omit<PixEnvironment, FollowingParts> & Partial<Pick<PixEnvironment, FollowingParts>>;

export const systemClock: Clock = {
  now: Date.now,
  setTimeout: (callback, ms) => setTimeout(callback, ms),
  clearTimeout: (handle) => clearTimeout(handle as number),
};

function sessionStore(): PixEnvironment['storage'] {
  try {
    return sessionStorage;
  } catch {
    // Storage blocked (sandboxed iframe, privacy settings): work without resuming.
    return null;
  }
}

export function defaultEnvironment(): WidgetEnvironment {
  return {
    clock: systemClock,
    fetch: (input, init) => fetch(input, init),
    clipboard: navigator.clipboard ?? null,
    execCopy: () => document.execCommand('copy'),
    share: typeof navigator.share === 'function' ? navigator : null,
    storage: sessionStore(),
  };
}

/**
 * One element's environment: the defaults under its own parts (`environment`), made again only when
 * those are replaced, not at every read (every render reads it; the defaults touch sessionStorage).
 * The server renders with a clock alone: it has no network, clipboard, storage or screen.
 */
export function environmentOf(own: () => Partial<PixEnvironment>): () => WidgetEnvironment {
  let made: [Partial<PixEnvironment>, WidgetEnvironment] | null = null;
  return () => {
    const parts = own();
    if (made?.[0] !== parts) made = [parts, { ...(isServer ? ({ clock: systemClock } as WidgetEnvironment) : defaultEnvironment()), ...parts }];
    return made[1];
  };
}
