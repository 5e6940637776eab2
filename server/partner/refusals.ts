/**
 * What a partner's refusal says happened. Only a refusal the service states (spec 4.6, 7: invalid
 * data, the customer's KYC, the bank) says no money moved; any other 4xx to a transfer's create says
 * nothing of what the service did, so its outcome is unknown.
 */
import { TRANSFER_REFUSAL_REASONS } from './wire.ts';
import { PartnerError } from './errors.ts';

/** Whether the service named one of the transfer refusals of the spec (TRANSFER_REFUSAL_REASONS). */
export const isRefusalReason = (reason: string | undefined): boolean =>
  reason !== undefined && (TRANSFER_REFUSAL_REASONS as readonly string[]).includes(reason);

/** What a refusal of a transfer's data, of the customer's KYC, of the key's owner or by the bank says, in English or Portuguese. */
const REFUSAL_WORDS = /\b(kyc|invalid|inv[aá]lid[oa]s?|bank|banco|banc[aá]ri[oa]|owner|titular|key|chave|dados)\b/i;

/**
 * Whether a transfer create's error is a refusal the partner states (spec 4.6, 7: invalid data, the
 * customer's KYC, the bank), the one answer that says no money moved: a 400, 403 or 422 whose body
 * gives one of TRANSFER_REFUSAL_REASONS, names the fields at fault, or says so in words. Any other
 * 4xx (a 409, 423, 404, 429, a firewall's HTML 400, a bare 403) says nothing of what the service did.
 */
export function isStatedTransferRefusal(error: PartnerError): boolean {
  if (error.kind !== 'refused') return false;
  const { status, reason, fields, upstreamMessage } = error.details;
  if (status !== undefined && status !== 400 && status !== 403 && status !== 422) return false;
  if (isRefusalReason(reason)) return true;
  if (status === undefined) return false;
  return (fields !== undefined && Object.keys(fields).length > 0) || REFUSAL_WORDS.test(upstreamMessage ?? '');
}

/**
 * A transfer create's 4xx that is not a stated refusal: the request reached the service and nothing
 * says it did not act, so its outcome is unknown (never sent again; reconciled by its transaction_id).
 */
export function unstatedRefusal(error: unknown, transactionId: string | undefined): unknown {
  if (!(error instanceof PartnerError) || (error.kind !== 'refused' && error.kind !== 'not_found') || isStatedTransferRefusal(error)) return error;
  const said = error.details.upstreamMessage ? `: ${error.details.upstreamMessage}` : '';
  return new PartnerError(
    'outcome_unknown',
    `${error.details.operation}: the partner service answered HTTP ${error.details.status ?? '4xx'} without a refusal it names${said}; the outcome is unknown`,
    { ...error.details, outcomeUnknown: true, transactionId: error.details.transactionId ?? transactionId },
  );
}
