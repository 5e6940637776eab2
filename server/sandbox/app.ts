/**
 * The partner API of the sandbox: every path of spec section 4, with the spec's headers enforced and
 * the wire format of server/partner/wire.ts. Requests are checked the same way in every dialect; what
 * is answered is the current dialect's (dialects.ts), from neutral views of the sandbox's state. What
 * people see (QR image, checkout page) and the control API live in public.ts; server.ts serves both
 * over HTTPS.
 */
import { Hono, type Context, type Handler } from 'hono';
import type { ContentfulStatusCode, StatusCode } from 'hono/utils/http-status';
import type { IncomingMessage } from 'node:http';
import type { z } from 'zod/mini';
import { buildDynamicBrCode } from '../../src/shared/brcode.ts';
import { issuesToFields, parseInput } from '../../src/shared/errors.ts';
import { LIMITS } from '../../src/shared/limits.ts';
import { detectPixKeyType } from '../../src/shared/pix-keys.ts';
import {
  CreatePartnerPaymentRequest,
  KeyTransferRequest,
  LoginRequest,
  NOTIFY_TYPE,
  NotificationUrlRequest,
  PARTNER_MAX_BODY_BYTES,
  PARTNER_PATHS,
  PARTNER_STATUS,
  SolicitTransferRequest,
  USER_AGENT_PATTERN,
} from '../partner/wire.ts';
import { jsonBody } from './body.ts';
import { problemStatus, statusName, type DialectAnswer, type PaymentView, type SandboxProblem, type TransferView } from './dialects.ts';
import { faultMiddleware } from './faults.ts';
import type { SandboxPayment, SandboxState, SandboxTransfer, TransferRefusal } from './state.ts';

export interface SandboxUrls {
  /** The HTTPS base URL of the partner API, e.g. https://127.0.0.1:8443 */
  api: () => string;
  /** Where people reach the QR image and hosted checkout (may be the demo's origin + /sandbox). */
  public: () => string;
}

type Env = { Bindings: { incoming?: IncomingMessage } };

/** Reads and validates a JSON body; the problem is ready to answer. */
async function readInput<T>(
  c: Context<Env>,
  schema: z.ZodMiniType<T>,
  reason?: 'invalid_data',
): Promise<{ ok: true; data: T } | { ok: false; problem: SandboxProblem }> {
  const read = await jsonBody(c);
  if (!read.ok) {
    const [status, message] =
      read.problem === 'media_type'
        ? [415, 'Content-Type must be application/json.']
        : read.problem === 'too_large'
          ? [413, `The request body is larger than ${PARTNER_MAX_BODY_BYTES} bytes.`]
          : [400, 'The request body is not valid JSON.'];
    return { ok: false, problem: { kind: 'request', status, message } };
  }
  const parsed = parseInput(schema, read.body);
  if (!parsed.success) {
    return { ok: false, problem: { kind: 'invalid_data', message: INVALID_DATA, fields: issuesToFields(parsed.issues), ...(reason ? { reason } : {}) } };
  }
  return { ok: true, data: parsed.data };
}

const INVALID_DATA = 'The given data was invalid.';

/** Sends a dialect's answer: JSON, or nothing at all when it has no body. */
function send(c: Context<Env>, answer: DialectAnswer): Response {
  const status = answer.status as ContentfulStatusCode;
  return answer.body === undefined ? c.body(null, answer.status as StatusCode) : c.json(answer.body, status);
}

export function createPartnerApi(state: SandboxState, urls: SandboxUrls): Hono<Env> {
  const api = new Hono<Env>();
  /** An error answer in the current dialect's body, with the status every dialect shares. */
  const fail = (c: Context<Env>, problem: SandboxProblem) =>
    send(c, {
      status: problem.kind === 'unauthenticated' ? (state.dialect.tokenRefusedStatus ?? problemStatus(problem)) : problemStatus(problem),
      body: state.dialect.errorBody(problem),
    });

  // Faults first: they stand for the network and the service's edge, before anything is checked.
  api.use(
    '*',
    faultMiddleware(state.faults, (status, message) => state.dialect.errorBody({ kind: 'request', status, message })),
  );
  api.use('*', async (c: Context<Env>, next) => {
    state.settleDue();
    const agent = c.req.header('user-agent');
    if (!agent || !USER_AGENT_PATTERN.test(agent)) {
      return fail(c, { kind: 'request', status: 400, message: 'User-Agent must name the company and a contact e-mail: "Company (contact@example.com)".' });
    }
    if (c.req.path !== PARTNER_PATHS.login) {
      const match = /^Bearer ([\x21-\x7e]+)$/.exec(c.req.header('authorization') ?? '');
      if (!match?.[1]) return fail(c, { kind: 'unauthenticated', message: 'Unauthenticated: send Authorization: Bearer <access token>.' });
      if (!state.isTokenValid(match[1])) return fail(c, { kind: 'unauthenticated', message: 'Unauthenticated: the access token is unknown or expired.' });
    }
    return next();
  });

  /** Registers a handler, then a 405 (with Allow) for every other method on the same path. */
  const route = (method: 'GET' | 'POST' | 'PATCH' | 'HEAD', path: string, handler: Handler<Env>) => {
    // Hono answers HEAD with the GET handler; that handler tells the two apart.
    api.on(method === 'HEAD' ? 'GET' : method, path, handler);
    api.all(path, (c) => {
      c.header('allow', method);
      return fail(c, { kind: 'request', status: 405, message: `Use ${method} on this path.` });
    });
  };

  route('POST', PARTNER_PATHS.login, async (c) => {
    const input = await readInput(c, LoginRequest);
    if (!input.ok) return fail(c, input.problem);
    const { email, access_key } = input.data;
    if (email !== state.account.email || access_key !== state.account.accessKey)
      return fail(c, { kind: 'request', status: 401, message: 'Invalid credentials.' });
    const token = state.issueToken();
    return send(c, state.dialect.login(token, state.tokenExpiresAt(token), state.clock.now()));
  });

  route('GET', PARTNER_PATHS.getTenant, (c) => send(c, state.dialect.tenant(state.account.tenant)));

  route('POST', PARTNER_PATHS.createPayment, async (c) => {
    const read = await readInput(c, CreatePartnerPaymentRequest);
    if (!read.ok) return fail(c, read.problem);
    const input = read.data;
    if (input.tenant_id !== state.account.tenant.id) {
      return fail(c, { kind: 'invalid_data', message: INVALID_DATA, fields: { tenant_id: 'is not the tenant of this partner' } });
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
    return send(c, state.dialect.paymentCreated(paymentView(state, payment, urls)));
  });

  route('HEAD', PARTNER_PATHS.checkPayment, (c) => {
    if (c.req.method !== 'HEAD') {
      c.header('allow', 'HEAD');
      return fail(c, { kind: 'request', status: 405, message: 'Use HEAD on this path.' });
    }
    const payment = state.payments.get(c.req.param('external_reference') ?? '');
    const status = payment ? statusName(payment.status) : null;
    const checked = status === null ? 'unknown' : status === 'approved' ? 'paid' : status;
    return c.body(null, state.dialect.paymentCheck(checked) as StatusCode);
  });

  route('GET', PARTNER_PATHS.getPayment, (c) => {
    const payment = state.payments.get(c.req.param('external_reference') ?? '');
    if (!payment) return fail(c, { kind: 'request', status: 404, message: 'Transaction not found.' });
    return send(c, state.dialect.payment(paymentView(state, payment, urls)));
  });

  const transferAnswer = (c: Context<Env>, result: ReturnType<SandboxState['requestTransfer']>) =>
    result.ok ? send(c, state.dialect.transferAccepted(transferView(result.transfer))) : fail(c, refusalProblem(result.refusal));

  route('POST', PARTNER_PATHS.solicitTransferForCustomer, async (c) => {
    const read = await readInput(c, SolicitTransferRequest, 'invalid_data');
    if (!read.ok) return fail(c, read.problem);
    const { value, pix_key, pix_key_type, customer_document, transaction_id } = read.data;
    const result = state.requestTransfer({
      operation: 'solicit-for-customer',
      value,
      pixKey: pix_key,
      pixKeyType: pix_key_type,
      customerDocument: customer_document,
      transactionId: transaction_id,
    });
    return transferAnswer(c, result);
  });

  route('POST', PARTNER_PATHS.transferToKey, async (c) => {
    const read = await readInput(c, KeyTransferRequest, 'invalid_data');
    if (!read.ok) return fail(c, read.problem);
    const { value, pix_key, transaction_id } = read.data;
    // The schema already refused a key that fits no type.
    const pixKeyType = detectPixKeyType(pix_key)!;
    return transferAnswer(c, state.requestTransfer({ operation: 'pix-key/transfer', value, pixKey: pix_key, pixKeyType, transactionId: transaction_id }));
  });

  route('GET', PARTNER_PATHS.checkTransfer, (c) => {
    const transfer = state.transfers.get(c.req.param('external_reference') ?? '');
    if (!transfer) return fail(c, { kind: 'request', status: 404, message: 'Transfer not found.' });
    return send(c, state.dialect.transfer(transferView(transfer)));
  });

  route('PATCH', PARTNER_PATHS.notificationUrl, async (c) => {
    const read = await readInput(c, NotificationUrlRequest);
    if (!read.ok) return fail(c, read.problem);
    const notifyType = read.data.notify_type ?? NOTIFY_TYPE.old;
    state.webhooks.notification = { url: read.data.notification_url, notifyType, notifyTypeGiven: read.data.notify_type !== undefined };
    return send(c, state.dialect.notificationUrlSet({ notificationUrl: read.data.notification_url, notifyType }));
  });

  api.notFound((c) => fail(c, { kind: 'request', status: 404, message: 'Not found.' }));
  api.onError((error, c) => {
    // The error's message only: a stack or a request dump could carry a customer's document.
    console.error(`[sandbox] unexpected error: ${error.name}`);
    return fail(c, { kind: 'request', status: 500, message: 'Server error.' });
  });
  return api;
}

function refusalProblem(refusal: TransferRefusal): SandboxProblem {
  return { kind: 'refused', message: refusal.message, reason: refusal.reason };
}

/** A payment as every dialect sees it. */
export function paymentView(state: SandboxState, payment: SandboxPayment, urls: SandboxUrls): PaymentView {
  const publicBase = urls.public();
  return {
    id: payment.id,
    externalReference: payment.externalReference,
    value: payment.value,
    callback: payment.callback,
    status: statusName(payment.status),
    pixKey: payment.pixKey,
    qrCodeUrl: `${publicBase}/qr/${payment.externalReference}.svg`,
    checkout: `${publicBase}/checkout/${payment.externalReference}`,
    favoured: state.account.partner.name,
    partner: state.account.partner,
    tenant: state.account.tenant,
    createdAt: payment.createdAt,
    expirationSeconds: payment.expirationSeconds,
    now: state.clock.now(),
    ...((payment.returned ?? 0) > 0 ? { returned: true } : {}),
  };
}

/** A transfer as every dialect sees it. */
export function transferView(transfer: SandboxTransfer): TransferView {
  return {
    id: transfer.id,
    externalReference: transfer.externalReference,
    value: transfer.value,
    status: statusName(transfer.status),
    pixKey: transfer.pixKey,
    pixKeyType: transfer.pixKeyType,
    transactionId: transfer.transactionId,
    end2end: transfer.end2end,
    createdAt: transfer.createdAt,
    updatedAt: transfer.updatedAt,
  };
}
