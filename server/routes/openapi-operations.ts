/**
 * What each route of the proxy offers, for its OpenAPI document (openapi.ts puts it together): one
 * entry per operation, with its path, security, body, answers and the error codes each status may
 * carry. A route added to the app is added here too: test/node/routes/openapi.test.ts holds the
 * document to the app's routes, both ways.
 */
import { FIRST_SCREEN } from '../../src/shared/first-screen.ts';
import type { ErrorCode } from '../../src/shared/errors.ts';
import { MERCHANT_PATHS } from '../../src/shared/merchant.ts';
import { PAYOUT_PATHS } from '../../src/shared/payouts.ts';
import { API_PATHS, CHECKOUT_PATHS } from '../../src/shared/wire.ts';
import { REQUEST_ID_HEADER } from '../http/request-log.ts';
import { HEALTH_PATHS } from './health.ts';
import { METRICS_PATH } from './metrics.ts';
import { WEBHOOK_PATH } from './webhooks.ts';
import { WIDGET_VERSION, WIDGET_VERSION_PARAM } from '../../src/shared/widget-files.ts';
import { WIDGET_CHUNK_PATHS, WIDGET_SCRIPT_PATH } from './widget-script.ts';

export type Json = Record<string, unknown>;

export const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });

/** HTTP statuses and the error codes each may carry, for one operation. */
export type Errors = Partial<Record<number, readonly ErrorCode[]>>;

/** What every route may answer beside its own: a wrong method, a stopping instance, a store that cannot serve, a fault. */
export const COMMON_ERRORS: Errors = { 405: ['method_not_allowed'], 500: ['internal'], 503: ['shutting_down', 'store_unavailable'] };
/** What the partner may cause where the proxy calls it. */
export const UPSTREAM_ERRORS: Errors = {
  502: ['upstream_refused', 'upstream_unavailable'],
  503: ['not_ready', 'status_unverified'],
  504: ['upstream_timeout'],
};
export const BODY_ERRORS: Errors = { 400: ['invalid_request', 'invalid_json'], 413: ['payload_too_large'], 415: ['unsupported_media_type'] };
export const KEY_ERRORS: Errors = { 401: ['unauthorized'] };

/** The union of error sets: each status with every code any of them gives it. */
export function merge(...all: Errors[]): Errors {
  const out: Record<number, ErrorCode[]> = {};
  for (const errors of all)
    for (const [status, codes] of Object.entries(errors)) out[Number(status)] = [...new Set([...(out[Number(status)] ?? []), ...(codes ?? [])])];
  return out;
}

export const withRequestId = { [REQUEST_ID_HEADER]: { $ref: '#/components/headers/RequestId' } };

const json = (schema: Json, description: string) => ({ description, headers: withRequestId, content: { 'application/json': { schema } } });

export interface Operation {
  method: 'get' | 'post';
  /** The Hono path (`:name` parameters), under the base path unless `root`. */
  path: string;
  root?: boolean;
  id: string;
  summary: string;
  description?: string;
  tag: 'Browser' | 'Checkouts' | 'Payouts' | 'Merchant' | 'Partner' | 'Operations';
  security?: 'apiKey' | 'metricsToken';
  body?: { schema: string; required: boolean };
  query?: Json[];
  headers?: Json[];
  ok: Record<number, Json>;
  errors: Errors;
}

const pathParameter = (name: string, description: string, schema: Json = { type: 'string' }) => ({ name, in: 'path', required: true, description, schema });
export const PATH_PARAMETERS: Record<string, Json> = {
  reference: pathParameter('reference', "The payment's reference at the partner, percent-encoded."),
  id: pathParameter('id', 'The checkout id (co_...) or transfer id (tr_...).'),
  secret: pathParameter('secret', 'PIX_WEBHOOK_SECRET_PATH, when one is configured.'),
};

export function operations(): Operation[] {
  const sse = (description: string) => ({ description, headers: withRequestId, content: { 'text/event-stream': { schema: { type: 'string' } } } });
  const script = {
    description: 'The widget script (or one of its chunks), compressed when the client accepts it.',
    content: { 'text/javascript': { schema: { type: 'string' } } },
  };
  return [
    {
      method: 'get',
      path: HEALTH_PATHS.health,
      root: true,
      id: 'getHealth',
      summary: 'The process answers',
      tag: 'Operations',
      ok: { 200: json({ type: 'object', properties: { status: { const: 'ok' } }, required: ['status'] }, 'Alive.') },
      errors: {},
    },
    {
      method: 'get',
      path: HEALTH_PATHS.ready,
      root: true,
      id: 'getReady',
      summary: 'Ready to serve payments',
      description: 'The store answers and the partner is reachable; `warnings` lists what an operator should fix (a disabled merchant webhook among them).',
      tag: 'Operations',
      ok: {
        200: json(
          {
            type: 'object',
            properties: { status: { const: 'ready' }, checks: { type: 'object' }, warnings: { type: 'array', items: { type: 'string' } } },
            required: ['status', 'checks'],
          },
          'Ready.',
        ),
      },
      errors: { 503: ['not_ready', 'shutting_down'] },
    },
    {
      method: 'get',
      path: METRICS_PATH,
      root: true,
      id: 'getMetrics',
      summary: 'Prometheus metrics',
      description: 'Served only when PIX_METRICS_TOKEN is set (else 404, as any unknown path).',
      tag: 'Operations',
      security: 'metricsToken',
      ok: { 200: { description: 'Prometheus text format.', headers: withRequestId, content: { 'text/plain': { schema: { type: 'string' } } } } },
      errors: { 401: ['unauthorized'] },
    },
    ...[WIDGET_SCRIPT_PATH, ...WIDGET_CHUNK_PATHS].map((path): Operation => ({
      method: 'get',
      path,
      id: `getWidget${path === WIDGET_SCRIPT_PATH ? 'Script' : path.replace(/^\/pix-checkout\.|\.js$/g, '').replace(/^./, (c) => c.toUpperCase())}`,
      summary: path === WIDGET_SCRIPT_PATH ? 'The widget script' : `The widget chunk ${path.slice(1)}`,
      tag: 'Browser',
      ...(path === WIDGET_SCRIPT_PATH
        ? {}
        : {
            description:
              "The script asks for it with its build's version (`?v=`): this proxy's build, or another version's from the store (every instance keeps its own as it starts), cached for good; a version kept nowhere is 404. Without `v`, this proxy's build, revalidated after five minutes.",
            query: [
              {
                name: WIDGET_VERSION_PARAM,
                in: 'query',
                required: false,
                description: "The build's version, as the script writes it.",
                schema: { type: 'string', pattern: WIDGET_VERSION.source },
              },
            ],
          }),
      ok: { 200: script },
      errors: path === WIDGET_SCRIPT_PATH ? { 404: ['not_found'] } : { 400: ['invalid_request'], 404: ['not_found'] },
    })),
    {
      method: 'post',
      path: API_PATHS.payments,
      id: 'createOpenPayment',
      summary: 'Create a payment of an amount the browser chose',
      description: 'Open-amount mode only (PIX_OPEN_AMOUNT); otherwise 403 `open_amount_disabled`: use a checkout.',
      tag: 'Browser',
      body: { schema: 'OpenPaymentRequest', required: true },
      ok: { 201: json(ref('PaymentView'), 'Issued.') },
      errors: merge(BODY_ERRORS, UPSTREAM_ERRORS, { 403: ['open_amount_disabled', 'forbidden'], 429: ['rate_limited'] }),
    },
    {
      method: 'get',
      path: API_PATHS.payment,
      id: 'getPayment',
      summary: "A payment's status",
      tag: 'Browser',
      ok: { 200: json(ref('PaymentView'), 'The payment as the browser sees it.') },
      errors: merge(UPSTREAM_ERRORS, { 400: ['invalid_reference'], 404: ['not_found'], 429: ['rate_limited'] }),
    },
    {
      method: 'get',
      path: API_PATHS.paymentEvents,
      id: 'streamPaymentStatus',
      summary: "A payment's status as it changes (Server-Sent Events)",
      description: 'One `status` event with the PaymentView at once, then one on every change; the stream ends after a final status.',
      tag: 'Browser',
      ok: { 200: sse('`event: status`, `data: <PaymentView JSON>`.') },
      errors: merge(UPSTREAM_ERRORS, { 400: ['invalid_reference'], 404: ['not_found'], 429: ['rate_limited', 'too_many_streams'] }),
    },
    {
      method: 'post',
      path: CHECKOUT_PATHS.checkouts,
      id: 'createCheckout',
      summary: 'Create a checkout (idempotent on order_id)',
      tag: 'Checkouts',
      security: 'apiKey',
      body: { schema: 'CreateCheckoutRequest', required: true },
      ok: {
        201: json(ref('CheckoutView'), 'Created.'),
        200: json(ref('CheckoutView'), 'The checkout of this order_id, created before with the same request.'),
      },
      errors: merge(BODY_ERRORS, KEY_ERRORS, UPSTREAM_ERRORS, { 409: ['conflict'], 429: ['rate_limited'] }),
    },
    {
      method: 'get',
      path: CHECKOUT_PATHS.checkout,
      id: 'getCheckout',
      summary: 'A checkout and its payment: confirm it was paid',
      tag: 'Checkouts',
      security: 'apiKey',
      ok: { 200: json(ref('CheckoutView'), 'The checkout.') },
      errors: merge(KEY_ERRORS, UPSTREAM_ERRORS, { 400: ['invalid_request'], 404: ['not_found'] }),
    },
    {
      method: 'post',
      path: CHECKOUT_PATHS.checkoutPayment,
      id: 'getCheckoutPayment',
      summary: "The checkout's live payment (from the browser)",
      description:
        'Issued on the first call; `{"renew": true}` asks for a new code before this one expires. With `render`, the answer has the payment\'s first screen beside it (`first_screen`), for a script-tag page\'s head (renderPaymentRequest); a render that fails leaves it out.',
      tag: 'Browser',
      query: [
        {
          name: FIRST_SCREEN.param,
          in: 'query',
          required: false,
          description: "The payment's first screen too, in this language.",
          schema: { type: 'string', enum: [...FIRST_SCREEN.locales] },
        },
      ],
      body: { schema: 'CheckoutPaymentRequest', required: false },
      ok: {
        201: json({ oneOf: [ref('PaymentView'), ref('PaymentViewWithFirstScreen')] }, 'A new payment issued.'),
        200: json({ oneOf: [ref('PaymentView'), ref('PaymentViewWithFirstScreen')] }, 'The current payment.'),
      },
      errors: merge(BODY_ERRORS, UPSTREAM_ERRORS, { 403: ['forbidden'], 404: ['not_found'], 409: ['renewals_exhausted'], 429: ['rate_limited'] }),
    },
    {
      method: 'post',
      path: PAYOUT_PATHS.transfers,
      id: 'createTransfer',
      summary: 'Send a transfer to a Pix key',
      tag: 'Payouts',
      security: 'apiKey',
      headers: [{ $ref: '#/components/parameters/IdempotencyKey' }],
      body: { schema: 'CreateTransferRequest', required: true },
      ok: { 201: json(ref('TransferView'), 'Started.'), 200: json(ref('TransferView'), 'The transfer of this Idempotency-Key.') },
      errors: merge(BODY_ERRORS, KEY_ERRORS, UPSTREAM_ERRORS, { 409: ['idempotency_key_reused'] }),
    },
    {
      method: 'get',
      path: PAYOUT_PATHS.transfers,
      id: 'listTransfers',
      summary: 'The transfers started through the proxy, newest first',
      tag: 'Payouts',
      security: 'apiKey',
      query: [
        { name: 'status', in: 'query', required: false, schema: { type: 'string' } },
        { name: 'cursor', in: 'query', required: false, schema: { type: 'string' } },
        { name: 'limit', in: 'query', required: false, schema: { type: 'string', pattern: '^\\d+$' } },
      ],
      ok: { 200: json(ref('TransferList'), 'A page.') },
      errors: merge(KEY_ERRORS, { 400: ['invalid_request'] }),
    },
    {
      method: 'get',
      path: PAYOUT_PATHS.transfer,
      id: 'getTransfer',
      summary: 'One transfer',
      tag: 'Payouts',
      security: 'apiKey',
      ok: { 200: json(ref('TransferView'), 'The transfer.') },
      errors: merge(KEY_ERRORS, { 404: ['not_found'] }),
    },
    {
      method: 'post',
      path: PAYOUT_PATHS.refunds,
      id: 'refundCheckout',
      summary: 'Refund part or all of a paid checkout',
      tag: 'Payouts',
      security: 'apiKey',
      headers: [{ $ref: '#/components/parameters/IdempotencyKey' }],
      body: { schema: 'CreateRefundRequest', required: true },
      ok: { 201: json(ref('TransferView'), 'Started.'), 200: json(ref('TransferView'), 'The refund of this Idempotency-Key.') },
      errors: merge(BODY_ERRORS, KEY_ERRORS, UPSTREAM_ERRORS, {
        404: ['not_found'],
        409: ['checkout_not_paid', 'refund_exceeds_paid', 'disputed', 'idempotency_key_reused'],
      }),
    },
    ...[WEBHOOK_PATH, `${WEBHOOK_PATH}/:secret`].map((path): Operation => ({
      method: 'post',
      path,
      id: path === WEBHOOK_PATH ? 'receivePartnerNotification' : 'receivePartnerNotificationAtSecretPath',
      summary: "The partner's notifications",
      description: 'Stored before the answer, whatever it says; see docs/webhooks.md.',
      tag: 'Partner',
      body: { schema: '', required: true },
      ok: { 202: json(ref('Received'), 'Stored.') },
      errors: { 400: ['invalid_json'], 403: ['forbidden'], 404: ['not_found'], 413: ['payload_too_large'], 429: ['rate_limited'], 503: ['not_ready'] },
    })),
    {
      method: 'get',
      path: MERCHANT_PATHS.reports,
      id: 'getReport',
      summary: 'The accounting export',
      description:
        'Every checkout, payment, refund and payout created from the start of `from` to the end of `to` (days in `time_zone`, default PIX_TIME_ZONE), one row each, then the totals per kind and status; streamed.',
      tag: 'Merchant',
      security: 'apiKey',
      query: [
        { name: 'from', in: 'query', required: true, schema: { type: 'string', format: 'date' } },
        { name: 'to', in: 'query', required: true, schema: { type: 'string', format: 'date' } },
        { name: 'format', in: 'query', required: false, schema: { type: 'string', enum: ['csv', 'json'], default: 'csv' } },
        { name: 'time_zone', in: 'query', required: false, schema: { type: 'string', examples: ['America/Sao_Paulo'] } },
      ],
      ok: {
        200: {
          description: 'CSV (a header, one line per row, then `total` lines) or JSON.',
          headers: withRequestId,
          content: { 'text/csv': { schema: { type: 'string' } }, 'application/json': { schema: ref('Report') } },
        },
      },
      errors: merge(KEY_ERRORS, { 400: ['invalid_request'] }),
    },
    {
      method: 'get',
      path: MERCHANT_PATHS.events,
      id: 'streamOutcomeEvents',
      summary: 'Outcome events as they are recorded (Server-Sent Events), for pix-checkout listen',
      description:
        '`event: outcome`, `id: <sequence>`, `data: <OutcomeEvent JSON, byte for byte as the webhook sends it>`. Unsigned: it comes over your API key. `after` (or Last-Event-ID) resumes after a sequence number.',
      tag: 'Merchant',
      security: 'apiKey',
      query: [{ name: 'after', in: 'query', required: false, schema: { type: 'string', pattern: '^\\d{1,15}$' } }],
      headers: [{ name: 'Last-Event-ID', in: 'header', required: false, schema: { type: 'string' } }],
      ok: { 200: sse('One `outcome` event per OutcomeEvent.') },
      errors: merge(KEY_ERRORS, { 400: ['invalid_request'] }),
    },
    {
      method: 'get',
      path: MERCHANT_PATHS.openapi,
      id: 'getOpenApi',
      summary: 'This document',
      tag: 'Operations',
      ok: { 200: json({ type: 'object' }, 'OpenAPI 3.1.') },
      errors: {},
    },
  ];
}
