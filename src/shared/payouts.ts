/**
 * The contract of payouts and refunds between the merchant's server and the proxy (server to server,
 * API key): paths, answer shapes, statuses (the requests, which carry a customer's document, are in
 * contract.ts, which imports this module). A payout is a Pix transfer the proxy starts
 * at the partner service (spec 4.6); a refund is a payout tied to a paid checkout, never more than
 * it was paid. Neither is the central bank's "devolução": the partner's API offers none, so a refund
 * is a new transfer to the customer's key.
 */
import { z } from 'zod/mini';
import { LIMITS, formatReais, isCents } from './limits.ts';
import { PIX_KEY_TYPES, detectPixKeyType, isValidPixKey, type PixKeyType } from './pix-keys.ts';

/** Routes under the same base as API_PATHS; every one takes the API key. */
export const PAYOUT_PATHS = {
  /** POST (with Idempotency-Key): start a transfer. GET: the transfers, newest first, paged. */
  transfers: '/transfers',
  /** GET: one transfer. */
  transfer: '/transfers/:id',
  /** POST (with Idempotency-Key): refund part or all of a paid checkout. */
  refunds: '/checkouts/:id/refunds',
} as const;

/** The header naming one intended operation: the same key and body answer the first result again. */
export const IDEMPOTENCY_HEADER = 'Idempotency-Key';

/** Printable ASCII, no spaces, 1 to 255 characters (a UUID fits). */
export const IdempotencyKey = /* @__PURE__ */ z.string().check(z.regex(/^[\x21-\x7e]{1,255}$/, 'must be 1 to 255 printable ASCII characters without spaces'));

/** An amount in reais: cents as decimals, within `limits` (LIMITS.paymentValue, LIMITS.transferValue). Here because contract.ts imports this module, not the other way round. */
export const amountInReais = ({ min, max }: { min: number; max: number }) =>
  z
    .number()
    .check(
      z.refine(isCents, 'must be an amount with at most two decimals'),
      z.gte(min, `must be at least ${formatReais(min)}`),
      z.lte(max, `must be at most ${formatReais(max)}`),
    );

/** A transfer value in reais, within the partner's transfer limits (spec 8). */
export const TransferValue = /* @__PURE__ */ amountInReais(LIMITS.transferValue);

export const PixKeyTypeSchema = /* @__PURE__ */ z.enum(PIX_KEY_TYPES, { error: `must be one of ${PIX_KEY_TYPES.join(', ')}` });

/** The key must fit its type when one is given, or be recognisable as one of the four when not. */
export const pixKeyCheck = /* @__PURE__ */ z.superRefine((value: { pix_key: string; pix_key_type?: PixKeyType | undefined }, ctx) => {
  const type = value.pix_key_type;
  if (type !== undefined ? isValidPixKey(value.pix_key, type) : detectPixKeyType(value.pix_key) !== null) return;
  ctx.issues.push({
    code: 'custom',
    path: ['pix_key'],
    message: type !== undefined ? `is not a valid ${type} key` : `is not a valid Pix key (a CPF, an e-mail, +55 and a phone number, or a random key)`,
    input: value.pix_key,
  });
});

/**
 * - `pending`: sent, or being sent; the customer's bank has not answered yet.
 * - `approved`, `canceled`: the partner's outcome (its webhook or its status check).
 * - `refused`: refused up front (invalid data, KYC, key owner, bank); `reason` says which. No money moved.
 * - `unknown`: the partner's answer was lost (a timeout, a dropped connection, an answer that could
 *   not be read): it may have been carried out. Never sent again by the proxy; an operator checks.
 */
export const TRANSFER_STATUSES = ['pending', 'approved', 'canceled', 'refused', 'unknown'] as const;
export type TransferStatus = (typeof TRANSFER_STATUSES)[number];

/** What a refusal's `reason` can be: the partner's reasons, or `refused` when it gave none we know. */
export const TRANSFER_REFUSALS = ['invalid_data', 'kyc_not_approved', 'key_owner_mismatch', 'bank_refused', 'refused'] as const;
export type TransferRefusal = (typeof TRANSFER_REFUSALS)[number];

/** A transfer as the merchant's server sees it. The key is masked; the customer's document is never shown. */
export const TransferView = /* @__PURE__ */ z.object({
  transfer_id: z.string(),
  status: z.enum(TRANSFER_STATUSES),
  /** Reais. */
  value: z.number(),
  /** Masked: enough to recognise it, not to reuse it. */
  pix_key: z.string(),
  pix_key_type: z.nullable(PixKeyTypeSchema),
  /** The merchant's own reference, as sent; null when none was. */
  reference: z.nullable(z.string()),
  /** The refunded checkout (refunds only); null for a payout. */
  checkout_id: z.nullable(z.string()),
  /** The partner's reference of the transfer, once it gave one. */
  partner_reference: z.nullable(z.string()),
  /** Ours, sent with the request: what to ask the partner about when the status is `unknown`. */
  transaction_id: z.string(),
  created_at: z.string(),
  updated_at: z.string(),
  /** Refused: why (TRANSFER_REFUSALS). Unknown: `answer_lost`. */
  reason: z.optional(z.string()),
  /** The partner's own words about a refusal, redacted. */
  reason_message: z.optional(z.string()),
});
export type TransferView = z.infer<typeof TransferView>;

/** GET {endpoint}/transfers?status=&cursor=&limit=: newest first; `next_cursor` is null on the last page. */
export const TransferList = /* @__PURE__ */ z.object({
  data: z.array(TransferView),
  next_cursor: z.nullable(z.string()),
});
export type TransferList = z.infer<typeof TransferList>;

/** The list's query: a status to keep, the cursor of the previous page, a page size (1 to 100, default 20). */
export const TransferListQuery = /* @__PURE__ */ z.strictObject({
  status: z.optional(z.enum(TRANSFER_STATUSES)),
  cursor: z.optional(z.string().check(z.regex(/^[A-Za-z0-9_-]{1,200}$/, 'must be a cursor from a previous page'))),
  limit: z.optional(
    z.string().check(
      z.regex(/^\d{1,3}$/, 'must be a number from 1 to 100'),
      z.refine((s) => Number(s) >= 1 && Number(s) <= 100, 'must be a number from 1 to 100'),
    ),
  ),
});

/**
 * A key shown to people: a CPF as `123.***.***-09`, an e-mail as `a***@example.com`, a phone with
 * its last four digits, a random key with its first eight characters.
 */
export function maskPixKey(key: string, type: PixKeyType | null): string {
  const kind = type ?? detectPixKeyType(key);
  const digits = key.replace(/\D/g, '');
  switch (kind) {
    case 'CPF':
      return digits.length === 11 ? `${digits.slice(0, 3)}.***.***-${digits.slice(-2)}` : '***';
    case 'EMAIL': {
      const at = key.lastIndexOf('@');
      return at > 0 ? `${key[0]}***${key.slice(at)}` : '***';
    }
    case 'TELEFONE':
      return digits.length >= 4 ? `+55 *****-${digits.slice(-4)}` : '***';
    case 'CHAVE_ALEATORIA':
      return `${key.slice(0, 8)}-****`;
    default:
      return '***';
  }
}
