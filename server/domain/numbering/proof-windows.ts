/**
 * The two windows of a payment's life in which its status code proves something, on our clock:
 * before the partner can have expired it (approved), and well past its cancellation hour (canceled).
 * Times count from our send time, and allow for a partner that ignores the expiration asked.
 */
import { LIMITS } from '../../../src/shared/limits.ts';

/** When a payment was asked for and until when it is payable, as we count it. */
export interface PaymentTimes {
  /** Epoch ms: when the code stops being payable, as we count it (our send time + the expiration we asked). */
  expiresAt: number;
  /** Epoch ms: our send time of the create (the record's created_at). Absent: expiresAt less the default expiration. */
  createdAt?: number;
}

/** The spec: a payment not paid is canceled one hour after its expiration, never sooner. */
const CANCEL_AFTER_EXPIRY_MS = LIMITS.cancelAfterExpirationSeconds * 1000;
/** The spec's default expiration (4.3): what a partner that ignores the one asked for uses. */
export const PARTNER_DEFAULT_EXPIRATION_MS = 3600 * 1000;
/** The approved side's margin: at most this, and at most a fifth of the shortest plausible expiration. */
export const APPROVED_MARGIN_MS = 5 * 60_000;
/** The canceled side's margin past the latest plausible cancellation hour (a partner slow to cancel, clocks counting apart). */
export const CANCELED_MARGIN_MS = 15 * 60_000;

/** Per payment: until when a code read proves approved, and from when one proves canceled. */
export function proofWindows(at: PaymentTimes): { approvedBefore: number; canceledFrom: number } {
  const sentAt = at.createdAt ?? at.expiresAt - PARTNER_DEFAULT_EXPIRATION_MS;
  const asked = Math.max(0, at.expiresAt - sentAt);
  const earliest = Math.min(asked, PARTNER_DEFAULT_EXPIRATION_MS);
  const latest = Math.max(asked, PARTNER_DEFAULT_EXPIRATION_MS);
  return {
    approvedBefore: sentAt + earliest - Math.min(APPROVED_MARGIN_MS, earliest / 5),
    canceledFrom: sentAt + latest + CANCEL_AFTER_EXPIRY_MS + CANCELED_MARGIN_MS,
  };
}

/** A time of the evidence, as its lines print it. */
export const iso = (ms: number) => (Number.isFinite(ms) ? new Date(ms).toISOString() : String(ms));
