/**
 * What a final state allows, decided once for both stores. A payment or transfer that is final
 * (approved or canceled) never changes again: the stores write a status with a compare-and-set
 * (`WHERE not final`), and the write that made the record final is the one, and the only one, that
 * writes its outcome event. A payout takes its transfer's outcome only while it awaits one.
 *
 * The compare-and-sets themselves stay in each store's SQL, where they are atomic: a status write
 * (`payments/`, `payouts/` `{sqlite,postgres}.ts`: `WHERE final = 0` / `WHERE NOT final`), and
 * attachPayment's (`checkouts/`: the current payment still the one the issuer read, and no payment of
 * the checkout recorded paid, so a late payment of an old code wins over a new code).
 */
import type { PayoutState } from '../store/store.ts';

/** What a compare-and-set status write did: nothing (the record is final or unknown), a change, or the change that made it final. */
export type StatusWrite = 'unchanged' | 'changed' | 'made_final';

/** `written`: the compare-and-set took (the record was not final); `final`: the status written is final. */
export function statusWrite(written: boolean, final: boolean): StatusWrite {
  if (!written) return 'unchanged';
  return final ? 'made_final' : 'changed';
}

/**
 * The payout states its transfer's outcome may settle: stored and unanswered (`sending`), accepted
 * (`pending`), or answer lost (`unknown`: it may have been carried out). Approved, canceled and
 * refused payouts are final.
 */
export const PAYOUT_STATES_AWAITING_OUTCOME = ['sending', 'pending', 'unknown'] as const satisfies readonly PayoutState[];

/** The state a payout is stored in and leaves once the partner answers (sent, refused, unknown), or is discarded in. */
export const PAYOUT_STATE_UNANSWERED = 'sending' satisfies PayoutState;

/** A dispute is opened only of a payment that is final (a payment not final is still being decided, not contradicted). */
export function mayDispute(payment: { final: boolean } | null | undefined): boolean {
  return payment?.final === true;
}
