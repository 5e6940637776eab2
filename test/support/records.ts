/** Store records for tests that write a store directly: every field given, any overridden. */
import type { PaymentRecord } from '../../server/store/store.ts';

/** A pending payment of R$ 9,90 created at `at`, expiring an hour later; no checkout. */
export function paymentRecord(reference: string, at: number, over: Partial<PaymentRecord> = {}): PaymentRecord {
  return {
    reference,
    checkoutId: null,
    valueCents: 990,
    description: null,
    partnerStatus: 1,
    brcode: 'x',
    qrCodeUrl: 'x',
    checkoutUrl: 'x',
    createdAt: at,
    expiresAt: at + 3_600_000,
    transactionId: `tx-${reference}`,
    updatedAt: at,
    final: false,
    ...over,
  };
}
