/**
 * The contract between the widget and the proxy's browser API: paths, request and response shapes.
 * The proxy validates requests with these schemas and the widget parses responses with them, so the
 * two can never disagree. zod/mini keeps the widget's bundle small.
 */
import { z } from 'zod/mini';
import { LIMITS, charCount, formatReais, isCents } from './limits.ts';
import { isValidDocument } from './document.ts';
import { PAYMENT_STATUSES } from './status.ts';

/** Fills a route template's `:name` segments with encoded values. */
export function fillPath(template: string, params: Record<string, string>): string {
  return template.replace(/:(\w+)/g, (_, name: string) => encodeURIComponent(params[name] ?? ''));
}

/** Routes under the proxy's browser API base (the widget's `endpoint`). */
export const API_PATHS = {
  payments: '/payments',
  payment: '/payments/:reference',
  /** Server-Sent Events: see STATUS_STREAM. */
  paymentEvents: '/payments/:reference/events',
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

const { min, max } = LIMITS.paymentValue;

/** A payment value in reais: cents as decimals, within the partner's limits. */
export const PaymentValue = /* @__PURE__ */ z.number().check(
  z.refine(isCents, 'must be an amount with at most two decimals'),
  z.gte(min, `must be at least ${formatReais(min)}`),
  z.lte(max, `must be at most ${formatReais(max)}`),
);

/** Text printed on the customer's proof of payment. */
export const PaymentDescription = /* @__PURE__ */ z.string().check(
  z.refine((s) => charCount(s) <= LIMITS.descriptionMaxLength, `must be at most ${LIMITS.descriptionMaxLength} characters`),
);

export const CustomerName = /* @__PURE__ */ z.string().check(
  z.refine((s) => s.trim().length > 0, 'must not be empty'),
  z.refine((s) => charCount(s) <= LIMITS.customerNameMaxLength, `must be at most ${LIMITS.customerNameMaxLength} characters`),
);

export const CustomerDocument = /* @__PURE__ */ z.string().check(z.refine(isValidDocument, 'must be a valid CPF or CNPJ'));

/**
 * The spec's pairing rule: a customer's name and document go together or not at all. Shared by every
 * schema that carries them (the proxy's create request, the partner's create request).
 */
export function nameAndDocumentTogether(value: { name?: string | undefined; document?: string | undefined }): string | null {
  if (value.name !== undefined && value.document === undefined) return 'document';
  if (value.document !== undefined && value.name === undefined) return 'name';
  return null;
}

export const pairingCheck = /* @__PURE__ */ z.superRefine((value: { name?: string | undefined; document?: string | undefined }, ctx) => {
  const missing = nameAndDocumentTogether(value);
  if (missing) {
    ctx.issues.push({
      code: 'custom',
      path: [missing],
      message: `is required when ${missing === 'name' ? 'document' : 'name'} is given`,
      input: value,
    });
  }
});

/** POST {endpoint}/payments */
export const CreatePaymentRequest = /* @__PURE__ */ z
  .strictObject({
    value: PaymentValue,
    description: z.optional(PaymentDescription),
    name: z.optional(CustomerName),
    document: z.optional(CustomerDocument),
  })
  .check(pairingCheck);
export type CreatePaymentRequest = z.infer<typeof CreatePaymentRequest>;

export const PaymentStatusSchema = /* @__PURE__ */ z.enum(PAYMENT_STATUSES);

/** A partner reference as it may appear in a path. */
export const Reference = /* @__PURE__ */ z.string().check(
  z.regex(/^[A-Za-z0-9_-]+$/, 'must contain only letters, digits, "-" and "_"'),
  z.maxLength(LIMITS.referenceMaxLength, `must be at most ${LIMITS.referenceMaxLength} characters`),
);

/**
 * What the browser sees of a payment, and nothing more: no token, tenant, document or internal id.
 * `server_time` lets the widget correct its countdown for a wrong device clock.
 */
export const PaymentView = /* @__PURE__ */ z.object({
  reference: z.string(),
  status: PaymentStatusSchema,
  value: z.number(),
  /** The copy-and-paste code (BR Code). */
  brcode: z.string(),
  /** The partner's image of the QR code, a fallback when the code cannot be drawn locally. */
  qr_code_url: z.string(),
  /** The partner's hosted checkout page for this payment. */
  checkout_url: z.string(),
  created_at: z.string(),
  expires_at: z.string(),
  server_time: z.string(),
});
export type PaymentView = z.infer<typeof PaymentView>;
