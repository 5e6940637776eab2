/**
 * The notifications of one reference, as the webhook processor (webhook-processor.ts) holds them
 * while they wait for the partner's confirmation: which wait for the next one, which are being
 * confirmed, which wait to be confirmed again, and the words an authenticated one stated.
 */
import type { PartnerNotification } from '../../partner/notification.ts';
import { type Timer } from '../../runtime/runtime.ts';

/** The notifications of one reference waiting for a confirmation, and when the last one started. */
export interface Group {
  event: PartnerNotification;
  /** The outcome an authenticated notification of this reference stated in words, if any. */
  explicit: 'approved' | 'canceled' | null;
  /**
   * The return an authenticated notification of this reference stated, if any (`cents` null: its
   * amount unstated; of several, the largest total, an unstated one the largest of all).
   */
  returned: { cents: number | null } | null;
  /** The events that came with authenticated words (kept so, when they wait). */
  trusted: Set<number>;
  /** Waiting for a try again (`timer`), after `attempts` confirmations that could not be applied. */
  deferred: Set<number>;
  timer: Timer | undefined;
  attempts: number;
  /** When the first confirmation started (the proxy's clock), and until when a payment's words are tried again. */
  firstAt: number | null;
  openUntil: number | null;
  /** Waiting for the next confirmation, and that confirmation's end. */
  ids: Set<number>;
  next: Round | null;
  /** Being confirmed now (a drain that finds them still unprocessed does not queue them again), and its end. */
  taken: Set<number>;
  current: Round | null;
  lastStart: number;
  runner: Promise<void> | null;
}

/** One confirmation: each notification waits for the round that covers it, never for later copies. */
export interface Round {
  done: Promise<void>;
  end: () => void;
}

export function round(): Round {
  let end = () => {};
  const done = new Promise<void>((resolve) => (end = resolve));
  return { done, end };
}

/** One group per reference and kind: the notifications that share one confirmation. */
export function groupKey(event: PartnerNotification): string {
  return `${event.kind ?? 'any'}:${event.reference}`;
}

export function newGroup(event: PartnerNotification): Group {
  return {
    event,
    explicit: null,
    returned: null,
    trusted: new Set(),
    deferred: new Set(),
    timer: undefined,
    attempts: 0,
    firstAt: null,
    openUntil: null,
    ids: new Set(),
    next: null,
    taken: new Set(),
    current: null,
    lastStart: -Infinity,
    runner: null,
  };
}
