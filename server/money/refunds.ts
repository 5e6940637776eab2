/**
 * What is left to refund of a checkout, decided once for both stores: each store sums, inside the
 * transaction that inserts the refund (SQLite: the write lock; Postgres: the checkout's row lock),
 * what the checkout was paid, what was returned of it and what its refunds took, and asks `decideRefund`.
 */
import type { PayoutState } from '../store/store.ts';

/**
 * The refund states that took no money and never will: refused up front, or canceled by the
 * partner. Every other refund took, or may have taken, money (sending, pending, unknown, approved)
 * and counts against what was paid.
 */
export const REFUND_STATES_WITHOUT_MONEY = ['refused', 'canceled'] as const satisfies readonly PayoutState[];

/** A refund that may be stored, with its value (the rest when 0 was asked), or why not and what is left. */
export type RefundDecision = { valueCents: number } | { problem: 'not_paid' | 'exceeds'; refundableCents: number };

/**
 * `requestedCents` 0 means "what is left". Nothing paid: `not_paid`. What was returned to the payer
 * since (`returnedCents`: a Pix return, MED; domain/returns.ts) is no longer the merchant's to give
 * back: a returned amount is never refunded again. A value of 0 or less once resolved
 * (nothing left), or more than is left: `exceeds`, with what is left (never below 0).
 */
export function decideRefund(requestedCents: number, paidCents: number, refundedCents: number, returnedCents = 0): RefundDecision {
  if (paidCents === 0) return { problem: 'not_paid', refundableCents: 0 };
  const left = paidCents - returnedCents - refundedCents;
  const valueCents = requestedCents === 0 ? left : requestedCents;
  if (valueCents <= 0 || valueCents > left) return { problem: 'exceeds', refundableCents: Math.max(0, left) };
  return { valueCents };
}
