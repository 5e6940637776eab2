/** A payment intent's row, as both stores keep it. */
import type { PaymentRecord } from '../payments/types.ts';
import type { PaymentIntent } from './types.ts';

export interface IntentRow {
  transaction_id: string;
  checkout_id: string | null;
  value_cents: number;
  created_at: number;
  reference: string | null;
  answer: string | null;
}

export const toIntent = (r: IntentRow): PaymentIntent => ({
  transactionId: r.transaction_id,
  checkoutId: r.checkout_id,
  valueCents: r.value_cents,
  createdAt: Number(r.created_at),
  reference: r.reference,
  answer: r.answer ? (JSON.parse(r.answer) as PaymentRecord) : null,
});
