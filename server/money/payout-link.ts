/**
 * How a transfer's outcome reaches the payout it carries out, decided once for both stores. The
 * partner may tell a transfer's outcome (its webhook) before the create's answer gave the payout its
 * reference: the transfer is then linked by our `transaction_id`, which its record carries. When the
 * answer comes after the outcome, the outcome event (written without the payout) is written again
 * naming it, or, when it was delivered already, told again naming it under its own id (outbox `restate`).
 */
import type { OutcomeEvent } from '../../src/shared/contract.ts';
import type { PayoutLink, PayoutRecord, TransferOutcomeOf, TransferRecord } from '../store/store.ts';

/** The transaction_id a transfer is tracked with when its payout is marked sent: the payout's own (ours) first, else what the transfer carried. */
export function linkTransactionId(payout: { transactionId: string } | null | undefined, transfer: Pick<TransferRecord, 'transactionId'>): string | null {
  return payout?.transactionId ?? transfer.transactionId ?? null;
}

/** What the outcome event says of a payout the proxy started. */
export function payoutLink(payout: Pick<PayoutRecord, 'id' | 'merchantReference' | 'checkoutId'>, orderId: string | null): PayoutLink {
  return { transferId: payout.id, merchantReference: payout.merchantReference, checkoutId: payout.checkoutId, orderId };
}

/** A final transfer's outcome and the state its payout (if any) takes with it. */
export interface TransferSettlement {
  outcome: OutcomeEvent | null;
  /** The outcome told again naming its payout, under its own id (when the one without it was delivered); null without a payout. */
  relinked: () => OutcomeEvent | null;
  /** The payout's new state, when there is a payout and the outcome is approved or canceled. */
  payoutState: 'approved' | 'canceled' | null;
}

/**
 * The outcome of a transfer just found final, built by `outcomeOf` with its payout (found by the
 * partner's reference or, before the answer, by transaction_id; null when the proxy did not start
 * it), and the state the payout takes: the outcome's, whatever its answer did.
 */
export function settleTransfer(
  transfer: TransferRecord,
  payout: { record: Pick<PayoutRecord, 'id' | 'merchantReference' | 'checkoutId'>; orderId: string | null } | null,
  outcomeOf: TransferOutcomeOf,
): TransferSettlement {
  const link = payout ? payoutLink(payout.record, payout.orderId) : null;
  const outcome = outcomeOf(transfer, link);
  const status = outcome?.data.status;
  const payoutState = payout && (status === 'approved' || status === 'canceled') ? status : null;
  return { outcome, payoutState, relinked: () => (link ? outcomeOf(transfer, link, true) : null) };
}
