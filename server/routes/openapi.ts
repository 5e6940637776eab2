/**
 * The proxy's HTTP API as an OpenAPI 3.1 document, generated from the zod contract that validates
 * every request and answer (src/shared: zod 4's JSON Schema output, `z.toJSONSchema`), so the
 * document cannot say another thing than the code checks. Served at `GET {basePath}/openapi.json`
 * and written to docs/openapi.json by the build (scripts/openapi.ts); a merchant generates a typed
 * client from it in any language (docs/openapi.md). test/node/routes/openapi.test.ts lints it
 * with Redocly's recommended rules and holds it to the app's routes, both ways.
 */
import { Hono } from 'hono';
import { z } from 'zod/mini';
import {
  CheckoutPaymentRequest,
  CheckoutView,
  CreateCheckoutRequest,
  CreateRefundRequest,
  CreateTransferRequest,
  OpenPaymentRequest,
  OutcomeEvent,
  PaymentView,
} from '../../src/shared/contract.ts';
import { ERROR_CODES, ErrorBody, type ErrorCode } from '../../src/shared/errors.ts';
import { MERCHANT_PATHS, Report } from '../../src/shared/merchant.ts';
import { IDEMPOTENCY_HEADER, PAYOUT_PATHS, TransferList, TransferView } from '../../src/shared/payouts.ts';
import { API_PATHS, CHECKOUT_PATHS } from '../../src/shared/wire.ts';
import { allowOnly } from '../http/method-not-allowed.ts';
import { REQUEST_ID_HEADER } from '../http/request-log.ts';
import { HEALTH_PATHS } from './health.ts';
import { METRICS_PATH } from './metrics.ts';
import { WEBHOOK_PATH } from './webhooks.ts';
import { WIDGET_CHUNK_PATHS, WIDGET_SCRIPT_PATH } from './widget-script.ts';

type Json = Record<string, unknown>;

/** A zod schema as JSON Schema 2020-12 (OpenAPI 3.1's dialect); refinements the JSON Schema cannot say are left to the prose. */
function jsonSchema(schema: z.core.$ZodType, io: 'input' | 'output'): Json {
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, { target: 'draft-2020-12', io, unrepresentable: 'any' }) as Json;
  return rest;
}

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });

/** The components every operation refers to: one schema per contract type. */
function components(): Json {
  return {
    schemas: {
      Error: { ...jsonSchema(ErrorBody, 'output'), description: 'Every refusal: `error.code` (one of ERROR_CODES), a sentence, and per-field problems.' },
      ErrorCode: { type: 'string', enum: [...ERROR_CODES] },
      OpenPaymentRequest: jsonSchema(OpenPaymentRequest, 'input'),
      PaymentView: jsonSchema(PaymentView, 'output'),
      CreateCheckoutRequest: jsonSchema(CreateCheckoutRequest, 'input'),
      CheckoutPaymentRequest: jsonSchema(CheckoutPaymentRequest, 'input'),
      CheckoutView: jsonSchema(CheckoutView, 'output'),
      CreateTransferRequest: jsonSchema(CreateTransferRequest, 'input'),
      CreateRefundRequest: jsonSchema(CreateRefundRequest, 'input'),
      TransferView: jsonSchema(TransferView, 'output'),
      TransferList: jsonSchema(TransferList, 'output'),
      OutcomeEvent: jsonSchema(OutcomeEvent, 'output'),
      Report: jsonSchema(Report, 'output'),
      Received: { type: 'object', properties: { received: { type: 'boolean', const: true } }, required: ['received'] },
    },
    securitySchemes: {
      apiKey: { type: 'http', scheme: 'bearer', description: "The merchant server's key (PIX_API_KEY): `Authorization: Bearer <key>`. Never from a browser." },
      metricsToken: { type: 'http', scheme: 'bearer', description: 'PIX_METRICS_TOKEN, for a Prometheus scraper.' },
    },
    parameters: {
      RequestId: {
        name: REQUEST_ID_HEADER,
        in: 'header',
        required: false,
        description:
          "Your request's id (a load balancer's), echoed in the answer's X-Request-Id and the proxy's log lines; a new one when absent or malformed.",
        schema: { type: 'string', maxLength: 200 },
      },
      IdempotencyKey: {
        name: IDEMPOTENCY_HEADER,
        in: 'header',
        required: true,
        description:
          "One key per transfer you mean: the same key again answers the first request's transfer, never a second one (1 to 255 printable ASCII characters).",
        schema: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[\\x21-\\x7e]{1,255}$' },
      },
    },
    headers: {
      RequestId: { description: "This request's id, as in the proxy's log lines.", schema: { type: 'string' } },
      RetryAfter: { description: 'Seconds to wait before trying again.', schema: { type: 'string' } },
    },
  };
}

/** HTTP statuses and the error codes each may carry, for one operation. */
type Errors = Partial<Record<number, readonly ErrorCode[]>>;

/** What every route may answer beside its own: a wrong method, a stopping instance, a store that cannot serve, a fault. */
const COMMON_ERRORS: Errors = { 405: ['method_not_allowed'], 500: ['internal'], 503: ['shutting_down', 'store_unavailable'] };
/** What the partner may cause where the proxy calls it. */
const UPSTREAM_ERRORS: Errors = { 502: ['upstream_refused', 'upstream_unavailable'], 503: ['not_ready', 'status_unverified'], 504: ['upstream_timeout'] };
const BODY_ERRORS: Errors = { 400: ['invalid_request', 'invalid_json'], 413: ['payload_too_large'], 415: ['unsupported_media_type'] };
const KEY_ERRORS: Errors = { 401: ['unauthorized'] };

function merge(...all: Errors[]): Errors {
  const out: Record<number, ErrorCode[]> = {};
  for (const errors of all)
    for (const [status, codes] of Object.entries(errors)) out[Number(status)] = [...new Set([...(out[Number(status)] ?? []), ...(codes ?? [])])];
  return out;
}

const withRequestId = { [REQUEST_ID_HEADER]: { $ref: '#/components/headers/RequestId' } };

function errorResponses(errors: Errors): Json {
  const out: Json = {};
  for (const [status, codes] of Object.entries(errors)) {
    const retry = status === '429' || status === '503';
    out[status] = {
      description: `Refused: ${(codes ?? []).map((c) => `\`${c}\``).join(', ')}.`,
      headers: { ...withRequestId, ...(retry ? { 'Retry-After': { $ref: '#/components/headers/RetryAfter' } } : {}) },
      content: {
        'application/json': {
          schema: {
            allOf: [ref('Error'), { type: 'object', properties: { error: { type: 'object', properties: { code: { ...ref('ErrorCode'), enum: codes } } } } }],
          },
        },
      },
    };
  }
  return out;
}

const json = (schema: Json, description: string) => ({ description, headers: withRequestId, content: { 'application/json': { schema } } });

interface Operation {
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
const PATH_PARAMETERS: Record<string, Json> = {
  reference: pathParameter('reference', "The payment's reference at the partner, percent-encoded."),
  id: pathParameter('id', 'The checkout id (co_...) or transfer id (tr_...).'),
  secret: pathParameter('secret', 'PIX_WEBHOOK_SECRET_PATH, when one is configured.'),
};

function operations(): Operation[] {
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
      ok: { 200: script },
      errors: { 404: ['not_found'] },
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
      description: 'Issued on the first call; `{"renew": true}` asks for a new code before this one expires.',
      tag: 'Browser',
      body: { schema: 'CheckoutPaymentRequest', required: false },
      ok: { 201: json(ref('PaymentView'), 'A new payment issued.'), 200: json(ref('PaymentView'), 'The current payment.') },
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

/** A Hono path (`/payments/:reference`) as OpenAPI writes it (`/payments/{reference}`). */
export const openApiPath = (path: string): string => path.replace(/:(\w+)/g, '{$1}');

/** The OpenAPI 3.1 document of the proxy's HTTP API served under `basePath`. */
export function openApiDocument(basePath = '/api', version = '0.1.0'): Json {
  const paths: Record<string, Json> = {};
  for (const op of operations()) {
    const full = openApiPath(op.root ? op.path : `${basePath}${op.path}`);
    const names = [...op.path.matchAll(/:(\w+)/g)].map((m) => m[1]!);
    const errors = merge(COMMON_ERRORS, op.errors);
    const body =
      op.body === undefined
        ? {}
        : {
            requestBody: {
              required: op.body.required,
              content: op.body.schema
                ? { 'application/json': { schema: ref(op.body.schema) } }
                : { 'application/json': { schema: { type: 'object' } }, 'application/x-www-form-urlencoded': { schema: { type: 'object' } } },
            },
          };
    paths[full] ??= {};
    paths[full][op.method] = {
      operationId: op.id,
      summary: op.summary,
      ...(op.description ? { description: op.description } : {}),
      tags: [op.tag],
      security: op.security ? [{ [op.security]: [] }] : [],
      parameters: [...names.map((n) => PATH_PARAMETERS[n]!), ...(op.query ?? []), ...(op.headers ?? []), { $ref: '#/components/parameters/RequestId' }],
      ...body,
      responses: { ...Object.fromEntries(Object.entries(op.ok).map(([status, r]) => [status, r])), ...errorResponses(errors) },
    };
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'pix-checkout proxy',
      version,
      summary: 'Pix payments for a merchant: checkouts, payments, refunds and payouts, through the partner service.',
      description:
        'The proxy between a merchant and its Pix partner service. Every refusal is `{"error": {"code", "message", "fields"?}}`; every answer carries X-Request-Id. Outcomes reach the merchant by Standard Webhooks (see OutcomeEvent and docs/webhooks.md).',
      license: { name: 'MIT', identifier: 'MIT' },
    },
    servers: [{ url: '/', description: 'The proxy itself (its own origin).' }],
    tags: [
      { name: 'Browser', description: "What the widget calls from the customer's page." },
      { name: 'Checkouts', description: "Server to server, with the API key: the merchant's checkouts." },
      { name: 'Payouts', description: 'Server to server, with the API key: transfers and refunds.' },
      { name: 'Merchant', description: 'Server to server, with the API key: the accounting export and the outcome events.' },
      { name: 'Partner', description: "The partner service's notifications." },
      { name: 'Operations', description: 'Health, readiness, metrics and this document.' },
    ],
    paths,
    webhooks: {
      outcome: {
        post: {
          operationId: 'receiveOutcomeEvent',
          summary: 'An outcome, POSTed to your PIX_MERCHANT_WEBHOOK_URL',
          description:
            'Signed as Standard Webhooks says: verify `webhook-signature` over `webhook-id.webhook-timestamp.body` with your secret (any Standard Webhooks library does). Answer 2xx once stored; anything else is retried for 3 days. Deduplicate on `webhook-id` (the event id).',
          tags: ['Merchant'],
          security: [],
          parameters: [
            { name: 'webhook-id', in: 'header', required: true, description: "The event's id (OutcomeEvent.id).", schema: { type: 'string' } },
            { name: 'webhook-timestamp', in: 'header', required: true, description: 'Unix seconds when this attempt was signed.', schema: { type: 'string' } },
            {
              name: 'webhook-signature',
              in: 'header',
              required: true,
              description: '`v1,<base64 HMAC-SHA256>`, one per configured secret, separated by spaces.',
              schema: { type: 'string' },
            },
            {
              name: 'Pix-Checkout-Signature',
              in: 'header',
              required: true,
              deprecated: true,
              description: '`t=<seconds>,v1=<hex>`: deprecated, for receivers written before.',
              schema: { type: 'string' },
            },
          ],
          requestBody: { required: true, content: { 'application/json': { schema: ref('OutcomeEvent') } } },
          responses: { 200: { description: 'Stored; any 2xx will do.' }, 400: { description: 'Refused: sent again later, for 3 days.' } },
        },
      },
    },
    components: components(),
  };
}

/** `GET {basePath}/openapi.json`: the document, made once. */
export function openApiRoutes(basePath: string): Hono {
  const routes = new Hono();
  let text: string | null = null;
  routes.get(MERCHANT_PATHS.openapi, (c) => {
    text ??= JSON.stringify(openApiDocument(basePath));
    return c.body(text, 200, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'public, max-age=300' });
  });
  allowOnly(routes, MERCHANT_PATHS.openapi, 'GET');
  return routes;
}
