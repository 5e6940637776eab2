/**
 * The simulated partner service as two web-standard apps:
 * - `partnerApi`: the paths of spec section 4, with the spec's headers enforced, served over HTTPS;
 * - `publicApp`: what the service shows people (QR image, hosted checkout page) and the sandbox's
 *   control API for tests and the demo, which the real service does not have.
 */
import { Hono, type Context } from 'hono';
import QRCode from 'qrcode';
import { buildDynamicBrCode } from '../../src/shared/brcode.ts';
import { issuesToFields, parseInput, type Issue } from '../../src/shared/errors.ts';
import { LIMITS } from '../../src/shared/limits.ts';
import {
  CreatePartnerPaymentRequest,
  LoginRequest,
  PARTNER_PATHS,
  PARTNER_STATUS,
  USER_AGENT_PATTERN,
  partnerTimestamp,
  type PartnerErrorResponse,
  type PartnerPaymentRecord,
} from '../../src/shared/partner.ts';
import { readJson } from '../json-body.ts';
import type { SandboxPayment, SandboxState } from './state.ts';

/** The largest JSON body the sandbox reads; anything bigger is refused unread. */
const MAX_BODY_BYTES = 64 * 1024;

export interface SandboxUrls {
  /** The HTTPS base URL of the partner API, e.g. https://127.0.0.1:8443 */
  api: () => string;
  /** Where people reach the QR image and hosted checkout (may be the demo's origin + /sandbox). */
  public: () => string;
}

function fail(c: Context, status: 400 | 401 | 404 | 405 | 413 | 415 | 422, message: string, errors?: Record<string, string[]>) {
  const body: PartnerErrorResponse = errors ? { message, errors } : { message };
  return c.json(body, status);
}

function toPartnerErrors(issues: readonly Issue[]): Record<string, string[]> {
  return Object.fromEntries(Object.entries(issuesToFields(issues)).map(([field, problem]) => [field, [`${field} ${problem}`]]));
}

async function readBody(c: Context): Promise<{ ok: true; body: unknown } | { ok: false; response: Response }> {
  const read = await readJson(c, MAX_BODY_BYTES);
  if (read.ok) return read;
  const response =
    read.problem === 'media_type'
      ? fail(c, 415, 'Content-Type must be application/json.')
      : read.problem === 'too_large'
        ? fail(c, 413, 'The request body is too large.')
        : fail(c, 400, 'The request body is not valid JSON.');
  return { ok: false, response };
}

export function createPartnerApi(state: SandboxState, urls: SandboxUrls): Hono {
  const api = new Hono();

  api.use('*', async (c, next) => {
    const agent = c.req.header('user-agent');
    if (!agent || !USER_AGENT_PATTERN.test(agent)) {
      return fail(c, 400, 'User-Agent must name the company and a contact e-mail: "Company (contact@example.com)".');
    }
    if (c.req.path !== PARTNER_PATHS.login) {
      const match = /^Bearer (\S+)$/.exec(c.req.header('authorization') ?? '');
      if (!match?.[1] || !state.tokens.has(match[1])) return fail(c, 401, 'Unauthenticated.');
    }
    return next();
  });

  api.post(PARTNER_PATHS.login, async (c) => {
    const read = await readBody(c);
    if (!read.ok) return read.response;
    const parsed = parseInput(LoginRequest, read.body);
    if (!parsed.success) return fail(c, 422, 'The given data was invalid.', toPartnerErrors(parsed.issues));
    const { email, access_key } = parsed.data;
    if (email !== state.account.email || access_key !== state.account.accessKey) {
      return fail(c, 401, 'Invalid credentials.');
    }
    const expiresAt = state.clock.now() + LIMITS.tokenLifetimeSeconds * 1000;
    return c.json({
      message: 'Login successful.',
      data: { access_token: state.issueToken(), token_type: 'Bearer', expires_at: partnerTimestamp(expiresAt) },
    });
  });

  api.get(PARTNER_PATHS.getTenant, (c) => c.json({ message: 'Tenant.', data: state.account.tenant }));

  api.post(PARTNER_PATHS.createPayment, async (c) => {
    const read = await readBody(c);
    if (!read.ok) return read.response;
    const parsed = parseInput(CreatePartnerPaymentRequest, read.body);
    if (!parsed.success) return fail(c, 422, 'The given data was invalid.', toPartnerErrors(parsed.issues));
    const input = parsed.data;
    if (input.tenant_id !== state.account.tenant.id) {
      return fail(c, 422, 'The given data was invalid.', { tenant_id: ['tenant_id is not the tenant of this partner'] });
    }
    const { id, externalReference } = state.newPaymentIdentity();
    const apiHost = new URL(urls.api()).host;
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
      paidAt: null,
      pixKey: buildDynamicBrCode({
        locationUrl: `${apiHost}/pix/v2/${externalReference}`,
        merchantName: state.account.merchant.name,
        merchantCity: state.account.merchant.city,
        amount: input.value,
      }),
    };
    state.payments.set(externalReference, payment);
    const record = toRecord(state, payment, urls);
    return c.json(
      {
        message: 'Pix generated.',
        data: {
          ...record,
          pix_key: record.pix_deposit.pix_key,
          qr_code_url: record.pix_deposit.qr_code_url,
          checkout: record.pix_deposit.checkout,
          expiration: payment.expirationSeconds,
        },
      },
      201,
    );
  });

  api.get(PARTNER_PATHS.getPayment, (c) => {
    const payment = state.payments.get(c.req.param('external_reference') ?? '');
    if (!payment) return fail(c, 404, 'Transaction not found.');
    return c.json({ message: 'Transaction.', data: toRecord(state, payment, urls) });
  });

  api.notFound((c) => fail(c, 404, 'Not found.'));
  api.onError((error, c) => {
    console.error('[sandbox] unexpected error', error);
    return c.json({ message: 'Server error.' }, 500);
  });
  return api;
}

export function toRecord(state: SandboxState, payment: SandboxPayment, urls: SandboxUrls): PartnerPaymentRecord {
  const publicBase = urls.public();
  return {
    id: payment.id,
    external_reference: payment.externalReference,
    value: payment.value,
    callback: payment.callback,
    type: 'payment',
    // Only meaningful for wallet payments (spec 2.1); the sandbox has no wallet.
    user_id: 0,
    status: state.statusOf(payment),
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

const STATUS_LABEL: Record<number, string> = {
  [PARTNER_STATUS.pending]: 'Aguardando pagamento',
  [PARTNER_STATUS.approved]: 'Pago',
  [PARTNER_STATUS.canceled]: 'Cancelado',
};

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`);
}

/** The QR image, the hosted checkout page, and the sandbox's control API. */
export function createPublicApp(state: SandboxState): Hono {
  const app = new Hono();

  app.get('/qr/:file', async (c) => {
    const reference = c.req.param('file').replace(/\.svg$/, '');
    const payment = state.payments.get(reference);
    if (!payment) return c.json({ message: 'Not found.' }, 404);
    const svg = await QRCode.toString(payment.pixKey, { type: 'svg', errorCorrectionLevel: 'M', margin: 4 });
    return c.body(svg, 200, { 'content-type': 'image/svg+xml', 'cache-control': 'public, max-age=3600' });
  });

  app.get('/checkout/:reference', async (c) => {
    const payment = state.payments.get(c.req.param('reference'));
    if (!payment) return c.html('<!doctype html><title>Not found</title><p>Payment not found.</p>', 404);
    const status = state.statusOf(payment);
    const value = payment.value.toLocaleString('pt-BR', { style: 'currency', currency: 'BRL' });
    const qr = await QRCode.toString(payment.pixKey, { type: 'svg', errorCorrectionLevel: 'M', margin: 4, width: 240 });
    const payButton =
      status === PARTNER_STATUS.pending
        ? `<form method="post" action="pay"><button>Simular pagamento (sandbox)</button></form>`
        : '';
    return c.html(`<!doctype html><html lang="pt-BR"><meta charset="utf-8"><meta name="viewport" content="width=device-width">
<title>Pagamento Pix ${escapeHtml(value)}</title>
<style>body{font:16px system-ui,sans-serif;max-width:26rem;margin:2rem auto;padding:0 1rem}textarea{width:100%;font:13px ui-monospace,monospace}</style>
<h1>Pix ${escapeHtml(value)}</h1><p>${escapeHtml(state.account.partner.name)}</p>
<p><strong>${STATUS_LABEL[status] ?? 'Desconhecido'}</strong></p>${qr}
<label>Pix copia e cola<textarea readonly rows="5">${escapeHtml(payment.pixKey)}</textarea></label>${payButton}</html>`);
  });

  app.post('/checkout/:reference/pay', (c) => {
    const payment = state.payments.get(c.req.param('reference'));
    if (!payment) return c.text('Payment not found.', 404);
    state.pay(payment);
    return c.redirect(`../${payment.externalReference}`, 303);
  });

  // Control API: what tests and the demo use to play the payer's bank and the passing of time.
  app.post('/_sandbox/payments/:reference/pay', (c) => {
    const payment = state.payments.get(c.req.param('reference'));
    if (!payment) return c.json({ error: { code: 'not_found', message: 'No such payment in the sandbox.' } }, 404);
    const result = state.pay(payment);
    if (!result.ok) return c.json({ error: { code: 'conflict', message: result.reason } }, 409);
    return c.json({ reference: payment.externalReference, status: state.statusOf(payment) });
  });

  app.post('/_sandbox/clock/advance', async (c) => {
    let seconds: unknown;
    try {
      seconds = ((await c.req.json()) as { seconds?: unknown }).seconds;
    } catch {
      return c.json({ error: { code: 'invalid_json', message: 'Send {"seconds": n}.' } }, 400);
    }
    if (typeof seconds !== 'number' || !Number.isFinite(seconds) || seconds < 0) {
      return c.json({ error: { code: 'invalid_request', message: 'seconds must be a non-negative number', fields: { seconds: 'must be a non-negative number' } } }, 400);
    }
    state.clock.advance(seconds * 1000);
    return c.json({ now: new Date(state.clock.now()).toISOString(), offset_seconds: state.clock.offset() / 1000 });
  });

  app.notFound((c) => c.json({ error: { code: 'not_found', message: `Nothing at ${c.req.method} ${c.req.path}.` } }, 404));
  return app;
}
