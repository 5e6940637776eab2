/** The accounting export's reads (domain/report.ts): each table paged by creation time, in order, a page at a time. */
import type { CheckoutRecord } from '../checkouts/types.ts';
import type { PaymentRecord } from '../payments/types.ts';
import type { PayoutRecord } from '../payouts/types.ts';

/** Where a page ends: the last row's creation time and key; the next page starts after it. */
export interface ReportCursor {
  createdAt: number;
  key: string;
}

/** What a checkout's row says of its current payment. */
export type CurrentPayment = Pick<PaymentRecord, 'partnerStatus' | 'final' | 'expiresAt' | 'updatedAt'>;

/** Rows created in [from, to), after `cursor`, oldest first, at most `limit`; each with its checkout's order id where it has one. */
export interface ReportStore {
  checkouts(from: number, to: number, cursor: ReportCursor | null, limit: number): Promise<(CheckoutRecord & { payment: CurrentPayment | null })[]>;
  payments(from: number, to: number, cursor: ReportCursor | null, limit: number): Promise<(PaymentRecord & { orderId: string | null })[]>;
  /** Payouts and refunds (a refund names its checkout), with their row number as the key. */
  payouts(from: number, to: number, cursor: ReportCursor | null, limit: number): Promise<(PayoutRecord & { seq: number; orderId: string | null })[]>;
}
