/**
 * Payment intents: a row with our transaction_id, written before the partner is asked to
 * create a payment, so a payment the partner created is never recorded nowhere. When the store cannot
 * take the payment the partner answered, its answer is kept on the intent (when this table still takes
 * writes) and in memory (domain/payments/unrecorded.ts) until it is recorded. An intent whose
 * transaction_id no payment carries is a partner payment the store may not know:
 * `pix-checkout unrecorded` lists them.
 */
import type { PaymentRecord } from '../payments/types.ts';

export interface PaymentIntent {
  /** Our transaction_id, sent with the create. */
  transactionId: string;
  checkoutId: string | null;
  valueCents: number;
  /** When the create was about to be sent (epoch ms). */
  createdAt: number;
  /** The partner's reference, when its answer was kept here (the payment could not be stored). */
  reference: string | null;
  /** The payment's record as the partner answered it, when kept here. */
  answer: PaymentRecord | null;
}

export interface PaymentIntentStore {
  /** Before the partner is asked: the create about to be sent. */
  add(intent: Pick<PaymentIntent, 'transactionId' | 'checkoutId' | 'valueCents' | 'createdAt'>): Promise<void>;
  /** The partner's answer, when the payment itself could not be stored. */
  keepAnswer(record: PaymentRecord): Promise<void>;
  /** The create was surely not made (the partner refused it, or it never left): nothing to reconcile. */
  forget(transactionId: string): Promise<void>;
  /** Intents made before `before` whose transaction_id no stored payment carries, newest first. */
  unrecorded(before: number, limit: number): Promise<PaymentIntent[]>;
  /** Forgets intents made before `before` whose payment is stored; answers how many. */
  prune(before: number): Promise<number>;
}
