/**
 * The contract between the widget and the proxy's browser API: paths, request and response shapes.
 * The proxy validates requests with these schemas; the widget checks answers with the zod-free guards
 * of wire.ts (exported beside these by index.ts), which test/browser/contract-guard.test.ts holds to
 * these schemas. This module never imports wire.ts, so the two make no import circle.
 */
import { z } from 'zod/mini';
import { LIMITS, charCount, printableTextProblem } from './limits.ts';
import { isValidDocument } from './document.ts';
import { PAYMENT_STATUSES } from './status.ts';
import { FIRST_SCREEN } from './first-screen.ts';
import { PixKeyTypeSchema, TransferValue, TransferView, amountInReais, pixKeyCheck } from './payouts.ts';

/** A payment value in reais: cents as decimals, within the partner's limits. */
export const PaymentValue = /* @__PURE__ */ amountInReais(LIMITS.paymentValue);

/**
 * A text a person reads on the proof of payment: trimmed (spaces around it are never meant), then
 * non-empty, printable (printableTextProblem) and at most `max` characters.
 */
const printableText = (max: number) =>
  z.string().check(
    z.trim(),
    z.superRefine((s, ctx) => {
      const problem = s.length === 0 ? 'must not be empty' : (printableTextProblem(s) ?? (charCount(s) > max ? `must be at most ${max} characters` : null));
      if (problem) ctx.issues.push({ code: 'custom', message: problem, input: s, continue: true });
    }),
  );

/** Text printed on the customer's proof of payment. */
export const PaymentDescription = /* @__PURE__ */ printableText(LIMITS.descriptionMaxLength);

export const CustomerName = /* @__PURE__ */ printableText(LIMITS.customerNameMaxLength);

/**
 * A CPF or CNPJ, numeric or alphanumeric, with or without punctuation. Letters of an alphanumeric CNPJ
 * are upper-cased (what the Receita Federal issues), so the partner never sees '12.abc.345/01de-35'.
 */
export const CustomerDocument = /* @__PURE__ */ z.string().check(z.toUpperCase(), z.refine(isValidDocument, 'must be a valid CPF or CNPJ'));

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

/**
 * A partner reference, as the partner gave it: any text without control characters or spaces at
 * its ends (the spec does not say its form). In a path it is percent-encoded (wire.ts fillPath), so
 * a reference with `/`, `.` or `:` is still readable by the browser.
 */
export const Reference = /* @__PURE__ */ z
  .string()
  .check(
    z.regex(/^[^\s\p{Cc}](?:[^\p{Cc}]*[^\s\p{Cc}])?$/u, 'must be text without control characters or spaces at its ends'),
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
  /**
   * Who is being paid (the partner's `favoured`, spec 2.1): the name the payer's bank app shows too.
   * Null while the proxy has not read it; absent from older proxies.
   */
  favoured: z.optional(z.nullable(z.string())),
  /** When the payment was recorded paid (the receipt); null until then. */
  paid_at: z.optional(z.nullable(z.string())),
  /**
   * A checkout's payment only: whether the checkout may still issue a new code (renewals left), so
   * the widget can offer "need more time?" before this one expires.
   */
  renewable: z.optional(z.boolean()),
  server_time: z.string(),
});
export type PaymentView = z.infer<typeof PaymentView>;

/*
 * Checkouts: the default mode, in which the merchant's server decides the amount. Its server creates
 * a checkout with the API key (server to server); the page embeds only the checkout's opaque id, and
 * the browser asks for that checkout's payment without sending any amount at all.
 */

/** An opaque, unguessable checkout id: `co_` and 24 URL-safe characters (144 random bits). */
export const CheckoutId = /* @__PURE__ */ z.string().check(z.regex(/^co_[A-Za-z0-9_-]{24}$/, 'must be a checkout id (co_ and 24 letters, digits, "-" or "_")'));

/** The merchant's own order id: one checkout per order. */
export const OrderId = /* @__PURE__ */ z
  .string()
  .check(
    z.regex(/^[A-Za-z0-9._:\-/#]+$/, 'must contain only letters, digits and . _ : - / #'),
    z.maxLength(LIMITS.orderIdMaxLength, `must be at most ${LIMITS.orderIdMaxLength} characters`),
  );

/** Where the hosted checkout sends the payer after paying: https only. */
export const CallbackUrl = /* @__PURE__ */ z.url({ protocol: /^https$/, error: 'must be an https:// URL' });

/**
 * POST {endpoint}/checkouts (server to server). The customer's name and document travel only here,
 * never from or to the browser.
 */
export const CreateCheckoutRequest = /* @__PURE__ */ z
  .strictObject({
    value: PaymentValue,
    order_id: OrderId,
    description: z.optional(PaymentDescription),
    name: z.optional(CustomerName),
    document: z.optional(CustomerDocument),
    callback: z.optional(CallbackUrl),
    /**
     * Issue the checkout's first payment now, before answering: the customer's page then gets it
     * from the proxy's store with no wait on the partner (while its stored status is fresh). Its
     * expiry runs from now. Default false: issued on the page's first call.
     */
    issue_payment: z.optional(z.boolean()),
    /**
     * The earlier checkout of the same order this one replaces (its renewals ran out): linked, so a
     * payment of both is seen as the order paid twice (`checkout.overpaid`), and named in its view.
     */
    replaces: z.optional(CheckoutId),
  })
  .check(pairingCheck);
export type CreateCheckoutRequest = z.infer<typeof CreateCheckoutRequest>;

/**
 * A checkout's status: `open` until its first payment is issued, then its current payment's status
 * (`pending`, `paid`, `expired`, `canceled`).
 */
export const CHECKOUT_STATUSES = ['open', ...PAYMENT_STATUSES] as const;
export type CheckoutStatus = (typeof CHECKOUT_STATUSES)[number];

/** What the merchant's server gets back about a checkout (never sent to a browser). */
export const CheckoutView = /* @__PURE__ */ z.object({
  checkout_id: z.string(),
  order_id: z.string(),
  value: z.number(),
  status: z.enum(CHECKOUT_STATUSES),
  /** The current payment, once the page has asked for one. */
  payment: z.optional(PaymentView),
  /** How many more payments may be issued after the current one expires. */
  renewals_left: z.number(),
  /** Its refunds, oldest first (payouts.ts). */
  refunds: z.optional(z.array(TransferView)),
  /**
   * Paid more than once (an earlier code paid after a renewal, or two codes paid): `value` is the
   * extra in reais, `references` every paid payment of the checkout, oldest first. The status stays
   * `paid`; the extra is the merchant's to refund (or the proxy's, PIX_REFUND_OVERPAYMENTS).
   */
  overpaid: z.optional(z.object({ value: z.number(), references: z.array(z.string()) })),
  /**
   * A payment of the checkout for which the partner reported another value than ours: never shown
   * paid (docs/webhooks.md, `payment.amount_mismatch`); an operator settles it with the partner.
   */
  amount_mismatch: z.optional(z.object({ reference: z.string(), value: z.number(), reported_value: z.number() })),
  /** True while an authenticated notification contradicts a final status of its payments and no operator has resolved it: refunds wait. */
  disputed: z.optional(z.boolean()),
  /**
   * Money of its paid payments given back to the payer (`payment.returned`): `value` in reais, in all,
   * `references` the payments returned from. The status stays `paid`; what may be refunded is lowered by it.
   */
  returned: z.optional(z.object({ value: z.number(), references: z.array(z.string()) })),
  /** The earlier checkout of the same order this one replaces (`replaces` at its creation). */
  replaces: z.optional(z.string()),
});
export type CheckoutView = z.infer<typeof CheckoutView>;

/**
 * POST {endpoint}/checkouts/:id/payment from the browser: no body (the live payment), or
 * `{"renew": true}` to ask for a new code now, before the current one expires ("need more time?").
 * The proxy first confirms with the partner that the current code was not paid; a renewal counts
 * against the checkout's renewals.
 */
export const CheckoutPaymentRequest = /* @__PURE__ */ z.strictObject({
  renew: z.optional(z.literal(true, { error: 'must be true, or left out' })),
});
export type CheckoutPaymentRequest = z.infer<typeof CheckoutPaymentRequest>;

/**
 * Its query: `render`, a script-tag page's head asking for the payment's first screen with it
 * (src/shared/first-screen.ts), in one of the widget's locales. Any other parameter is refused.
 */
export const CheckoutPaymentQuery = /* @__PURE__ */ z.strictObject({
  [FIRST_SCREEN.param]: z.optional(z.enum(FIRST_SCREEN.locales, { error: `must be one of ${FIRST_SCREEN.locales.join(', ')}` })),
});
export type CheckoutPaymentQuery = z.infer<typeof CheckoutPaymentQuery>;

/**
 * POST {endpoint}/payments in open-amount mode (off unless the server turns it on): the browser
 * chooses the value within the server's bounds. No customer data: that travels server to server.
 */
export const OpenPaymentRequest = /* @__PURE__ */ z.strictObject({
  value: PaymentValue,
  description: z.optional(PaymentDescription),
});
export type OpenPaymentRequest = z.infer<typeof OpenPaymentRequest>;

/** What the proxy tells the merchant's backend of each final outcome (its signed webhook, `onOutcome`). */
export const OUTCOME_TYPES = [
  'payment.paid',
  'payment.canceled',
  'transfer.approved',
  'transfer.canceled',
  'transfer.refused',
  /** The partner reported another value for a payment than the one issued: not taken as paid (`reported_value`). */
  'payment.amount_mismatch',
  /** A checkout paid more than once: `value` is the extra, `references` the paid payments, `refund` what the proxy did about it. */
  'checkout.overpaid',
  /** An authenticated notification contradicts a final payment (`recorded_status`, `notified_status`): refunds wait for an operator. */
  'payment.disputed',
  /**
   * Money of a paid payment was given back to the payer (a Pix return, "devolução", the central bank's
   * MED among them): `returned_value` is everything returned of it so far; the payment stays paid,
   * and what may still be refunded of its checkout is lowered by it. One event per new total.
   */
  'payment.returned',
] as const;
export type OutcomeType = (typeof OUTCOME_TYPES)[number];

/**
 * The merchant webhook's body (docs/webhooks.md). Receivers parse it with this schema after checking
 * the signature; fields added by newer proxies are let through.
 */
export const OutcomeEvent = /* @__PURE__ */ z.object({
  /** Stable: the same outcome always has the same id. Deduplicate on it. */
  id: z.string(),
  type: z.enum(OUTCOME_TYPES),
  /** When the proxy recorded the outcome, ISO 8601. */
  created_at: z.string(),
  data: z.object({
    reference: z.string(),
    status: z.enum(['paid', 'canceled', 'approved', 'refused', 'amount_mismatch', 'overpaid', 'disputed', 'returned']),
    /** Reais. */
    value: z.nullable(z.number()),
    /** The paid checkout; for a refund, the refunded one. */
    checkout_id: z.nullable(z.string()),
    order_id: z.nullable(z.string()),
    /** Transfers started through the proxy's API: its id (payouts.ts), the merchant's reference, a refusal's reason. */
    transfer_id: z.optional(z.nullable(z.string())),
    transfer_reference: z.optional(z.nullable(z.string())),
    reason: z.optional(z.string()),
    /** `payment.amount_mismatch`: the value the partner reported, in reais. */
    reported_value: z.optional(z.number()),
    /** `payment.returned`: everything returned of the payment so far, in reais. */
    returned_value: z.optional(z.number()),
    /** `checkout.overpaid`: every paid payment of the checkout, oldest first. */
    references: z.optional(z.array(z.string())),
    /**
     * `checkout.overpaid`: `off` (PIX_REFUND_OVERPAYMENTS is not set: the merchant refunds), `sent`
     * (a refund of the extra was started: `transfer_id`), or `payer_key_unknown` (asked to refund,
     * but the partner names no payer key: the merchant must).
     */
    refund: z.optional(z.string()),
    /**
     * `payment.disputed`: the final status the proxy recorded, and what an authenticated notification
     * of the partner said since. The recorded status stands; refunds of the checkout wait for an operator.
     */
    recorded_status: z.optional(z.enum(['paid', 'canceled'])),
    notified_status: z.optional(z.enum(['paid', 'canceled'])),
  }),
});
export type OutcomeEvent = z.infer<typeof OutcomeEvent>;

export const PixKey = /* @__PURE__ */ z.string().check(z.trim(), z.minLength(1, 'must not be empty'), z.maxLength(77, 'must be at most 77 characters'));

/**
 * POST {endpoint}/transfers. With `customer_document` it is spec 4.6 "solicit for a customer" (the
 * key must be that customer's, their KYC approved); without it, a transfer to the key's owner.
 * `reference` is the merchant's own label, echoed back and in the outcome event.
 */
export const CreateTransferRequest = /* @__PURE__ */ z
  .strictObject({
    value: TransferValue,
    pix_key: PixKey,
    pix_key_type: z.optional(PixKeyTypeSchema),
    customer_document: z.optional(CustomerDocument),
    reference: z.optional(OrderId),
  })
  .check(pixKeyCheck);
export type CreateTransferRequest = z.infer<typeof CreateTransferRequest>;

/**
 * POST {endpoint}/checkouts/:id/refunds. Without `value`, whatever of the paid value is not refunded
 * yet. The total refunded never exceeds what the checkout was paid.
 */
export const CreateRefundRequest = /* @__PURE__ */ z
  .strictObject({
    value: z.optional(TransferValue),
    pix_key: PixKey,
    pix_key_type: z.optional(PixKeyTypeSchema),
    customer_document: z.optional(CustomerDocument),
  })
  .check(pixKeyCheck);
export type CreateRefundRequest = z.infer<typeof CreateRefundRequest>;
