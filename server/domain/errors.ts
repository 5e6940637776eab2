/**
 * What the domain refuses, in its own words. The HTTP layer alone turns these into status codes and
 * error bodies (http/errors.ts), so a service can be used from a route, the command line or a job.
 */
export type DomainErrorKind =
  /** No such payment or checkout here. */
  | 'not_found'
  /** The request contradicts what exists (an order id already used with another value). */
  | 'conflict'
  /** A checkout's payment expired and it may issue no new one. */
  | 'renewals_exhausted'
  /** The partner answered with a status this proxy does not know: never shown, least of all as paid. */
  | 'unknown_status'
  /** A checkout may not issue a new code while its last one's status cannot be read for sure (a wrong PIX_STATUS_CODES): it may have been paid. */
  | 'status_unverified'
  /** A field the schema cannot judge is wrong (a list cursor this server never gave). */
  | 'invalid'
  /** A refund of a checkout that has not been paid. */
  | 'not_paid'
  /** A refund that would take the refunds past what the checkout was paid. */
  | 'refund_exceeds'
  /** An idempotency key used again for another request. */
  | 'idempotency_conflict'
  /** A refund of a checkout with an open dispute (domain/disputes.ts), until an operator resolves it. */
  | 'disputed';

export class DomainError extends Error {
  override readonly name = 'DomainError';
  constructor(
    readonly kind: DomainErrorKind,
    message: string,
    /** Field -> what is wrong with it, where a field is to blame. */
    readonly fields?: Record<string, string>,
    /** When asking again may change the answer (`status_unverified`): the HTTP Retry-After, in seconds. */
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
  }
}
