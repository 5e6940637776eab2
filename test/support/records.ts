/** Store records for tests that write a store directly: one builder per record, every field given, any overridden. */
import { PARTNER_STATUS } from '../../server/partner/wire.ts';
import type { CheckoutRecord, PaymentRecord, PayoutRecord, TransferRecord } from '../../server/store/store.ts';

/** An open checkout of R$ 49,90 for Maria, created at 1 s; no payment yet. */
export function checkoutRecord(over: Partial<CheckoutRecord> = {}): CheckoutRecord {
  return {
    id: 'co_AAAAAAAAAAAAAAAAAAAAAAAA',
    orderId: 'order-1',
    valueCents: 4990,
    description: 'Loja',
    name: 'Maria',
    document: '52998224725',
    callback: null,
    paymentReference: null,
    renewalsUsed: 0,
    createdAt: 1_000,
    ...over,
  };
}

/** A pending payment of R$ 9,90 created at `at`, expiring an hour later; no checkout. */
export function paymentRecord(reference: string, at: number, over: Partial<PaymentRecord> = {}): PaymentRecord {
  return {
    reference,
    checkoutId: null,
    valueCents: 990,
    description: null,
    partnerStatus: PARTNER_STATUS.pending,
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

/** A payout of R$ 10,00 to Ana's e-mail key, being sent, created at 1 s; no checkout. */
export function payoutRecord(over: Partial<PayoutRecord> = {}): PayoutRecord {
  return {
    id: 'tr_AAAAAAAAAAAAAAAAAAAAAAAA',
    idempotencyKey: 'key-1',
    requestHash: 'hash-1',
    kind: 'key',
    checkoutId: null,
    valueCents: 1000,
    pixKey: 'ana@cliente.example',
    pixKeyType: 'EMAIL',
    customerDocument: '12345678909',
    merchantReference: 'seller-1',
    transactionId: 'ptx-1',
    state: 'sending',
    reference: null,
    reason: null,
    reasonMessage: null,
    createdAt: 1_000,
    updatedAt: 1_000,
    ...over,
  };
}

/** The partner's transfer `reference` of R$ 10,00, pending since `at`. */
export function transferRecord(reference: string, at = 2_000): TransferRecord {
  return { reference, partnerStatus: PARTNER_STATUS.pending, final: false, valueCents: 1000, createdAt: at, updatedAt: at };
}
