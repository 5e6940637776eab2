/**
 * The part of the contract the widget's bundle carries: paths and zod-free guards of answers, with no
 * import of zod at all (the bundle's size budget). index.ts exports it beside the schemas of
 * contract.ts and errors.ts, which the proxy uses; change each guard together with its schema.
 */
import type { PaymentView } from './contract.ts';
import type { ErrorBody } from './errors.ts';
import { isPaymentStatus } from './status.ts';

/** Fills a route template's `:name` segments with encoded values. */
export function fillPath(template: string, params: Record<string, string>): string {
  return template.replace(/:(\w+)/g, (_, name: string) => encodeURIComponent(params[name] ?? ''));
}

/** `path` (one of the routes below) under the widget's `endpoint`, as the widget's client forms it. */
export const underEndpoint = (endpoint: string, path: string): string => endpoint.replace(/\/$/, '') + path;

/**
 * The page's own early requests (server/merchant/payment-request.ts writes the script that sends them):
 * `self[EARLY_REQUESTS][absolute URL]` is the `fetch` of a checkout's payment the page sent as it was
 * parsed, which the widget takes instead of sending its own (src/early.ts).
 */
export const EARLY_REQUESTS = 'pixCheckoutRequests';

/** Routes under the proxy's browser API base (the widget's `endpoint`). */
export const API_PATHS = {
  payments: '/payments',
  payment: '/payments/:reference',
  /** Server-Sent Events: see STATUS_STREAM. */
  paymentEvents: '/payments/:reference/events',
} as const;

/** Routes of checkouts under the same base as API_PATHS. */
export const CHECKOUT_PATHS = {
  /** POST, server to server with `Authorization: Bearer <API key>`: create (idempotent on order_id). */
  checkouts: '/checkouts',
  /** GET, server to server with the API key: the checkout and its payment, to confirm it was paid. */
  checkout: '/checkouts/:id',
  /** POST from the browser, no body: the checkout's live payment, issued on the first call. */
  checkoutPayment: '/checkouts/:id/payment',
} as const;

/**
 * The live status stream (`GET {endpoint}/payments/:reference/events`, `text/event-stream`): one
 * `status` event with the payment view (JSON) at once, then one on every change. After a final
 * status (see isFinalStatus) the server ends the stream; the client must then close its EventSource,
 * or it would reconnect. Comment lines keep idle connections alive.
 */
export const STATUS_STREAM = {
  event: 'status',
  /** Milliseconds the server asks EventSource to wait before reconnecting. */
  retryMs: 3000,
  /** Milliseconds between keep-alive comments. */
  keepAliveMs: 15_000,
} as const;

const VIEW_STRING_FIELDS = ['reference', 'brcode', 'qr_code_url', 'checkout_url', 'created_at', 'expires_at', 'server_time'] as const;

/**
 * The same rule as contract.ts's PaymentView schema, without zod: the widget's script-tag bundle parses
 * answers with this guard so it does not carry zod (the bundle's size budget). test/browser's
 * contract-guard test proves the two accept and refuse the same samples; change them together.
 */
export function isPaymentView(input: unknown): input is PaymentView {
  if (typeof input !== 'object' || input === null) return false;
  const view = input as Record<string, unknown>;
  const optional = (key: string, type: 'string' | 'boolean', nullable: boolean) =>
    view[key] === undefined || (nullable && view[key] === null) || typeof view[key] === type;
  return (
    VIEW_STRING_FIELDS.every((key) => typeof view[key] === 'string') &&
    isPaymentStatus(view.status) &&
    Number.isFinite(view.value) &&
    optional('favoured', 'string', true) &&
    optional('paid_at', 'string', true) &&
    optional('renewable', 'boolean', false)
  );
}

/** The ErrorBody schema's rule without zod, for the widget's bundle (see isPaymentView). */
export function isErrorBody(input: unknown): input is ErrorBody {
  const isRecord = (x: unknown): x is Record<string, unknown> => typeof x === 'object' && x !== null && !Array.isArray(x);
  if (!isRecord(input) || !isRecord(input.error)) return false;
  const { code, message, fields } = input.error;
  return (
    typeof code === 'string' &&
    typeof message === 'string' &&
    (fields === undefined || (isRecord(fields) && Object.values(fields).every((v) => typeof v === 'string')))
  );
}
