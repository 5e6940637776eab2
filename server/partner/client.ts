/**
 * The client of the partner service: the one place that speaks its wire format (wire.ts). One typed
 * method per operation of the spec. Send strictly, read tolerantly: inputs are checked against the
 * spec before anything is sent; answers are read by read.ts, which takes each value we use from every
 * plausible place and form and requires nothing else. Any 2xx is success, with any body or none.
 *
 * Safety: reads, HEAD and login are retried with backoff and jitter; creating a payment or a transfer
 * is never repeated. It carries a `transaction_id`, and when its outcome is unknown (no answer, a
 * 5xx, or a 2xx we cannot read) the error says so (`outcomeUnknown`), names that id and keeps the
 * raw answer, redacted, for the operator. A refused token (401, or a 403 that is not a transfer's
 * refusal) leads to one new login; a token still refused is discarded.
 *
 * The parts, one job each: sender.ts sends (HTTPS, retries, errors) with the token of
 * token-session.ts; account-operations.ts, payment-operations.ts and transfer-operations.ts are the
 * operations; refusals.ts says what a transfer's refusal means; client-types.ts has the types.
 */
import { accountOperations } from './account-operations.ts';
import { paymentOperations } from './payment-operations.ts';
import { transferOperations } from './transfer-operations.ts';
import { createSender } from './sender.ts';
import type { PartnerClient, PartnerClientOptions } from './client-types.ts';

export * from './client-types.ts';
export { decodeSaved, tokenStoreKey } from './token-session.ts';
export { isStatedTransferRefusal } from './refusals.ts';

export function createPartnerClient(options: PartnerClientOptions): PartnerClient {
  const sender = createSender(options);
  const account = accountOperations(sender);
  return {
    login: sender.login,
    ...account,
    ...paymentOperations(sender, account.getTenant),
    ...transferOperations(sender),
  };
}
