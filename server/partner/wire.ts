/**
 * The partner service's wire format (its spec, shared/spec/partner-service.md beside this repository, section 4), shared by the
 * partner client (which sends and parses it) and the sandbox (which serves it).
 *
 * ASSUMPTIONS. The spec leaves some of this "not shown". Every guess we made lives in this module and
 * is listed in ASSUMPTIONS.md beside this file. Requests are sent exactly as the schemas here say.
 * The response schemas describe the sandbox's default dialect exactly (its tests hold it to them);
 * the client does not require them of a real service: it reads answers tolerantly (read.ts).
 */
import { z } from 'zod/mini';
import { CustomerDocument, CustomerName, PaymentDescription, PaymentValue, pairingCheck } from '../../src/shared/contract.ts';
import { LIMITS, formatReais, isCents } from '../../src/shared/limits.ts';
import { PIX_KEY_TYPES, detectPixKeyType, isValidPixKey, type PixKeyType } from '../../src/shared/pix-keys.ts';

/** Paths of section 4, relative to the service's base URL; fill `:external_reference` with fillPath. */
export const PARTNER_PATHS = {
  login: '/api/v2/identity/partner/login',
  getTenant: '/api/v2/identity/partner/get-tenant',
  createPayment: '/api/v2/wallet/partner/transactions/generate-anonymous-pix',
  checkPayment: '/api/v2/wallet/partner/transactions/:external_reference/check',
  getPayment: '/api/v2/wallet/partner/transactions/:external_reference',
  solicitTransferForCustomer: '/api/v3.1/wallet/partner/withdrawals/solicit-for-customer',
  transferToKey: '/api/v3.1/wallet/partner/pix-key/transfer',
  checkTransfer: '/api/v2/wallet/partner/transfers/:external_reference/check',
  notificationUrl: '/api/v2/identity/partner/notification-url',
} as const;

/**
 * ASSUMPTION (the spec sets no size for bodies): requests and notifications are small JSON, so
 * 64 KiB bounds what the sandbox reads and what the proxy's notification intake accepts.
 */
export const PARTNER_MAX_BODY_BYTES = 64 * 1024;

/** ASSUMPTION (spec 3: "meaning of the numeric status codes: not shown"); payments and transfers alike. */
export const PARTNER_STATUS = { pending: 1, approved: 2, canceled: 3 } as const;
export type PartnerStatusCode = (typeof PARTNER_STATUS)[keyof typeof PARTNER_STATUS];

/**
 * What a stored status means: the store keeps the partner's status in this numbering (the partner's
 * own code translated by PIX_STATUS_CODES, domain/payments/reads.ts); `unknown` for any other number.
 */
export function storedStatusMeaning(status: number): keyof typeof PARTNER_STATUS | 'unknown' {
  for (const [meaning, code] of Object.entries(PARTNER_STATUS)) if (code === status) return meaning as keyof typeof PARTNER_STATUS;
  return 'unknown';
}

/** Approved and canceled never change again (spec 3): a payment or transfer in one is settled. */
export const isFinalPartnerStatus = (status: number): boolean => status === PARTNER_STATUS.approved || status === PARTNER_STATUS.canceled;

/** ASSUMPTION (spec 4.4: "mapping from HTTP status to payment state: not shown"). */
export const PAYMENT_CHECK_HTTP = { paid: 200, pending: 202, canceled: 410, notFound: 404 } as const;

/** ASSUMPTION (spec 4.8, 6: "values of notify_type: not shown"); old is the default. */
export const NOTIFY_TYPE = { old: 1, new: 2 } as const;
export type NotifyType = (typeof NOTIFY_TYPE)[keyof typeof NOTIFY_TYPE];

/**
 * ASSUMPTION (spec 4.6, 7: refusals "not shown"): why a transfer was refused up front, sent as
 * `reason` in the error body: 422 invalid_data; 403 kyc_not_approved and key_owner_mismatch;
 * 422 bank_refused.
 */
export const TRANSFER_REFUSAL_REASONS = ['invalid_data', 'kyc_not_approved', 'key_owner_mismatch', 'bank_refused'] as const;
export type TransferRefusalReason = (typeof TRANSFER_REFUSAL_REASONS)[number];

/** ASSUMPTION: the HTTP status answered with each refusal reason (as the comment above lists). */
export const TRANSFER_REFUSAL_HTTP = { invalid_data: 422, kyc_not_approved: 403, key_owner_mismatch: 403, bank_refused: 422 } as const satisfies Record<
  TransferRefusalReason,
  number
>;

/** `User-Agent: <COMPANY_NAME> (<CONTACT_EMAIL>)` (spec 4, 5). */
export const USER_AGENT_PATTERN = /^[^()\r\n]*[^\s()][^()\r\n]* \([^\s()@]+@[^\s()@]+\.[^\s()@]+\)$/;

export const LoginRequest = z.strictObject({
  email: z.string().check(z.minLength(1, 'is required')),
  access_key: z.string().check(z.minLength(1, 'is required')),
});
export type LoginRequest = z.infer<typeof LoginRequest>;

/** ASSUMPTION (spec 5: "name of the token field in the login response: not shown"). */
export const LoginResponse = z.looseObject({
  message: z.string(),
  data: z.looseObject({
    access_token: z.string().check(z.minLength(1)),
    token_type: z.optional(z.string()),
    /** ISO 8601; five years after login. */
    expires_at: z.optional(z.string()),
  }),
});

/** ASSUMPTION (spec 4.1: "response body: not shown"). */
export const TenantResponse = z.looseObject({
  message: z.string(),
  data: z.looseObject({ id: z.string(), name: z.string() }),
});

/** The partner's own reference (ASSUMPTION: at most 100 characters; the spec sets no bound). */
const TransactionId = z.string().check(z.minLength(1, 'must not be empty'), z.maxLength(100, 'must be at most 100 characters'));

/** Body of 4.3 generate-anonymous-pix, with every rule the spec states. */
export const CreatePartnerPaymentRequest = z
  .strictObject({
    value: PaymentValue,
    tenant_id: z.string().check(z.minLength(1, 'is required')),
    callback: z.optional(z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' })),
    name: z.optional(CustomerName),
    document: z.optional(CustomerDocument),
    expiration: z.optional(z.int('must be a whole number of seconds').check(z.positive('must be positive'))),
    transaction_id: z.optional(TransactionId),
    description: z.optional(PaymentDescription),
  })
  .check(pairingCheck);
export type CreatePartnerPaymentRequest = z.infer<typeof CreatePartnerPaymentRequest>;

/**
 * ASSUMPTION (spec 4.3 names data.pix_key, data.qr_code_url and data.checkout; "other response fields:
 * not shown"): the reference and creation time are there too.
 */
export const CreatePartnerPaymentResponse = z.looseObject({
  message: z.string(),
  data: z.looseObject({
    external_reference: z.string().check(z.minLength(1)),
    pix_key: z.string(),
    qr_code_url: z.string(),
    checkout: z.string(),
    created_at: z.string(),
  }),
});

/** The payment record of section 2.1 (GET 4.5), every field with the spec's type. */
export const PartnerPaymentRecord = z.looseObject({
  id: z.int(),
  external_reference: z.string(),
  value: z.number(),
  callback: z.nullable(z.string()),
  type: z.string(),
  user_id: z.nullable(z.int()),
  status: z.int(),
  deeplink: z.nullable(z.unknown()),
  pix_deposit: z.looseObject({
    qr_code_url: z.string(),
    pix_key: z.string(),
    favoured: z.string(),
    external_reference: z.string(),
    checkout: z.string(),
  }),
  partner: z.looseObject({ name: z.string(), document: z.string() }),
  tenant: z.looseObject({ id: z.string(), name: z.string() }),
  created_at: z.string(),
});
export type PartnerPaymentRecord = z.infer<typeof PartnerPaymentRecord>;

export const PartnerPaymentResponse = z.looseObject({ message: z.string(), data: PartnerPaymentRecord });

/**
 * ASSUMPTION (spec 7: "error response body shape: not shown"): `{message, errors?, reason?}` with the
 * field name mapped to its problems, answered with 422 for invalid data, 401 for a missing or bad
 * token, 404 for an unknown reference; `reason` names a transfer refusal.
 */
export const PartnerErrorResponse = z.looseObject({
  message: z.string(),
  errors: z.optional(z.record(z.string(), z.array(z.string()))),
  reason: z.optional(z.string()),
});
export type PartnerErrorResponse = z.infer<typeof PartnerErrorResponse>;

/** ISO 8601 UTC with microseconds and a trailing Z, as section 2.1 gives created_at. */
export function partnerTimestamp(epochMs: number): string {
  const micros = Math.round((epochMs % 1) * 1000);
  return new Date(Math.floor(epochMs)).toISOString().replace('Z', `${String(micros).padStart(3, '0')}Z`);
}

const { min: tMin, max: tMax } = LIMITS.transferValue;

/** A transfer value in reais: 0.20 to 49,000.00 (spec 4.6, 8). */
export const TransferValue = z
  .number()
  .check(
    z.refine(isCents, 'must be an amount with at most two decimals'),
    z.gte(tMin, `must be at least ${formatReais(tMin)}`),
    z.lte(tMax, `must be at most ${formatReais(tMax)}`),
  );

/** Body of 4.6 solicit-for-customer (the first field list). */
export const SolicitTransferRequest = z
  .strictObject({
    customer_document: CustomerDocument,
    value: TransferValue,
    pix_key: z.string(),
    pix_key_type: z.enum(PIX_KEY_TYPES),
    transaction_id: z.optional(TransactionId),
  })
  .check(
    z.superRefine((body, ctx) => {
      if (!isValidPixKey(body.pix_key, body.pix_key_type)) {
        ctx.issues.push({ code: 'custom', path: ['pix_key'], message: `is not a valid ${body.pix_key_type} key`, input: body });
      }
    }),
  );
export type SolicitTransferRequest = z.infer<typeof SolicitTransferRequest>;

/** Body of 4.6 pix-key/transfer (the second field list): the key's type is read from its form. */
export const KeyTransferRequest = z.strictObject({
  value: TransferValue,
  pix_key: z.string().check(z.refine((key) => detectPixKeyType(key) !== null, 'is not a valid CPF, e-mail, phone (+55) or random key')),
  transaction_id: z.optional(TransactionId),
});
export type KeyTransferRequest = z.infer<typeof KeyTransferRequest>;

/** ASSUMPTION (spec 2.2: "fields of the transfer record: not shown"). */
export const PartnerTransferRecord = z.looseObject({
  id: z.int(),
  external_reference: z.string(),
  type: z.string(),
  value: z.number(),
  status: z.int(),
  pix_key: z.string(),
  pix_key_type: z.enum(PIX_KEY_TYPES),
  transaction_id: z.nullable(z.string()),
  end2end: z.nullable(z.string()),
  created_at: z.string(),
  updated_at: z.string(),
});
export type PartnerTransferRecord = z.infer<typeof PartnerTransferRecord>;

/** ASSUMPTION: both transfer operations (201) and the transfer check (4.7, 200) answer `{message, data: record}`. */
export const PartnerTransferResponse = z.looseObject({ message: z.string(), data: PartnerTransferRecord });

/** Body of 4.8. The URL may be http or https: the spec's webhooks are "HTTP or HTTPS POST". */
export const NotificationUrlRequest = z.strictObject({
  notification_url: z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' }),
  notify_type: z.optional(
    z.union([z.literal(NOTIFY_TYPE.old), z.literal(NOTIFY_TYPE.new)], `must be ${NOTIFY_TYPE.old} (old format) or ${NOTIFY_TYPE.new} (new format)`),
  ),
});
export type NotificationUrlRequest = z.infer<typeof NotificationUrlRequest>;

/** ASSUMPTION (spec 4.8: "response body: not shown"). */
export const NotificationUrlResponse = z.looseObject({
  message: z.string(),
  data: z.looseObject({ notification_url: z.string(), notify_type: z.int() }),
});

export const WEBHOOK_KINDS = ['payment', 'transfer'] as const;
export const WEBHOOK_OUTCOMES = ['approved', 'canceled'] as const;
export type WebhookKind = (typeof WEBHOOK_KINDS)[number];
export type WebhookOutcome = (typeof WEBHOOK_OUTCOMES)[number];

/** The transaction fields both webhook formats carry (ASSUMPTION, spec 6: "payload field lists: not shown"). */
const webhookTransaction = {
  external_reference: z.string().check(z.minLength(1)),
  status: z.int(),
  value: z.number(),
  transaction_id: z.nullable(z.string()),
  /** null for payments (spec 6: not used). */
  end2end: z.nullable(z.string()),
  /** null outside the service's digital wallet. */
  user_id: z.nullable(z.int()),
};

/** ASSUMPTION: the old format (notify_type 1) is the flat transaction with its kind. */
export const OldWebhookPayload = z.looseObject({ type: z.enum(WEBHOOK_KINDS), ...webhookTransaction });
export type OldWebhookPayload = z.infer<typeof OldWebhookPayload>;

/** ASSUMPTION: the new format (notify_type 2) is an event envelope with its own id. */
export const NewWebhookPayload = z.looseObject({
  id: z.string().check(z.minLength(1)),
  event: z.enum(['payment.approved', 'payment.canceled', 'transfer.approved', 'transfer.canceled']),
  occurred_at: z.string(),
  data: z.looseObject(webhookTransaction),
});
export type NewWebhookPayload = z.infer<typeof NewWebhookPayload>;

export type { PixKeyType };
