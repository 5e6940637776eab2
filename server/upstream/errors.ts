/**
 * The one error family of the partner-service client. Messages never carry the token, the access key
 * or a customer's document: they name the operation, the HTTP status and the service's own message.
 */
export type PartnerErrorKind =
  /** Our input broke a rule of the spec; nothing was sent. */
  | 'invalid_input'
  /** The credentials or the token were refused. */
  | 'unauthorized'
  /** The service understood and said no (invalid data, KYC, bank), with its reason. */
  | 'refused'
  | 'not_found'
  /** 5xx, a dropped connection, or an answer we could not read. */
  | 'unavailable'
  | 'timeout';

export class PartnerError extends Error {
  override readonly name = 'PartnerError';
  constructor(
    readonly kind: PartnerErrorKind,
    message: string,
    readonly details: {
      operation: string;
      status?: number;
      upstreamMessage?: string;
      fields?: Record<string, string>;
    },
  ) {
    super(message);
  }
}
