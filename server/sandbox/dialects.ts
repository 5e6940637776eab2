/**
 * Dialects: the sandbox answering every "not shown" item of the spec (server/partner/ASSUMPTIONS.md)
 * another plausible way, so the client, the CLI and the proxy can be tried against a partner service
 * that guessed differently from us. Only ANSWERS vary: requests are validated exactly as the spec says
 * in every dialect, errors keep their HTTP statuses, and the sandbox's state keeps the canonical
 * numbering (PARTNER_STATUS), translated here, at the edge.
 *
 * - `default`: what ASSUMPTIONS.md lists, the wire format of server/partner/wire.ts.
 * - `terse`: no `message` anywhere; the token as `data.token` with `expires_in`; the tenant id as
 *   `tenant_id`; creates answered 200, the payment's codes only under `data.pix_deposit`, no
 *   `created_at`; amounts as strings ("10.50"); times without fractions at -03:00; HEAD 200 means
 *   "exists"; PATCH 204 with no body; errors `{error, fields?, code?}`; other webhook words.
 * - `numbered`: statuses 0 pending, 1 approved, 2 canceled (a canceled 2 is the default's approved);
 *   the token as a top-level `accessToken` with no lifetime; `{tenant: {id, name}}`; no `message`, no
 *   `created_at` and no `favoured` in the create (its codes flat, no `pix_deposit`); times in milliseconds at +00:00; PATCH 200 `{}`; errors
 *   `{errors: [{field, message}], reason}` or `{detail, reason?}`; webhooks in camelCase words, the
 *   new format's transaction under `payload`.
 * - `swapped`: the default in every way but approved and canceled: 1 pending, 3 approved, 2
 *   canceled. Its pending code is ours, so only the approved and canceled codes' own proofs
 *   (domain/numbering/status-numbering.ts) show the default setting wrong: the mismatch path, by hand.
 * - `expiring`: the default with the numbering most Pix services have: 1 pending,
 *   2 approved, 3 expired (past its expiration, payable until canceled an hour later), 4 canceled,
 *   6 returned (a payment given back after approval); transfers numbered apart, 11 pending,
 *   12 approved, 13 canceled. Set `PIX_STATUS_CODES=pending=1,approved=2,expired=3,canceled=4,returned=6`
 *   and `PIX_TRANSFER_STATUS_CODES=pending=11,approved=12,canceled=13` (its `setting`); with the
 *   default setting, its expired 3 is what the default calls canceled.
 *
 * A dialect is an object of knobs (SandboxDialect, in dialect.ts): app.ts, control.ts, public.ts,
 * webhooks.ts and transport.ts hand it neutral views (canonical status names, epoch milliseconds,
 * numbers) and send what it returns. Choose one with `startSandbox({dialect})`, `PIX_SANDBOX_DIALECT` for
 * `npm run sandbox`, or `PUT /_sandbox/dialect` at run time (README.md, "Dialects").
 */
import { PARTNER_STATUS, PAYMENT_CHECK_HTTP, partnerTimestamp } from '../partner/wire.ts';
import type { DialectAnswer, PaymentCheckState, PaymentView, SandboxDialect, StatusName, StatusNumbering, TransferView } from './dialect.ts';
import type { SandboxWebhookEvent } from './webhooks.ts';

export {
  problemStatus,
  statusName,
  type DialectAnswer,
  type PaymentView,
  type SandboxDialect,
  type SandboxProblem,
  type StatusNumbering,
  type TransferView,
} from './dialect.ts';

export const DIALECT_NAMES = ['default', 'terse', 'numbered', 'swapped', 'expiring'] as const;
export type DialectName = (typeof DIALECT_NAMES)[number];

/** The per-dialect forms the record builders below share. */
interface Form {
  statusCodes: StatusNumbering;
  timestamp: (epochMs: number) => string;
  value: (reais: number) => number | string;
}

const ok = (body: unknown, status = 200): DialectAnswer => ({ status, body });

/** An amount with exactly two decimals, as a string: "10.50". */
const decimalString = (reais: number) => reais.toFixed(2);
const asNumber = (reais: number) => reais;

/** Seconds precision at -03:00 (Brasília), e.g. "2026-11-23T14:05:09-03:00": the same instant as the UTC time. */
function brasiliaTimestamp(epochMs: number): string {
  return `${new Date(Math.floor(epochMs) - 3 * 3600_000).toISOString().slice(0, 19)}-03:00`;
}

/** Milliseconds at +00:00, e.g. "2026-11-23T17:05:09.123+00:00". */
function millisUtcTimestamp(epochMs: number): string {
  return new Date(Math.floor(epochMs)).toISOString().replace('Z', '+00:00');
}

/** The payment record of spec 2.1, its status, times and amount in the form's words. */
function paymentRecord(p: PaymentView, form: Form) {
  return {
    id: p.id,
    external_reference: p.externalReference,
    value: form.value(p.value),
    callback: p.callback,
    type: 'payment',
    // Only meaningful for wallet payments (spec 2.1); the sandbox has no wallet.
    user_id: 0,
    status: form.statusCodes[p.status],
    deeplink: null,
    pix_deposit: {
      qr_code_url: p.qrCodeUrl,
      pix_key: p.pixKey,
      favoured: p.favoured,
      external_reference: p.externalReference,
      checkout: p.checkout,
    },
    partner: p.partner,
    tenant: p.tenant,
    created_at: form.timestamp(p.createdAt),
  };
}

function transferRecord(t: TransferView, form: Form) {
  return {
    id: t.id,
    external_reference: t.externalReference,
    type: 'transfer',
    value: form.value(t.value),
    status: form.statusCodes[t.status],
    pix_key: t.pixKey,
    pix_key_type: t.pixKeyType,
    transaction_id: t.transactionId,
    end2end: t.end2end,
    created_at: form.timestamp(t.createdAt),
    updated_at: form.timestamp(t.updatedAt),
  };
}

const webhookStatus = (event: SandboxWebhookEvent, codes: StatusNumbering) => codes[event.outcome];

function checkByState(state: PaymentCheckState): number {
  return state === 'unknown' ? PAYMENT_CHECK_HTTP.notFound : PAYMENT_CHECK_HTTP[state];
}

const defaultForm: Form = { statusCodes: PARTNER_STATUS, timestamp: partnerTimestamp, value: asNumber };

/** ASSUMPTIONS.md as it stands: what the partner client was written against. */
const defaultDialect: SandboxDialect = {
  name: 'default',
  statusCodes: PARTNER_STATUS,
  timestamp: partnerTimestamp,
  login: (token, expiresAtMs) =>
    ok({ message: 'Login successful.', data: { access_token: token, token_type: 'Bearer', expires_at: partnerTimestamp(expiresAtMs) } }),
  tenant: (tenant) => ok({ message: 'Tenant.', data: tenant }),
  paymentCreated(p) {
    const record = paymentRecord(p, defaultForm);
    const { pix_key, qr_code_url, checkout } = record.pix_deposit;
    return ok({ message: 'Pix generated.', data: { ...record, pix_key, qr_code_url, checkout, expiration: p.expirationSeconds } }, 201);
  },
  payment: (p) => ok({ message: 'Transaction.', data: paymentRecord(p, defaultForm) }),
  paymentCheck: checkByState,
  transferAccepted: (t) => ok({ message: 'Transfer requested; waiting for the bank.', data: transferRecord(t, defaultForm) }, 201),
  transfer: (t) => ok({ message: 'Transfer.', data: transferRecord(t, defaultForm) }),
  notificationUrlSet: ({ notificationUrl, notifyType }) =>
    ok({ message: 'Notification URL updated.', data: { notification_url: notificationUrl, notify_type: notifyType } }),
  errorBody(problem) {
    const errors =
      problem.kind === 'invalid_data'
        ? { errors: Object.fromEntries(Object.entries(problem.fields).map(([field, text]) => [field, [`${field} ${text}`]])) }
        : {};
    const reason = (problem.kind === 'invalid_data' || problem.kind === 'refused') && problem.reason ? { reason: problem.reason } : {};
    return { message: problem.message, ...errors, ...reason };
  },
  webhookPayload(event, format) {
    const t = event.transaction;
    const fields = {
      id: t.id,
      external_reference: t.externalReference,
      status: webhookStatus(event, PARTNER_STATUS),
      value: t.value,
      transaction_id: t.transactionId,
      end2end: t.end2end,
      // Only wallet payments carry a user (spec 6); the sandbox has no wallet.
      user_id: null,
      created_at: partnerTimestamp(t.createdAt),
      updated_at: partnerTimestamp(event.occurredAt),
    };
    if (format === 'old') return { type: event.kind, ...fields };
    return { id: event.id, event: `${event.kind}.${event.outcome}`, occurred_at: partnerTimestamp(event.occurredAt), data: { type: event.kind, ...fields } };
  },
};

const terseForm: Form = { statusCodes: PARTNER_STATUS, timestamp: brasiliaTimestamp, value: decimalString };

/** A lean service: `{data}` only, strings for amounts, local times, 200 for everything that worked. */
const terseDialect: SandboxDialect = {
  name: 'terse',
  statusCodes: terseForm.statusCodes,
  timestamp: terseForm.timestamp,
  login: (token, expiresAtMs, nowMs) => ok({ data: { token, expires_in: Math.max(0, Math.round((expiresAtMs - nowMs) / 1000)) } }),
  tenant: (tenant) => ok({ data: { tenant_id: tenant.id, name: tenant.name } }),
  paymentCreated: (p) =>
    ok({
      data: {
        id: p.id,
        status: terseForm.statusCodes[p.status],
        value: decimalString(p.value),
        pix_deposit: { external_reference: p.externalReference, pix_key: p.pixKey, qr_code_url: p.qrCodeUrl, checkout: p.checkout, favoured: p.favoured },
      },
    }),
  payment: (p) => ok({ data: paymentRecord(p, terseForm) }),
  // "Exists": a payment in any state is 200.
  paymentCheck: (state) => (state === 'unknown' ? 404 : 200),
  transferAccepted: (t) => ok({ data: transferRecord(t, terseForm) }),
  transfer: (t) => ok({ data: transferRecord(t, terseForm) }),
  notificationUrlSet: () => ({ status: 204 }),
  errorBody(problem) {
    if (problem.kind === 'unauthenticated') return { error: 'Unauthenticated.' };
    const fields = problem.kind === 'invalid_data' ? { fields: { ...problem.fields } } : {};
    const code = (problem.kind === 'invalid_data' || problem.kind === 'refused') && problem.reason ? { code: problem.reason } : {};
    return { error: problem.message, ...fields, ...code };
  },
  webhookPayload(event, format) {
    const t = event.transaction;
    const status = webhookStatus(event, terseForm.statusCodes);
    if (format === 'old') {
      return { type: event.kind, reference: t.externalReference, status, value: decimalString(t.value), transaction_id: t.transactionId };
    }
    return {
      id: event.id,
      event: `${event.kind.toUpperCase()}_${event.outcome === 'approved' ? 'PAID' : 'CANCELLED'}`,
      created_at: brasiliaTimestamp(event.occurredAt),
      data: { reference: t.externalReference, status, value: decimalString(t.value) },
    };
  },
};

const numberedForm: Form = { statusCodes: { pending: 0, approved: 1, canceled: 2 }, timestamp: millisUtcTimestamp, value: asNumber };

/** Another status numbering (0, 1, 2: a canceled 2 reads as approved in the default's), camelCase here and there. */
const numberedDialect: SandboxDialect = {
  name: 'numbered',
  tokenRefusedStatus: 403,
  statusCodes: numberedForm.statusCodes,
  timestamp: numberedForm.timestamp,
  login: (token) => ok({ accessToken: token }),
  tenant: (tenant) => ok({ tenant: { id: tenant.id, name: tenant.name } }),
  paymentCreated(p) {
    // The codes flat at the record's top, without `pix_deposit`: so no `favoured` either (read after).
    const { created_at: _none, pix_deposit, ...record } = paymentRecord(p, numberedForm);
    const { pix_key, qr_code_url, checkout } = pix_deposit;
    return ok({ data: { ...record, pix_key, qr_code_url, checkout } }, 201);
  },
  payment: (p) => ok({ data: paymentRecord(p, numberedForm) }),
  paymentCheck: checkByState,
  transferAccepted: (t) => ok({ data: transferRecord(t, numberedForm) }, 201),
  transfer: (t) => ok({ data: transferRecord(t, numberedForm) }),
  notificationUrlSet: () => ok({}),
  errorBody(problem) {
    switch (problem.kind) {
      case 'invalid_data':
        return { errors: Object.entries(problem.fields).map(([field, message]) => ({ field, message })), reason: 'invalid_data' };
      case 'refused':
        return { detail: problem.message, reason: problem.reason };
      case 'unauthenticated':
        return { detail: 'Unauthenticated.' };
      case 'request':
        return { detail: problem.message };
    }
  },
  webhookPayload(event, format) {
    const t = event.transaction;
    const transaction = { externalReference: t.externalReference, status: webhookStatus(event, numberedForm.statusCodes), value: t.value };
    const type = event.kind === 'payment' ? 'deposit' : 'withdrawal';
    if (format === 'old') return { type, ...transaction };
    // The transaction under a wrapper the proxy never names (`payload`): it reads the whole body.
    return {
      event_id: event.id,
      event_type: `${type}.${event.outcome === 'approved' ? 'paid' : 'cancelled'}`,
      occurred_at: millisUtcTimestamp(event.occurredAt),
      payload: { transaction },
    };
  },
};

const swappedCodes: StatusNumbering = { pending: 1, approved: 3, canceled: 2 };

/** The default's answer, its record's `status` written in the swapped numbering. */
function swappedRecord(answer: DialectAnswer, status: StatusName): DialectAnswer {
  const body = answer.body as { data: Record<string, unknown> };
  return { ...answer, body: { ...body, data: { ...body.data, status: swappedCodes[status] } } };
}

/** The default with approved and canceled swapped (pending 1 as ours): a paid 3 reads canceled, a canceled 2 approved, in the default's numbering. */
const swappedDialect: SandboxDialect = {
  ...defaultDialect,
  name: 'swapped',
  statusCodes: swappedCodes,
  paymentCreated: (p) => swappedRecord(defaultDialect.paymentCreated(p), p.status),
  payment: (p) => swappedRecord(defaultDialect.payment(p), p.status),
  transferAccepted: (t) => swappedRecord(defaultDialect.transferAccepted(t), t.status),
  transfer: (t) => swappedRecord(defaultDialect.transfer(t), t.status),
  webhookPayload(event, format) {
    const payload = defaultDialect.webhookPayload(event, format);
    const status = webhookStatus(event, swappedCodes);
    return format === 'old' ? { ...payload, status } : { ...payload, data: { ...(payload.data as Record<string, unknown>), status } };
  },
};

const expiringCodes: StatusNumbering = { pending: 1, approved: 2, canceled: 4 };
const expiringTransferCodes: StatusNumbering = { pending: 11, approved: 12, canceled: 13 };
/** The `expiring` dialect's codes beyond the three states. */
export const EXPIRING_CODES = { expired: 3, returned: 6 } as const;

/** A payment's code in the `expiring` numbering: expired once past its expiration and still unpaid, returned once given back. */
function expiringPaymentCode(p: PaymentView): number {
  if (p.returned) return EXPIRING_CODES.returned;
  if (p.status === 'pending' && p.now !== undefined && p.now >= p.createdAt + p.expirationSeconds * 1000) return EXPIRING_CODES.expired;
  return expiringCodes[p.status];
}

const withStatus = (answer: DialectAnswer, status: number): DialectAnswer => {
  const body = answer.body as { data: Record<string, unknown> };
  return { ...answer, body: { ...body, data: { ...body.data, status } } };
};

/** The default with an expired and a returned code, and transfers numbered apart. */
const expiringDialect: SandboxDialect = {
  ...defaultDialect,
  name: 'expiring',
  statusCodes: expiringCodes,
  transferStatusCodes: expiringTransferCodes,
  setting: { payments: 'pending=1,approved=2,expired=3,canceled=4,returned=6', transfers: 'pending=11,approved=12,canceled=13' },
  paymentCreated: (p) => withStatus(defaultDialect.paymentCreated(p), expiringPaymentCode(p)),
  payment: (p) => withStatus(defaultDialect.payment(p), expiringPaymentCode(p)),
  transferAccepted: (t) => withStatus(defaultDialect.transferAccepted(t), expiringTransferCodes[t.status]),
  transfer: (t) => withStatus(defaultDialect.transfer(t), expiringTransferCodes[t.status]),
  webhookPayload(event, format) {
    const payload = defaultDialect.webhookPayload(event, format);
    // A return's notification (state.ts returnPayment) carries the returned code.
    const status =
      event.returned !== undefined ? EXPIRING_CODES.returned : webhookStatus(event, event.kind === 'transfer' ? expiringTransferCodes : expiringCodes);
    return format === 'old' ? { ...payload, status } : { ...payload, data: { ...(payload.data as Record<string, unknown>), status } };
  },
};

export const SANDBOX_DIALECTS: Readonly<Record<DialectName, SandboxDialect>> = {
  default: defaultDialect,
  terse: terseDialect,
  numbered: numberedDialect,
  swapped: swappedDialect,
  expiring: expiringDialect,
};

export function isDialectName(name: string): name is DialectName {
  return (DIALECT_NAMES as readonly string[]).includes(name);
}

/** A dialect by name (a RangeError naming the valid ones for any other), or the object given. */
export function resolveDialect(dialect: DialectName | SandboxDialect = 'default'): SandboxDialect {
  if (typeof dialect !== 'string') return dialect;
  if (!isDialectName(dialect)) throw new RangeError(`unknown sandbox dialect "${String(dialect)}": use one of ${DIALECT_NAMES.join(', ')}`);
  return SANDBOX_DIALECTS[dialect];
}
