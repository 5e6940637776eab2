/**
 * The partner service's wire format (../shared/spec/partner-service.md, section 4), shared by the
 * upstream client (which sends and parses it) and the sandbox (which serves it).
 *
 * ASSUMPTIONS. The spec leaves some of this "not shown". Every guess we made lives in this module and
 * is listed in server/sandbox/ASSUMPTIONS.md; when the real values are known, change them here.
 */
import { z } from 'zod/mini';
import { CustomerDocument, CustomerName, PaymentDescription, PaymentValue, pairingCheck } from './contract.ts';

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

/** ASSUMPTION (spec 3: "meaning of the numeric status codes: not shown"). */
export const PARTNER_STATUS = { pending: 1, approved: 2, canceled: 3 } as const;
export type PartnerStatusCode = (typeof PARTNER_STATUS)[keyof typeof PARTNER_STATUS];

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

/** Body of 4.3 generate-anonymous-pix, with every rule the spec states. */
export const CreatePartnerPaymentRequest = z
  .strictObject({
    value: PaymentValue,
    tenant_id: z.string().check(z.minLength(1, 'is required')),
    callback: z.optional(z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' })),
    name: z.optional(CustomerName),
    document: z.optional(CustomerDocument),
    expiration: z.optional(z.int('must be a whole number of seconds').check(z.positive('must be positive'))),
    transaction_id: z.optional(z.string().check(z.minLength(1, 'must not be empty'), z.maxLength(100, 'must be at most 100 characters'))),
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
 * ASSUMPTION (spec 7: "error response body shape: not shown"): `{message, errors?}` with the field
 * name mapped to its problems, answered with 422 for invalid data, 401 for a missing or bad token,
 * 404 for an unknown reference.
 */
export const PartnerErrorResponse = z.looseObject({
  message: z.string(),
  errors: z.optional(z.record(z.string(), z.array(z.string()))),
});
export type PartnerErrorResponse = z.infer<typeof PartnerErrorResponse>;

/** ISO 8601 UTC with microseconds and a trailing Z, as section 2.1 gives created_at. */
export function partnerTimestamp(epochMs: number): string {
  const micros = Math.round((epochMs % 1) * 1000);
  return new Date(Math.floor(epochMs)).toISOString().replace('Z', `${String(micros).padStart(3, '0')}Z`);
}
