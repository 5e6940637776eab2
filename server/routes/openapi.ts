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
import { ERROR_CODES, ErrorBody } from '../../src/shared/errors.ts';
import { FIRST_SCREEN } from '../../src/shared/first-screen.ts';
import { MERCHANT_PATHS, Report } from '../../src/shared/merchant.ts';
import { IDEMPOTENCY_HEADER, TransferList, TransferView } from '../../src/shared/payouts.ts';
import { allowOnly } from '../http/method-not-allowed.ts';
import { REQUEST_ID_HEADER } from '../http/request-log.ts';
import { COMMON_ERRORS, merge, operations, PATH_PARAMETERS, ref, withRequestId, type Errors, type Json } from './openapi-operations.ts';

/** A zod schema as JSON Schema 2020-12 (OpenAPI 3.1's dialect); refinements the JSON Schema cannot say are left to the prose. */
function jsonSchema(schema: z.core.$ZodType, io: 'input' | 'output'): Json {
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, { target: 'draft-2020-12', io, unrepresentable: 'any' }) as Json;
  return rest;
}

/** The components every operation refers to: one schema per contract type. */
function components(): Json {
  const paymentView = jsonSchema(PaymentView, 'output');
  return {
    schemas: {
      Error: { ...jsonSchema(ErrorBody, 'output'), description: 'Every refusal: `error.code` (one of ERROR_CODES), a sentence, and per-field problems.' },
      ErrorCode: { type: 'string', enum: [...ERROR_CODES] },
      OpenPaymentRequest: jsonSchema(OpenPaymentRequest, 'input'),
      PaymentView: paymentView,
      FirstScreen: {
        type: 'object',
        description:
          "A payment's first screen, for a script-tag page's head (renderPaymentRequest) to put into the plain element before the widget's script arrives: the element's styles and shadow root markup as the server render writes them, and its copy button's texts.",
        properties: {
          css: { type: 'string' },
          html: { type: 'string' },
          texts: {
            type: 'object',
            properties: { copy: { type: 'string' }, copied: { type: 'string' }, failed: { type: 'string' } },
            required: ['copy', 'copied', 'failed'],
            additionalProperties: false,
          },
        },
        required: ['css', 'html', 'texts'],
        additionalProperties: false,
      },
      PaymentViewWithFirstScreen: {
        ...paymentView,
        description: `The payment, and its first screen (\`${FIRST_SCREEN.param}\` asked for it).`,
        properties: { ...(paymentView.properties as Json), [FIRST_SCREEN.field]: ref('FirstScreen') },
        required: [...(paymentView.required as string[]), FIRST_SCREEN.field],
      },
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
