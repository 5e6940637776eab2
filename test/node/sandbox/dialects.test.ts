/**
 * The sandbox's dialects (server/sandbox/dialects.ts): in each, what every "not shown" answer looks
 * like (login, tenant, create, record, HEAD, transfers, PATCH, error bodies, webhooks in both
 * formats), over real HTTPS against startSandbox({dialect}) with webhooks received on a real HTTP
 * port; the control API's GET and PUT /_sandbox/dialect; and PIX_SANDBOX_DIALECT for `npm run
 * sandbox`. Requests are the spec's in every dialect: the same bodies are sent to all three.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test } from 'node:test';
import { readNotification } from '../../../server/partner/notification.ts';
import { PARTNER_PATHS, PARTNER_STATUS } from '../../../server/partner/wire.ts';
import { createClock } from '../../../server/sandbox/clock.ts';
import { TEST_CUSTOMERS } from '../../../server/sandbox/customers.ts';
import { DIALECT_NAMES, SANDBOX_DIALECTS, type DialectName, type SandboxDialect } from '../../../server/sandbox/dialects.ts';
import { startSandbox, type RunningSandbox } from '../../../server/sandbox/server.ts';
import { DEFAULT_ACCOUNT } from '../../../server/sandbox/state.ts';
import { T0, UA, assertValidBrCode, paymentPath, sandboxSender, startReceiver, waitFor, type Receiver, type Reply } from '../../support/sandbox-harness.ts';

/** The frozen sandbox time: 2030-01-01T00:00:05.123Z, with milliseconds to show how each dialect writes them. */
const NOW = T0 + 5_123;
const STAMP: Record<DialectName, string> = {
  default: '2030-01-01T00:00:05.123000Z',
  terse: '2029-12-31T21:00:05-03:00',
  numbered: '2030-01-01T00:00:05.123+00:00',
  swapped: '2030-01-01T00:00:05.123000Z',
  expiring: '2030-01-01T00:00:05.123000Z',
};
/** Bank answers after 60 sandbox seconds (Ana's approves, Elisa's cancels). */
const BANK_SECONDS = 60;
const FIVE_YEARS_S = 5 * 365 * 24 * 3600;

const customer = (name: string) => TEST_CUSTOMERS.find((c) => c.name.startsWith(name))!;
const ana = customer('Ana');
const bruno = customer('Bruno'); // KYC pending
const elisa = customer('Elisa'); // the bank cancels

const credentials = { email: DEFAULT_ACCOUNT.email, access_key: DEFAULT_ACCOUNT.accessKey };
const tenantId = DEFAULT_ACCOUNT.tenant.id;

interface Client {
  sandbox: RunningSandbox;
  /** The raw answer to the first login, and the token taken from it the dialect's way. */
  login: Reply;
  token: string;
  api(method: string, path: string, body?: unknown, token?: string | false): Promise<Reply>;
  control(method: string, path: string, body?: unknown): Promise<Reply>;
  close(): Promise<void>;
}

const open: Client[] = [];
const receivers: Receiver[] = [];
after(async () => {
  await Promise.all([...open.map((c) => c.close()), ...receivers.map((r) => r.close())]);
});

/** A sandbox in `dialect` on a frozen clock, and a client with the spec's headers that trusts its certificate. */
async function openClient(dialect: DialectName | SandboxDialect, tokenOf: (login: any) => string): Promise<Client> {
  const sandbox = await startSandbox({
    dialect,
    clock: createClock(() => NOW),
    settleIntervalMs: 0,
    webhooks: { timeoutMs: 2000, retryDelayMs: 5 },
    bank: { answerAfterSeconds: BANK_SECONDS },
  });
  const { send, agent } = sandboxSender(sandbox);
  const json = (body: unknown): Record<string, string> =>
    body === undefined ? {} : { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(JSON.stringify(body))) };
  const client: Client = {
    sandbox,
    login: undefined as unknown as Reply,
    token: '',
    api(method, path, body, token) {
      const auth: Record<string, string> = token === false ? {} : { authorization: `Bearer ${token ?? client.token}` };
      return send(method, path, { 'user-agent': UA, ...auth, ...json(body) }, body === undefined ? undefined : JSON.stringify(body));
    },
    control: (method, path, body) => send(method, `/_sandbox${path}`, json(body), body === undefined ? undefined : JSON.stringify(body)),
    async close() {
      agent.destroy();
      await sandbox.close();
    },
  };
  open.push(client);
  client.login = await client.api('POST', PARTNER_PATHS.login, credentials, false);
  assert.equal(client.login.status, 200, client.login.text);
  client.token = tokenOf(client.login.json);
  return client;
}

async function receiver(): Promise<Receiver> {
  const r = await startReceiver();
  receivers.push(r);
  return r;
}

/** The webhook payload received for `reference` (found the dialect's way), once delivered. */
function received(r: Receiver, reference: string, referenceOf: (body: any) => unknown) {
  return waitFor(`a webhook for ${reference}`, () => r.received.find((w) => referenceOf(w.body) === reference)?.body);
}

const createBody = { value: 10.5, tenant_id: tenantId, transaction_id: 'pedido-1' };
const transferBody = { value: 12, pix_key: ana.keys.EMAIL, transaction_id: 'saque-1' };
/** Bruno's KYC is pending: the partner refuses a transfer for him up front. */
const refusedTransferBody = { customer_document: bruno.document, value: 12, pix_key: bruno.keys.EMAIL, pix_key_type: 'EMAIL' };
const recordUrls = (c: Client, reference: string) => ({
  qr_code_url: `${c.sandbox.url}/qr/${reference}.svg`,
  checkout: `${c.sandbox.url}/checkout/${reference}`,
});

/** A payment's record of spec 2.1 as the default writes it, with the given value, status and created_at. */
function expectedRecord(c: Client, id: number, reference: string, pixKey: string, value: number | string, status: number, createdAt: string) {
  const { qr_code_url, checkout } = recordUrls(c, reference);
  return {
    id,
    external_reference: reference,
    value,
    callback: null,
    type: 'payment',
    user_id: 0,
    status,
    deeplink: null,
    pix_deposit: { qr_code_url, pix_key: pixKey, favoured: DEFAULT_ACCOUNT.partner.name, external_reference: reference, checkout },
    partner: DEFAULT_ACCOUNT.partner,
    tenant: DEFAULT_ACCOUNT.tenant,
    created_at: createdAt,
  };
}

function expectedTransfer(id: number, reference: string, value: number | string, status: number, stamp: string) {
  return {
    id,
    external_reference: reference,
    type: 'transfer',
    value,
    status,
    pix_key: ana.keys.EMAIL,
    pix_key_type: 'EMAIL',
    transaction_id: 'saque-1',
    end2end: null,
    created_at: stamp,
    updated_at: stamp,
  };
}

/** HEAD .../check for a new payment while pending, once paid, once canceled, and an unknown one. */
async function headAnswers(c: Client, referenceOf: (created: any) => string) {
  const check = async (reference: string) => (await c.api('HEAD', paymentPath(PARTNER_PATHS.checkPayment, reference))).status;
  const paid = referenceOf((await c.api('POST', PARTNER_PATHS.createPayment, createBody)).json);
  const canceled = referenceOf((await c.api('POST', PARTNER_PATHS.createPayment, createBody)).json);
  const pending = await check(paid);
  assert.equal((await c.control('POST', `/payments/${paid}/pay`)).status, 200);
  assert.equal((await c.control('POST', `/payments/${canceled}/cancel`)).status, 200);
  return { pending, paid: await check(paid), canceled: await check(canceled), unknown: await check('nope') };
}

describe('default: what ASSUMPTIONS.md lists (the other suites test it whole)', () => {
  let c: Client;
  before(async () => {
    c = await openClient('default', (login) => login.data.access_token);
  });

  test('login, tenant, create and record keep their `{message, data}` shapes', async () => {
    assert.deepEqual(c.login.json, {
      message: 'Login successful.',
      data: { access_token: c.token, token_type: 'Bearer', expires_at: new Date(NOW + FIVE_YEARS_S * 1000).toISOString().replace('Z', '000Z') },
    });
    assert.deepEqual((await c.api('GET', PARTNER_PATHS.getTenant)).json, { message: 'Tenant.', data: DEFAULT_ACCOUNT.tenant });
    const created = await c.api('POST', PARTNER_PATHS.createPayment, createBody);
    assert.equal(created.status, 201);
    const { external_reference: reference, pix_key } = created.json.data;
    const record = expectedRecord(c, created.json.data.id, reference, pix_key, 10.5, PARTNER_STATUS.pending, STAMP.default);
    assert.deepEqual(created.json, { message: 'Pix generated.', data: { ...record, pix_key, ...recordUrls(c, reference), expiration: 3600 } });
    const read = await c.api('GET', paymentPath(PARTNER_PATHS.getPayment, reference));
    assert.deepEqual(read.json, { message: 'Transaction.', data: record });
  });

  test('HEAD: 202 pending, 200 paid, 410 canceled, 404 unknown', async () => {
    assert.deepEqual(await headAnswers(c, (created) => created.data.external_reference), { pending: 202, paid: 200, canceled: 410, unknown: 404 });
  });

  test('errors: `{message, errors: {field: [..]}, reason?}`', async () => {
    const invalid = await c.api('POST', PARTNER_PATHS.transferToKey, { ...transferBody, value: 0.1 });
    assert.equal(invalid.status, 422);
    assert.deepEqual(invalid.json, { message: 'The given data was invalid.', errors: { value: ['value must be at least 0.20'] }, reason: 'invalid_data' });
    const refused = await c.api('POST', PARTNER_PATHS.solicitTransferForCustomer, refusedTransferBody);
    assert.equal(refused.status, 403);
    assert.deepEqual(refused.json, { message: "The customer's KYC is pending, not approved.", reason: 'kyc_not_approved' });
  });
});

describe('terse: {data} only, amounts as strings, times at -03:00, HEAD means "exists", PATCH 204', () => {
  let c: Client;
  before(async () => {
    c = await openClient('terse', (login) => login.data.token);
  });

  test("login: `{data: {token, expires_in}}`, the token valid for the spec's 5 years", async () => {
    assert.deepEqual(c.login.json, { data: { token: c.token, expires_in: FIVE_YEARS_S } });
    assert.equal(c.sandbox.state.isTokenValid(c.token), true);
  });

  test('get-tenant: `{data: {tenant_id, name}}`', async () => {
    const res = await c.api('GET', PARTNER_PATHS.getTenant);
    assert.equal(res.status, 200);
    assert.deepEqual(res.json, { data: { tenant_id: tenantId, name: DEFAULT_ACCOUNT.tenant.name } });
  });

  test('create: 200, the codes only under data.pix_deposit, value "10.50", no created_at, message or expiration', async () => {
    const res = await c.api('POST', PARTNER_PATHS.createPayment, createBody);
    assert.equal(res.status, 200, res.text);
    const deposit = res.json.data.pix_deposit;
    assert.deepEqual(res.json, {
      data: {
        id: res.json.data.id,
        status: PARTNER_STATUS.pending,
        value: '10.50',
        pix_deposit: {
          external_reference: deposit.external_reference,
          pix_key: deposit.pix_key,
          ...recordUrls(c, deposit.external_reference),
          favoured: DEFAULT_ACCOUNT.partner.name,
        },
      },
    });
    assert.equal(Number.isInteger(res.json.data.id), true);
    assertValidBrCode(deposit.pix_key, 10.5);

    const read = await c.api('GET', paymentPath(PARTNER_PATHS.getPayment, deposit.external_reference));
    assert.equal(read.status, 200);
    assert.deepEqual(read.json, {
      data: expectedRecord(c, res.json.data.id, deposit.external_reference, deposit.pix_key, '10.50', PARTNER_STATUS.pending, STAMP.terse),
    });
    assert.equal(Date.parse(read.json.data.created_at), Math.floor(NOW / 1000) * 1000, 'the same instant, to the second');
  });

  test('HEAD: 200 for every known payment whatever its state, 404 unknown', async () => {
    assert.deepEqual(await headAnswers(c, (created) => created.data.pix_deposit.external_reference), { pending: 200, paid: 200, canceled: 200, unknown: 404 });
  });

  test('transfers: 200 `{data: record}` with value "12.00" and times at -03:00; check the same', async () => {
    const res = await c.api('POST', PARTNER_PATHS.transferToKey, transferBody);
    assert.equal(res.status, 200, res.text);
    const { id, external_reference: reference } = res.json.data;
    assert.deepEqual(res.json, { data: expectedTransfer(id, reference, '12.00', PARTNER_STATUS.pending, STAMP.terse) });
    const check = await c.api('GET', paymentPath(PARTNER_PATHS.checkTransfer, reference));
    assert.equal(check.status, 200);
    assert.deepEqual(check.json, res.json);
  });

  test('PATCH notification-url: 204 with no body, and the URL is registered', async () => {
    const res = await c.api('PATCH', PARTNER_PATHS.notificationUrl, { notification_url: 'https://loja.example/hook', notify_type: 2 });
    assert.equal(res.status, 204);
    assert.equal(res.text, '');
    assert.deepEqual((await c.control('GET', '/notification-url')).json, {
      notification: { notification_url: 'https://loja.example/hook', notify_type: 2, notify_type_given: true },
    });
  });

  test('errors: `{error, fields: {field: problem}, code?}`; 401 `{error: "Unauthenticated."}`', async () => {
    const invalid = await c.api('POST', PARTNER_PATHS.createPayment, { ...createBody, value: 0.1, extra: 1 });
    assert.equal(invalid.status, 422);
    assert.deepEqual(invalid.json, { error: 'The given data was invalid.', fields: { value: 'must be at least 0.20', extra: 'is not a known field' } });
    const invalidTransfer = await c.api('POST', PARTNER_PATHS.transferToKey, { ...transferBody, value: 0.1 });
    assert.deepEqual(invalidTransfer.json, { error: 'The given data was invalid.', fields: { value: 'must be at least 0.20' }, code: 'invalid_data' });
    const refused = await c.api('POST', PARTNER_PATHS.transferToKey, { value: 12, pix_key: bruno.keys.EMAIL });
    assert.equal(refused.status, 403);
    assert.deepEqual(refused.json, { error: "The customer's KYC is pending, not approved.", code: 'kyc_not_approved' });
    const unauthenticated = await c.api('GET', PARTNER_PATHS.getTenant, undefined, 'nope');
    assert.equal(unauthenticated.status, 401);
    assert.deepEqual(unauthenticated.json, { error: 'Unauthenticated.' });
    const unknown = await c.api('GET', paymentPath(PARTNER_PATHS.getPayment, 'nope'));
    assert.equal(unknown.status, 404);
    assert.deepEqual(unknown.json, { error: 'Transaction not found.' });
  });

  test('the edge speaks it too: plain HTTP is refused with `{error}`; a malformed_json fault leaves a 204 alone', async () => {
    const plain = await fetch(c.sandbox.url.replace('https:', 'http:') + PARTNER_PATHS.getTenant);
    assert.equal(plain.status, 403);
    assert.deepEqual(await plain.json(), { error: 'HTTPS is required.' });
    assert.equal((await c.control('POST', '/faults', { kind: 'malformed_json', rate: 1, path_prefix: PARTNER_PATHS.notificationUrl })).status, 201);
    try {
      const res = await c.api('PATCH', PARTNER_PATHS.notificationUrl, { notification_url: 'https://loja.example/hook' });
      assert.equal(res.status, 204, res.text);
    } finally {
      await c.control('DELETE', '/faults');
    }
  });

  test('webhooks: old `{type, reference, status, value, transaction_id}`, new `{id, event, created_at, data}`', async () => {
    const r = await receiver();
    const referenceOf = (body: any) => body.reference ?? body.data?.reference;
    await c.api('PATCH', PARTNER_PATHS.notificationUrl, { notification_url: r.url, notify_type: 1 });
    const paid = (await c.api('POST', PARTNER_PATHS.createPayment, createBody)).json.data.pix_deposit.external_reference;
    await c.control('POST', `/payments/${paid}/pay`);
    assert.deepEqual(await received(r, paid, referenceOf), {
      type: 'payment',
      reference: paid,
      status: PARTNER_STATUS.approved,
      value: '10.50',
      transaction_id: 'pedido-1',
    });

    await c.api('PATCH', PARTNER_PATHS.notificationUrl, { notification_url: r.url, notify_type: 2 });
    const transfer = (await c.api('POST', PARTNER_PATHS.transferToKey, transferBody)).json.data.external_reference;
    const canceled = (await c.api('POST', PARTNER_PATHS.createPayment, createBody)).json.data.pix_deposit.external_reference;
    await c.control('POST', `/payments/${canceled}/cancel`);
    await c.control('POST', `/transfers/${transfer}/approve`);
    const paymentEvent = await received(r, canceled, referenceOf);
    assert.match(paymentEvent.id, /^evt_[0-9a-f]{32}$/);
    assert.deepEqual(paymentEvent, {
      id: paymentEvent.id,
      event: 'PAYMENT_CANCELLED',
      created_at: STAMP.terse,
      data: { reference: canceled, status: PARTNER_STATUS.canceled, value: '10.50' },
    });
    const transferEvent = await received(r, transfer, referenceOf);
    assert.deepEqual(transferEvent, {
      id: transferEvent.id,
      event: 'TRANSFER_PAID',
      created_at: STAMP.terse,
      data: { reference: transfer, status: PARTNER_STATUS.approved, value: '12.00' },
    });
  });
});

describe('numbered: 0 pending, 1 approved, 2 canceled; top-level token and tenant; times in ms at +00:00', () => {
  const CODES = { pending: 0, approved: 1, canceled: 2 };
  let c: Client;
  before(async () => {
    c = await openClient('numbered', (login) => login.accessToken);
  });

  test('login: `{accessToken}` at the top, no lifetime', () => {
    assert.deepEqual(c.login.json, { accessToken: c.token });
  });

  test('get-tenant: `{tenant: {id, name}}`', async () => {
    const res = await c.api('GET', PARTNER_PATHS.getTenant);
    assert.equal(res.status, 200);
    assert.deepEqual(res.json, { tenant: DEFAULT_ACCOUNT.tenant });
  });

  test('create: 201 `{data}` with status 0 and the codes at data, no created_at, message or pix_deposit (no favoured); the record in ms at +00:00', async () => {
    const res = await c.api('POST', PARTNER_PATHS.createPayment, createBody);
    assert.equal(res.status, 201, res.text);
    const { external_reference: reference, pix_key, id } = res.json.data;
    const record = expectedRecord(c, id, reference, pix_key, 10.5, CODES.pending, STAMP.numbered);
    const { created_at: _none, pix_deposit: _flat, ...withoutCreatedAt } = record;
    assert.deepEqual(res.json, { data: { ...withoutCreatedAt, pix_key, ...recordUrls(c, reference) } });
    assert.equal(JSON.stringify(res.json).includes('"favoured"'), false, 'who is paid is not said in the create');
    assertValidBrCode(pix_key, 10.5);
    const read = await c.api('GET', paymentPath(PARTNER_PATHS.getPayment, reference));
    assert.equal(read.status, 200);
    assert.deepEqual(read.json, { data: record });
  });

  test('a canceled payment reads 2, what the default numbering calls approved; a paid one 1', async () => {
    const canceled = (await c.api('POST', PARTNER_PATHS.createPayment, createBody)).json.data.external_reference;
    const paid = (await c.api('POST', PARTNER_PATHS.createPayment, createBody)).json.data.external_reference;
    assert.deepEqual((await c.control('POST', `/payments/${canceled}/cancel`)).json, { reference: canceled, status: CODES.canceled });
    assert.deepEqual((await c.control('POST', `/payments/${paid}/pay`)).json, { reference: paid, status: CODES.approved });
    assert.equal((await c.api('GET', paymentPath(PARTNER_PATHS.getPayment, canceled))).json.data.status, 2);
    assert.equal((await c.api('GET', paymentPath(PARTNER_PATHS.getPayment, paid))).json.data.status, 1);
    assert.equal(c.sandbox.state.payments.get(canceled)!.status, PARTNER_STATUS.canceled, 'the state keeps the canonical numbering');
  });

  test('HEAD: the default mapping (202, 200, 410, 404)', async () => {
    assert.deepEqual(await headAnswers(c, (created) => created.data.external_reference), { pending: 202, paid: 200, canceled: 410, unknown: 404 });
  });

  test('transfers: 201 `{data: record}` in this numbering, times in ms at +00:00; check 200', async () => {
    const res = await c.api('POST', PARTNER_PATHS.transferToKey, transferBody);
    assert.equal(res.status, 201, res.text);
    const { id, external_reference: reference } = res.json.data;
    assert.deepEqual(res.json, { data: expectedTransfer(id, reference, 12, CODES.pending, STAMP.numbered) });
    const check = await c.api('GET', paymentPath(PARTNER_PATHS.checkTransfer, reference));
    assert.equal(check.status, 200);
    assert.deepEqual(check.json, res.json);
  });

  test('PATCH notification-url: 200 `{}`', async () => {
    const res = await c.api('PATCH', PARTNER_PATHS.notificationUrl, { notification_url: 'https://loja.example/hook' });
    assert.equal(res.status, 200);
    assert.deepEqual(res.json, {});
  });

  test('errors: `{errors: [{field, message}], reason}`, `{detail, reason}`, 403 `{detail}` for a refused token', async () => {
    const invalid = await c.api('POST', PARTNER_PATHS.createPayment, { ...createBody, value: 0.1 });
    assert.equal(invalid.status, 422);
    assert.deepEqual(invalid.json, { errors: [{ field: 'value', message: 'must be at least 0.20' }], reason: 'invalid_data' });
    const refused = await c.api('POST', PARTNER_PATHS.solicitTransferForCustomer, refusedTransferBody);
    assert.equal(refused.status, 403);
    assert.deepEqual(refused.json, { detail: "The customer's KYC is pending, not approved.", reason: 'kyc_not_approved' });
    const unauthenticated = await c.api('GET', PARTNER_PATHS.getTenant, undefined, false);
    // A refused token is 403 in this dialect (some services answer so).
    assert.equal(unauthenticated.status, 403);
    assert.deepEqual(unauthenticated.json, { detail: 'Unauthenticated.' });
    assert.equal((await c.control('POST', '/faults', { kind: 'server_error', rate: 1, path_prefix: PARTNER_PATHS.getTenant })).status, 201);
    try {
      const fault = await c.api('GET', PARTNER_PATHS.getTenant);
      assert.equal(fault.status, 503);
      assert.deepEqual(fault.json, { detail: 'Service unavailable (sandbox fault).' });
    } finally {
      await c.control('DELETE', '/faults');
    }
  });

  test('webhooks: old `{type: deposit|withdrawal, externalReference, status, value}`, new `{event_id, event_type, occurred_at, payload: {transaction}}`', async () => {
    const r = await receiver();
    const referenceOf = (body: any) => body.externalReference ?? body.payload?.transaction?.externalReference;
    await c.api('PATCH', PARTNER_PATHS.notificationUrl, { notification_url: r.url });
    const canceled = (await c.api('POST', PARTNER_PATHS.createPayment, createBody)).json.data.external_reference;
    await c.control('POST', `/payments/${canceled}/cancel`);
    const old = await received(r, canceled, referenceOf);
    assert.deepEqual(old, { type: 'deposit', externalReference: canceled, status: CODES.canceled, value: 10.5 });
    // Its code 2 is canceled here, approved in the default numbering: as read, a code, no outcome.
    assert.deepEqual(readNotification(old), {
      reference: canceled,
      referenceField: 'external_reference',
      kind: 'payment',
      outcome: null,
      status: { code: CODES.canceled, word: null },
      eventId: null,
      returned: null,
    });

    await c.api('PATCH', PARTNER_PATHS.notificationUrl, { notification_url: r.url, notify_type: 2 });
    const paid = (await c.api('POST', PARTNER_PATHS.createPayment, createBody)).json.data.external_reference;
    await c.control('POST', `/payments/${paid}/pay`);
    const transfer = (await c.api('POST', PARTNER_PATHS.transferToKey, { ...transferBody, pix_key: elisa.keys.EMAIL })).json.data.external_reference;
    await c.control('POST', '/clock/advance', { seconds: BANK_SECONDS });
    const paymentEvent = await received(r, paid, referenceOf);
    assert.match(paymentEvent.event_id, /^evt_[0-9a-f]{32}$/);
    assert.deepEqual(paymentEvent, {
      event_id: paymentEvent.event_id,
      event_type: 'deposit.paid',
      occurred_at: STAMP.numbered,
      payload: { transaction: { externalReference: paid, status: CODES.approved, value: 10.5 } },
    });
    // Read through the wrapper, as any other.
    assert.deepEqual(readNotification(paymentEvent), {
      reference: paid,
      referenceField: 'external_reference',
      kind: 'payment',
      outcome: 'approved',
      status: { code: CODES.approved, word: null },
      eventId: paymentEvent.event_id,
      returned: null,
    });
    const transferEvent = await received(r, transfer, referenceOf);
    assert.deepEqual(transferEvent, {
      event_id: transferEvent.event_id,
      event_type: 'withdrawal.cancelled',
      occurred_at: new Date(NOW + BANK_SECONDS * 1000).toISOString().replace('Z', '+00:00'),
      payload: { transaction: { externalReference: transfer, status: CODES.canceled, value: 12 } },
    });
  });
});

describe('swapped: the default with approved and canceled the other way round (1 pending, 3 approved, 2 canceled)', () => {
  const CODES = { pending: 1, approved: 3, canceled: 2 };
  let c: Client;
  before(async () => {
    c = await openClient('swapped', (login) => login.data.access_token);
  });

  test('create and read: pending 1 as ours; a paid payment reads 3, a canceled one 2 (the default reads them canceled and approved)', async () => {
    const created = await c.api('POST', PARTNER_PATHS.createPayment, createBody);
    assert.equal(created.status, 201, created.text);
    assert.equal(created.json.data.status, CODES.pending);
    const paid = created.json.data.external_reference;
    const canceled = (await c.api('POST', PARTNER_PATHS.createPayment, createBody)).json.data.external_reference;
    assert.equal((await c.api('GET', paymentPath(PARTNER_PATHS.getPayment, paid))).json.data.status, CODES.pending);
    assert.deepEqual((await c.control('POST', `/payments/${paid}/pay`)).json, { reference: paid, status: CODES.approved });
    assert.deepEqual((await c.control('POST', `/payments/${canceled}/cancel`)).json, { reference: canceled, status: CODES.canceled });
    const read = await c.api('GET', paymentPath(PARTNER_PATHS.getPayment, paid));
    assert.equal(read.json.message, 'Transaction.', 'otherwise the default');
    assert.equal(read.json.data.status, 3);
    assert.equal((await c.api('GET', paymentPath(PARTNER_PATHS.getPayment, canceled))).json.data.status, 2);
    assert.equal(c.sandbox.state.payments.get(paid)!.status, PARTNER_STATUS.approved, 'the state keeps the canonical numbering');
  });

  test('transfers and webhooks in both formats speak the swapped numbering', async () => {
    const transfer = await c.api('POST', PARTNER_PATHS.transferToKey, transferBody);
    assert.equal(transfer.status, 201, transfer.text);
    assert.equal(transfer.json.data.status, CODES.pending);
    const r = await receiver();
    const referenceOf = (body: any) => body.external_reference ?? body.data?.external_reference;
    await c.api('PATCH', PARTNER_PATHS.notificationUrl, { notification_url: r.url });
    const paid = (await c.api('POST', PARTNER_PATHS.createPayment, createBody)).json.data.external_reference;
    await c.control('POST', `/payments/${paid}/pay`);
    const old = await received(r, paid, referenceOf);
    assert.equal(old.status, CODES.approved);
    assert.equal(old.type, 'payment');
    await c.api('PATCH', PARTNER_PATHS.notificationUrl, { notification_url: r.url, notify_type: 2 });
    const canceled = (await c.api('POST', PARTNER_PATHS.createPayment, createBody)).json.data.external_reference;
    await c.control('POST', `/payments/${canceled}/cancel`);
    const fresh = await received(r, canceled, referenceOf);
    assert.equal(fresh.event, 'payment.canceled');
    assert.equal(fresh.data.status, CODES.canceled);
  });

  test('GET /_sandbox/dialect names its codes', async () => {
    assert.deepEqual((await c.control('GET', '/dialect')).json, { name: 'swapped', status_codes: CODES });
  });
});

describe('choosing a dialect', () => {
  test('GET /_sandbox/dialect names it and its codes; PUT switches every answer at once; an unknown name is 422', async () => {
    const c = await openClient('default', (login) => login.data.access_token);
    assert.deepEqual((await c.control('GET', '/dialect')).json, { name: 'default', status_codes: { pending: 1, approved: 2, canceled: 3 } });
    const reference = (await c.api('POST', PARTNER_PATHS.createPayment, createBody)).json.data.external_reference;

    const put = await c.control('PUT', '/dialect', { name: 'numbered' });
    assert.equal(put.status, 200, put.text);
    assert.deepEqual(put.json, { name: 'numbered', status_codes: { pending: 0, approved: 1, canceled: 2 } });
    assert.deepEqual((await c.api('GET', PARTNER_PATHS.getTenant)).json, { tenant: DEFAULT_ACCOUNT.tenant });
    assert.equal((await c.api('GET', paymentPath(PARTNER_PATHS.getPayment, reference))).json.data.status, 0, 'the same payment, in the new numbering');

    const unknown = await c.control('PUT', '/dialect', { name: 'klingon' });
    assert.equal(unknown.status, 422);
    assert.equal(unknown.json.error.code, 'invalid_request');
    assert.deepEqual(Object.keys(unknown.json.error.fields), ['name']);
    assert.match(unknown.json.error.message, /default, terse, numbered/);
    assert.equal((await c.control('PUT', '/dialect', { dialect: 'terse' })).status, 400, 'a body of the wrong shape is the usual 400');
    assert.equal((await c.control('GET', '/dialect')).json.name, 'numbered', 'refusals changed nothing');

    assert.equal((await c.control('PUT', '/dialect', { name: 'terse' })).status, 200);
    assert.equal((await c.api('HEAD', paymentPath(PARTNER_PATHS.checkPayment, reference))).status, 200);
    assert.equal((await c.control('PUT', '/dialect', { name: 'default' })).status, 200);
    assert.equal((await c.api('HEAD', paymentPath(PARTNER_PATHS.checkPayment, reference))).status, 202);
  });

  test('startSandbox takes a dialect object of your own, and refuses an unknown name', async () => {
    const own: SandboxDialect = { ...SANDBOX_DIALECTS.default, name: 'mine', paymentCheck: () => 299 };
    const c = await openClient(own, (login) => login.data.access_token);
    assert.deepEqual((await c.control('GET', '/dialect')).json, { name: 'mine', status_codes: { pending: 1, approved: 2, canceled: 3 } });
    assert.equal((await c.api('HEAD', paymentPath(PARTNER_PATHS.checkPayment, 'nope'))).status, 299);
    await assert.rejects(startSandbox({ dialect: 'klingon' as DialectName }), /default, terse, numbered/);
    assert.deepEqual([...DIALECT_NAMES], ['default', 'terse', 'numbered', 'swapped', 'expiring']);
  });

  test('npm run sandbox: PIX_SANDBOX_DIALECT picks it and the banner says so; an unknown one exits 2 naming the valid ones', async () => {
    const main = fileURLToPath(new URL('../../../server/sandbox/main.ts', import.meta.url));
    const tsx = import.meta.resolve('tsx');
    // A directory of its own: main.ts writes .sandbox/cert.pem where it runs.
    const cwd = await mkdtemp(join(tmpdir(), 'sandbox-dialect-'));
    const run = (dialect: string, until: RegExp | null) =>
      new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
        const child = spawn(process.execPath, ['--import', tsx, main], {
          cwd,
          env: { ...process.env, PIX_SANDBOX_DIALECT: dialect, SANDBOX_PORT: '0' },
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        const out = { stdout: '', stderr: '' };
        const guard = setTimeout(() => child.kill('SIGKILL'), 20_000);
        child.stdout.on('data', (chunk: Buffer) => {
          out.stdout += chunk.toString();
          if (until?.test(out.stdout)) child.kill('SIGTERM');
        });
        child.stderr.on('data', (chunk: Buffer) => (out.stderr += chunk.toString()));
        child.on('error', reject);
        child.on('close', (code) => {
          clearTimeout(guard);
          resolve({ code, ...out });
        });
      });
    try {
      const bad = await run('klingon', null);
      assert.equal(bad.code, 2, bad.stderr);
      assert.match(bad.stderr, /PIX_SANDBOX_DIALECT must be one of: default, terse, numbered/);
      const good = await run('numbered', /Ctrl-C to stop/);
      assert.match(good.stdout, /^ {2}dialect: +numbered /m, good.stdout + good.stderr);
      assert.equal(good.code, 0, good.stderr);
    } finally {
      await rm(cwd, { recursive: true, force: true });
    }
  });
});

describe('expiring: an expired code, a returned one, and transfers numbered apart', () => {
  let c: Client;
  before(async () => {
    c = await openClient('expiring', (login) => login.data.access_token);
  });

  test('1 pending, then 3 once past its expiration (still payable: then 2), 4 once canceled an hour later; a returned view is 6', async () => {
    const created = await c.api('POST', PARTNER_PATHS.createPayment, { ...createBody, expiration: 60 });
    assert.equal(created.status, 201, created.text);
    assert.equal(created.json.data.status, 1);
    const late = created.json.data.external_reference;
    const unpaid = (await c.api('POST', PARTNER_PATHS.createPayment, { ...createBody, expiration: 60 })).json.data.external_reference;
    const status = async (reference: string) => (await c.api('GET', paymentPath(PARTNER_PATHS.getPayment, reference))).json.data.status;
    await c.control('POST', '/clock/advance', { seconds: 61 });
    assert.deepEqual([await status(late), await status(unpaid)], [3, 3], 'past the expiration, not canceled yet');
    assert.deepEqual((await c.control('POST', `/payments/${late}/pay`)).json, { reference: late, status: 2 }, 'an expired code is still payable');
    assert.equal(await status(late), 2);
    await c.control('POST', '/clock/advance', { seconds: 3600 });
    assert.equal(await status(unpaid), 4);
    // A payment given back after approval (the view's `returned`, set by whoever records returns) reads 6.
    const view = {
      id: 1,
      externalReference: late,
      value: 10,
      callback: null,
      status: 'approved' as const,
      pixKey: '000201',
      qrCodeUrl: '',
      checkout: '',
      favoured: 'Loja',
      partner: DEFAULT_ACCOUNT.partner,
      tenant: DEFAULT_ACCOUNT.tenant,
      createdAt: T0,
      expirationSeconds: 60,
    };
    const statusOf = (answer: { body?: unknown }) => (answer.body as { data: { status: number } }).data.status;
    assert.equal(statusOf(SANDBOX_DIALECTS.expiring.payment(view)), 2);
    assert.equal(statusOf(SANDBOX_DIALECTS.expiring.payment({ ...view, returned: true })), 6);
  });

  test('transfers read 11 pending, 12 approved; GET /_sandbox/dialect names both numberings and the setting to use', async () => {
    const transfer = await c.api('POST', PARTNER_PATHS.transferToKey, transferBody);
    assert.equal(transfer.status, 201, transfer.text);
    assert.equal(transfer.json.data.status, 11);
    const reference = transfer.json.data.external_reference;
    assert.deepEqual((await c.control('POST', `/transfers/${reference}/approve`)).json, { reference, status: 12 });
    assert.equal((await c.api('GET', paymentPath(PARTNER_PATHS.checkTransfer, reference))).json.data.status, 12);
    assert.deepEqual((await c.control('GET', '/dialect')).json, {
      name: 'expiring',
      status_codes: { pending: 1, approved: 2, canceled: 4 },
      transfer_status_codes: { pending: 11, approved: 12, canceled: 13 },
      setting: { payments: 'pending=1,approved=2,expired=3,canceled=4,returned=6', transfers: 'pending=11,approved=12,canceled=13' },
    });
  });
});
