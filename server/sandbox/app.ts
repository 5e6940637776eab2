/**
 * The partner API of the sandbox: every path of spec section 4, with the spec's headers enforced and
 * the wire format of src/shared/partner.ts. What people see (QR image, checkout page) and the control
 * API live in public.ts; server.ts serves both over HTTPS.
 */
import { Hono, type Context, type Handler } from 'hono';
import type { IncomingMessage } from 'node:http';
import { buildDynamicBrCode } from '../../src/shared/brcode.ts';
import { issuesToFields, parseInput, type Issue } from '../../src/shared/errors.ts';
import { LIMITS } from '../../src/shared/limits.ts';
import {
  CreatePartnerPaymentRequest,
  KeyTransferRequest,
  LoginRequest,
  NOTIFY_TYPE,
  NotificationUrlRequest,
  PARTNER_MAX_BODY_BYTES,
  PARTNER_PATHS,
  PARTNER_STATUS,
  PAYMENT_CHECK_HTTP,
  SolicitTransferRequest,
  TRANSFER_REFUSAL_HTTP,
  USER_AGENT_PATTERN,
  partnerTimestamp,
  type PartnerErrorResponse,
  type PartnerPaymentRecord,
  type PartnerTransferRecord,
} from '../partner/wire.ts';
import { detectPixKeyType } from '../../src/shared/pix-keys.ts';
import type { z } from 'zod/mini';
import { jsonBody } from './body.ts';
import { faultMiddleware } from './faults.ts';
import type { SandboxPayment, SandboxState, SandboxTransfer, TransferRefusal } from './state.ts';

export interface SandboxUrls {
  /** The HTTPS base URL of the partner API, e.g. https://127.0.0.1:8443 */
  api: () => string;
  /** Where people reach the QR image and hosted checkout (may be the demo's origin + /sandbox). */
  public: () => string;
}

type ErrorStatus = 400 | 401 | 403 | 404 | 405 | 413 | 415 | 422;

type Env = { Bindings: { incoming?: IncomingMessage } };

function fail(c: Context<Env>, status: ErrorStatus, message: string, extra: Omit<PartnerErrorResponse, 'message'> = {}) {
  const body: PartnerErrorResponse = { message, ...extra };
  return c.json(body, status);
}

function toPartnerErrors(issues: readonly Issue[]): Record<string, string[]> {
  return Object.fromEntries(Object.entries(issuesToFields(issues)).map(([field, problem]) => [field, [`${field} ${problem}`]]));
}

/** Reads and validates a JSON body; the refusal is ready to return. */
async function readInput<T>(
  c: Context<Env>,
  schema: z.ZodMiniType<T>,
  reason?: 'invalid_data',
): Promise<{ ok: true; data: T } | { ok: false; response: Response }> {
  const read = await jsonBody(c);
  if (!read.ok) {
    const response =
      read.problem === 'media_type'
        ? fail(c, 415, 'Content-Type must be application/json.')
        : read.problem === 'too_large'
          ? fail(c, 413, `The request body is larger than ${PARTNER_MAX_BODY_BYTES} bytes.`)
          : fail(c, 400, 'The request body is not valid JSON.');
    return { ok: false, response };
  }
  const parsed = parseInput(schema, read.body);
  if (!parsed.success) {
    return { ok: false, response: fail(c, 422, 'The given data was invalid.', { errors: toPartnerErrors(parsed.issues), ...(reason ? { reason } : {}) }) };
  }
  return { ok: true, data: parsed.data };
}

export function createPartnerApi(state: SandboxState, urls: SandboxUrls): Hono<Env> {
  const api = new Hono<Env>();
  // Faults first: they stand for the network and the service's edge, before anything is checked.
  api.use('*', faultMiddleware(state.faults));
  api.use('*', async (c: Context<Env>, next) => {
    state.settleDue();
    const agent = c.req.header('user-agent');
    if (!agent || !USER_AGENT_PATTERN.test(agent)) {
      return fail(c, 400, 'User-Agent must name the company and a contact e-mail: "Company (contact@example.com)".');
    }
    if (c.req.path !== PARTNER_PATHS.login) {
      const match = /^Bearer ([\x21-\x7e]+)$/.exec(c.req.header('authorization') ?? '');
      if (!match?.[1]) return fail(c, 401, 'Unauthenticated: send Authorization: Bearer <access token>.');
      if (!state.isTokenValid(match[1])) return fail(c, 401, 'Unauthenticated: the access token is unknown or expired.');
    }
    return next();
  });

  /** Registers a handler, then a 405 (with Allow) for every other method on the same path. */
  const route = (method: 'GET' | 'POST' | 'PATCH' | 'HEAD', path: string, handler: Handler<Env>) => {
    // Hono answers HEAD with the GET handler; that handler tells the two apart.
    api.on(method === 'HEAD' ? 'GET' : method, path, handler);
    api.all(path, (c) => {
      c.header('allow', method);
      return fail(c, 405, `Use ${method} on this path.`);
    });
  };

  route('POST', PARTNER_PATHS.login, async (c) => {
    const input = await readInput(c, LoginRequest);
    if (!input.ok) return input.response;
    const { email, access_key } = input.data;
    if (email !== state.account.email || access_key !== state.account.accessKey) return fail(c, 401, 'Invalid credentials.');
    const token = state.issueToken();
    return c.json({
      message: 'Login successful.',
      data: { access_token: token, token_type: 'Bearer', expires_at: partnerTimestamp(state.tokenExpiresAt(token)) },
    });
  });

  route('GET', PARTNER_PATHS.getTenant, (c) => c.json({ message: 'Tenant.', data: state.account.tenant }));

  route('POST', PARTNER_PATHS.createPayment, async (c) => {
    const read = await readInput(c, CreatePartnerPaymentRequest);
    if (!read.ok) return read.response;
    const input = read.data;
    if (input.tenant_id !== state.account.tenant.id) {
      return fail(c, 422, 'The given data was invalid.', { errors: { tenant_id: ['tenant_id is not the tenant of this partner'] } });
    }
    const { id, externalReference } = state.newPaymentIdentity();
    const payment: SandboxPayment = {
      id,
      externalReference,
      value: input.value,
      callback: input.callback ?? null,
      description: input.description ?? null,
      customer: input.name !== undefined && input.document !== undefined ? { name: input.name, document: input.document } : null,
      expirationSeconds: input.expiration ?? LIMITS.defaultExpirationSeconds,
      transactionId: input.transaction_id ?? null,
      createdAt: state.clock.now(),
      status: PARTNER_STATUS.pending,
      paidAt: null,
      finalAt: null,
      pixKey: buildDynamicBrCode({
        locationUrl: `${new URL(urls.api()).host}/pix/v2/${externalReference}`,
        merchantName: state.account.merchant.name,
        merchantCity: state.account.merchant.city,
        amount: input.value,
      }),
    };
    state.payments.set(externalReference, payment);
    const record = toPaymentRecord(state, payment, urls);
    const { pix_key, qr_code_url, checkout } = record.pix_deposit;
    return c.json({ message: 'Pix generated.', data: { ...record, pix_key, qr_code_url, checkout, expiration: payment.expirationSeconds } }, 201);
  });

  route('HEAD', PARTNER_PATHS.checkPayment, (c) => {
    if (c.req.method !== 'HEAD') {
      c.header('allow', 'HEAD');
      return fail(c, 405, 'Use HEAD on this path.');
    }
    const payment = state.payments.get(c.req.param('external_reference') ?? '');
    if (!payment) return c.body(null, PAYMENT_CHECK_HTTP.notFound);
    const status = payment.status === PARTNER_STATUS.approved ? 'paid' : payment.status === PARTNER_STATUS.canceled ? 'canceled' : 'pending';
    return c.body(null, PAYMENT_CHECK_HTTP[status]);
  });

  route('GET', PARTNER_PATHS.getPayment, (c) => {
    const payment = state.payments.get(c.req.param('external_reference') ?? '');
    if (!payment) return fail(c, 404, 'Transaction not found.');
    return c.json({ message: 'Transaction.', data: toPaymentRecord(state, payment, urls) });
  });

  route('POST', PARTNER_PATHS.solicitTransferForCustomer, async (c) => {
    const read = await readInput(c, SolicitTransferRequest, 'invalid_data');
    if (!read.ok) return read.response;
    const { value, pix_key, pix_key_type, customer_document, transaction_id } = read.data;
    const result = state.requestTransfer({
      operation: 'solicit-for-customer',
      value,
      pixKey: pix_key,
      pixKeyType: pix_key_type,
      customerDocument: customer_document,
      transactionId: transaction_id,
    });
    return result.ok ? transferAccepted(c, result.transfer) : transferRefused(c, result.refusal);
  });

  route('POST', PARTNER_PATHS.transferToKey, async (c) => {
    const read = await readInput(c, KeyTransferRequest, 'invalid_data');
    if (!read.ok) return read.response;
    const { value, pix_key, transaction_id } = read.data;
    // The schema already refused a key that fits no type.
    const pixKeyType = detectPixKeyType(pix_key)!;
    const result = state.requestTransfer({ operation: 'pix-key/transfer', value, pixKey: pix_key, pixKeyType, transactionId: transaction_id });
    return result.ok ? transferAccepted(c, result.transfer) : transferRefused(c, result.refusal);
  });

  route('GET', PARTNER_PATHS.checkTransfer, (c) => {
    const transfer = state.transfers.get(c.req.param('external_reference') ?? '');
    if (!transfer) return fail(c, 404, 'Transfer not found.');
    return c.json({ message: 'Transfer.', data: toTransferRecord(transfer) });
  });

  route('PATCH', PARTNER_PATHS.notificationUrl, async (c) => {
    const read = await readInput(c, NotificationUrlRequest);
    if (!read.ok) return read.response;
    const notifyType = read.data.notify_type ?? NOTIFY_TYPE.old;
    state.webhooks.notification = { url: read.data.notification_url, notifyType };
    return c.json({ message: 'Notification URL updated.', data: { notification_url: read.data.notification_url, notify_type: notifyType } });
  });

  api.notFound((c) => fail(c, 404, 'Not found.'));
  api.onError((error, c) => {
    // The error's message only: a stack or a request dump could carry a customer's document.
    console.error(`[sandbox] unexpected error: ${error.name}`);
    return c.json({ message: 'Server error.' }, 500);
  });
  return api;
}

function transferAccepted(c: Context<Env>, transfer: SandboxTransfer) {
  return c.json({ message: 'Transfer requested; waiting for the bank.', data: toTransferRecord(transfer) }, 201);
}

function transferRefused(c: Context<Env>, refusal: TransferRefusal) {
  return fail(c, TRANSFER_REFUSAL_HTTP[refusal.reason], refusal.message, { reason: refusal.reason });
}

export function toPaymentRecord(state: SandboxState, payment: SandboxPayment, urls: SandboxUrls): PartnerPaymentRecord {
  const publicBase = urls.public();
  return {
    id: payment.id,
    external_reference: payment.externalReference,
    value: payment.value,
    callback: payment.callback,
    type: 'payment',
    // Only meaningful for wallet payments (spec 2.1); the sandbox has no wallet.
    user_id: 0,
    status: payment.status,
    deeplink: null,
    pix_deposit: {
      qr_code_url: `${publicBase}/qr/${payment.externalReference}.svg`,
      pix_key: payment.pixKey,
      favoured: state.account.partner.name,
      external_reference: payment.externalReference,
      checkout: `${publicBase}/checkout/${payment.externalReference}`,
    },
    partner: state.account.partner,
    tenant: state.account.tenant,
    created_at: partnerTimestamp(payment.createdAt),
  };
}

export function toTransferRecord(transfer: SandboxTransfer): PartnerTransferRecord {
  return {
    id: transfer.id,
    external_reference: transfer.externalReference,
    type: 'transfer',
    value: transfer.value,
    status: transfer.status,
    pix_key: transfer.pixKey,
    pix_key_type: transfer.pixKeyType,
    transaction_id: transfer.transactionId,
    end2end: transfer.end2end,
    created_at: partnerTimestamp(transfer.createdAt),
    updated_at: partnerTimestamp(transfer.updatedAt),
  };
}
