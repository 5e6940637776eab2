/**
 * How the proxy turns what went wrong into the shared error body: the one place where domain and
 * partner errors become HTTP statuses. 5xx answers say only what the browser can act on (try again);
 * their causes go to the log, never into the response.
 */
import type { Context } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { errorBody, type ErrorCode } from '../../src/shared/errors.ts';
import { DomainError, type DomainErrorKind } from '../domain/errors.ts';
import type { Logger } from '../log.ts';
import { PartnerError, logFailedCreate } from '../partner/errors.ts';
import { StoreError } from '../store/store.ts';

/** A refusal of the HTTP layer itself (input, media type, origin, key, rate): status and body known. */
export class HttpError extends Error {
  constructor(
    readonly status: ContentfulStatusCode,
    readonly code: ErrorCode,
    message: string,
    readonly fields?: Record<string, string>,
    readonly headers?: Record<string, string>,
  ) {
    super(message);
  }
}

/** The client closed the connection while sending its body: nothing to answer, nothing broken here. */
export class RequestAbortedError extends Error {
  override readonly name = 'RequestAbortedError';
  constructor() {
    super('The request body was cut off.');
  }
}

const DOMAIN_STATUS: Record<DomainErrorKind, [ContentfulStatusCode, ErrorCode]> = {
  not_found: [404, 'not_found'],
  conflict: [409, 'conflict'],
  renewals_exhausted: [409, 'renewals_exhausted'],
  status_unverified: [503, 'status_unverified'],
  unknown_status: [502, 'upstream_unavailable'],
  invalid: [400, 'invalid_request'],
  not_paid: [409, 'checkout_not_paid'],
  refund_exceeds: [409, 'refund_exceeds_paid'],
  idempotency_conflict: [409, 'idempotency_key_reused'],
  disputed: [409, 'disputed'],
};

/** The error's answer, and its log line. `outage`: where a store failure is told instead of a line per request (store/outage.ts). */
export function respondError(
  c: Context,
  error: unknown,
  log: Logger,
  outage?: { readonly down: boolean; failed(source: string, error: unknown): void },
): Response {
  if (error instanceof HttpError) return c.json(errorBody(error.code, error.message, error.fields), error.status, error.headers);
  if (error instanceof RequestAbortedError) {
    // Counted apart from server failures: logged at info, and the status (never sent) says 400.
    log.info({ client_aborted: true }, 'the client closed the request during its body');
    return c.json(errorBody('invalid_request', error.message), 400);
  }
  if (error instanceof DomainError) {
    const [status, code] = DOMAIN_STATUS[error.kind];
    if (error.kind === 'status_unverified') {
      // No new code while an earlier one may be paid: the checkout service logged why.
      return c.json(errorBody(code, error.message), status, { 'retry-after': String(error.retryAfterSeconds ?? 30) });
    }
    if (status >= 500) {
      log.error({ err: { message: error.message } }, 'the partner service answered what the proxy cannot use');
      return c.json(errorBody(code, 'The payment service answered with an unknown status; try again.'), status);
    }
    return c.json(errorBody(code, error.message, error.fields), status);
  }
  if (error instanceof StoreError) {
    // One line, no stack: the sentence says what the operator must do. During an outage (which the
    // background loops declare and end: they touch the store every few seconds), one line for the
    // outage rather than one per request (store/outage.ts); the request's own line says 503. A request
    // alone never opens one: nothing on a request's path would tell it ended.
    if (outage?.down) outage.failed('requests', error);
    else log.error({ err: { message: error.message, code: error.code } }, 'the store cannot serve');
    return c.json(errorBody('store_unavailable', 'The payment server cannot reach its data right now; try again later.'), 503);
  }
  if (error instanceof PartnerError) {
    // The partner's message is already redacted (partner/errors.ts); details carry no secrets.
    const cause = {
      operation: error.details.operation,
      status: error.details.status,
      transaction_id: error.details.transactionId,
      outcome_unknown: error.details.outcomeUnknown,
    };
    switch (error.kind) {
      case 'invalid_input':
        return c.json(errorBody('invalid_request', error.message, error.details.fields), 400);
      case 'not_found':
        return c.json(errorBody('not_found', 'No such payment.'), 404);
      case 'refused':
        log.warn({ err: { message: error.message }, ...cause }, 'the partner service refused a request');
        return c.json(errorBody('upstream_refused', 'The payment service refused the request.', error.details.fields), 502);
      case 'timeout':
        // A payment create is logged once, at error only if the partner may have acted (logFailedCreate).
        if (!logFailedCreate(log, error, 'answered 504 upstream_timeout: no code shown')) {
          log.error({ err: { message: error.message }, ...cause }, 'the partner service timed out');
        }
        return c.json(errorBody('upstream_timeout', 'The payment service did not answer in time; try again.'), 504);
      default:
        if (!logFailedCreate(log, error, 'answered 503 upstream_unavailable: no code shown')) {
          log.error({ err: { message: error.message }, ...cause }, 'the partner service failed');
        }
        return c.json(errorBody('upstream_unavailable', 'The payment service is unavailable; try again.'), 503);
    }
  }
  log.error({ err: error }, 'unexpected error');
  return c.json(errorBody('internal', 'Something went wrong on the server; try again.'), 500);
}
