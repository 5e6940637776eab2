/**
 * The one error family of the partner-service client. Messages never carry the token, the access key
 * or a customer's document: they name the operation, the HTTP status and the service's own message,
 * and even that message is redacted, in case the service echoes what it was sent.
 */
import type { Logger } from '../log.ts';

export type PartnerErrorKind =
  /** Our input broke a rule of the spec; nothing was sent. */
  | 'invalid_input'
  /** The credentials or the token were refused. */
  | 'unauthorized'
  /** The service understood and said no (invalid data, KYC, key owner, bank), with its reason. */
  | 'refused'
  | 'not_found'
  /** 5xx, a dropped connection, or an answer we could not read. */
  | 'unavailable'
  | 'timeout'
  /** A create the service accepted (2xx) whose answer could not be read: it may have happened. Never retried. */
  | 'outcome_unknown';

export interface PartnerErrorDetails {
  operation: string;
  status?: number;
  upstreamMessage?: string;
  /** The refusal's reason (TRANSFER_REFUSAL_REASONS), when the service gave one. */
  reason?: string;
  fields?: Record<string, string>;
  /** A create whose request may have reached the service: reconcile by `transactionId`, never repeat blindly. */
  outcomeUnknown?: boolean;
  transactionId?: string;
  /** outcome_unknown: the answer as received, redacted and cut to 2 KiB, for the operator. */
  rawBody?: string;
}

export class PartnerError extends Error {
  override readonly name = 'PartnerError';
  constructor(
    readonly kind: PartnerErrorKind,
    message: string,
    readonly details: PartnerErrorDetails,
  ) {
    super(redact(message));
  }
}

/** Masks what looks like a CPF, CNPJ (numeric or alphanumeric) or bearer token in text that may reach a log. */
export function redact(text: string): string {
  return (
    text
      .replace(/Bearer\s+\S+/gi, 'Bearer [redacted]')
      // An alphanumeric CNPJ: letters or digits in its first 12 characters, 2 digits last, in either
      // case. First, before the digit runs below can take part of one. Not inside a longer word; and
      // spaced out, only with a digit before its last two, so a phrase such as 'is not the same 10'
      // stays readable.
      .replace(/(?<![\dA-Z])[\dA-Z]{2}[.\s]?[\dA-Z]{3}[.\s]?[\dA-Z]{3}[/\s]?[\dA-Z]{4}[-\s]?\d{2}(?![\dA-Z])/gi, (match) =>
        /\s/.test(match) && !/\d/.test(match.slice(0, -2)) ? match : '[document]',
      )
      .replace(/\d{2,3}[.\s]?\d{3}[.\s]?\d{3}[/\s]?\d{4}[-\s]?\d{2}/g, '[document]')
      .replace(/\d{3}[.\s]?\d{3}[.\s]?\d{3}[-\s]?\d{2}/g, '[document]')
  );
}

/**
 * The one log line of a payment create that ended with no payment, written where what the customer
 * got is known (`customer`: the HTTP answer, or another payment issued at once). At error when the
 * partner may have acted: the request was sent and its answer was lost, a 5xx, a timeout or
 * unreadable, so a payment may exist under `transaction_id` (the customer never saw its code, so it
 * cannot be paid). At warn when it surely did not: the request never left (connection refused, DNS,
 * TLS). False, logging nothing, for any other error (a refusal is an answer: logged as such).
 */
export function logFailedCreate(log: Pick<Logger, 'error' | 'warn'>, error: unknown, customer: string, fields: Record<string, unknown> = {}): boolean {
  if (!(error instanceof PartnerError) || error.details.operation !== 'createPayment') return false;
  if (error.kind !== 'unavailable' && error.kind !== 'timeout' && error.kind !== 'outcome_unknown') return false;
  const { transactionId, outcomeUnknown, rawBody } = error.details;
  const line = { transaction_id: transactionId, ...fields, customer, err: { message: error.message }, ...(rawBody ? { raw_answer: rawBody } : {}) };
  if (outcomeUnknown) log.error({ ...line, partner_may_have_acted: true }, 'payment creation outcome unknown: reconcile by transaction_id');
  else log.warn({ ...line, partner_may_have_acted: false }, 'payment not created: the request never reached the partner service');
  return true;
}
