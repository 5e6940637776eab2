/** A first look: the sandbox speaks the spec's headers and errors over real HTTPS. The conformance suite, section by section, is test/node/sandbox/*.test.ts. */
import assert from 'node:assert/strict';
import { Agent, request } from 'node:https';
import { after, before, describe, test } from 'node:test';
import { parseBrCode } from '../../../src/shared/brcode.ts';
import {
  CreatePartnerPaymentResponse,
  LoginResponse,
  PARTNER_PATHS,
  PARTNER_STATUS,
  PartnerErrorResponse,
  PartnerPaymentResponse,
  TenantResponse,
} from '../../../server/partner/wire.ts';
import { fillPath } from '../../../src/shared/wire.ts';
import { startSandbox, type RunningSandbox } from '../../../server/sandbox/server.ts';
import { DEFAULT_ACCOUNT } from '../../../server/sandbox/state.ts';

let sandbox: RunningSandbox;
let agent: Agent;
const UA = 'Loja Teste (dev@loja.example)';

before(async () => {
  sandbox = await startSandbox();
  agent = new Agent({ ca: sandbox.ca });
});
after(async () => {
  agent.destroy();
  await sandbox.close();
});

function send(method: string, path: string, headers: Record<string, string>, body?: string): Promise<{ status: number; json: unknown }> {
  return new Promise((resolve, reject) => {
    const req = request(new URL(path, sandbox.url), { method, headers, agent }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, json: text ? JSON.parse(text) : undefined }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

async function login(): Promise<string> {
  const res = await send(
    'POST',
    PARTNER_PATHS.login,
    { 'user-agent': UA, 'content-type': 'application/json' },
    JSON.stringify({ email: DEFAULT_ACCOUNT.email, access_key: DEFAULT_ACCOUNT.accessKey }),
  );
  assert.equal(res.status, 200);
  return LoginResponse.parse(res.json).data.access_token;
}

function authed(token: string) {
  return { 'user-agent': UA, 'content-type': 'application/json', authorization: `Bearer ${token}` };
}

describe('sandbox: authentication and headers', () => {
  test('wrong credentials are refused with 401', async () => {
    const res = await send(
      'POST',
      PARTNER_PATHS.login,
      { 'user-agent': UA, 'content-type': 'application/json' },
      JSON.stringify({ email: DEFAULT_ACCOUNT.email, access_key: 'wrong' }),
    );
    assert.equal(res.status, 401);
    assert.ok(PartnerErrorResponse.parse(res.json).message);
  });
  test('a missing or malformed User-Agent is refused with 400', async () => {
    for (const agentHeader of [undefined, 'curl/8.0', 'Loja (not-an-email)', ' (a@b.c)']) {
      const headers: Record<string, string> = { 'content-type': 'application/json' };
      if (agentHeader !== undefined) headers['user-agent'] = agentHeader;
      const res = await send('POST', PARTNER_PATHS.login, headers, '{}');
      assert.equal(res.status, 400, `User-Agent ${agentHeader}`);
      assert.match(PartnerErrorResponse.parse(res.json).message, /User-Agent/);
    }
  });
  test('no token, or an unknown one, is refused with 401', async () => {
    assert.equal((await send('GET', PARTNER_PATHS.getTenant, { 'user-agent': UA })).status, 401);
    assert.equal((await send('GET', PARTNER_PATHS.getTenant, { 'user-agent': UA, authorization: 'Bearer nope' })).status, 401);
  });
  test('a JSON body without Content-Type: application/json is refused with 415', async () => {
    const res = await send('POST', PARTNER_PATHS.login, { 'user-agent': UA, 'content-type': 'text/plain' }, '{}');
    assert.equal(res.status, 415);
  });
  test('invalid JSON is refused with 400', async () => {
    const res = await send('POST', PARTNER_PATHS.login, { 'user-agent': UA, 'content-type': 'application/json' }, '{');
    assert.equal(res.status, 400);
  });
});

describe('sandbox: payments', () => {
  test('creates a payment with a valid dynamic BR Code, readable in the record of section 2.1', async () => {
    const token = await login();
    const tenant = TenantResponse.parse((await send('GET', PARTNER_PATHS.getTenant, authed(token))).json).data;
    assert.match(tenant.id, /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    const created = await send(
      'POST',
      PARTNER_PATHS.createPayment,
      authed(token),
      JSON.stringify({ value: 10.5, tenant_id: tenant.id, description: 'Pedido' }),
    );
    assert.equal(created.status, 201);
    const data = CreatePartnerPaymentResponse.parse(created.json).data;
    const code = parseBrCode(data.pix_key);
    assert.ok(code.ok);
    assert.equal(code.ok && code.code.txid, '***');
    assert.equal(code.ok && code.code.locationUrl?.endsWith(data.external_reference), true);

    const read = await send('GET', fillPath(PARTNER_PATHS.getPayment, { external_reference: data.external_reference }), authed(token));
    assert.equal(read.status, 200);
    const record = PartnerPaymentResponse.parse(read.json).data;
    assert.equal(record.status, PARTNER_STATUS.pending);
    assert.equal(record.type, 'payment');
    assert.equal(record.value, 10.5);
    assert.equal(record.pix_deposit.pix_key, data.pix_key);
    assert.match(record.created_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
  });
  test('refuses a wrong tenant and broken rules with 422 naming the fields', async () => {
    const token = await login();
    const wrongTenant = await send('POST', PARTNER_PATHS.createPayment, authed(token), JSON.stringify({ value: 1, tenant_id: 'other' }));
    assert.equal(wrongTenant.status, 422);
    assert.ok(PartnerErrorResponse.parse(wrongTenant.json).errors?.tenant_id);
    const broken = await send(
      'POST',
      PARTNER_PATHS.createPayment,
      authed(token),
      JSON.stringify({ value: 0.1, tenant_id: DEFAULT_ACCOUNT.tenant.id, name: 'X' }),
    );
    assert.equal(broken.status, 422);
    assert.deepEqual(Object.keys(PartnerErrorResponse.parse(broken.json).errors ?? {}).sort(), ['document', 'value']);
  });
  test('an unknown reference is 404', async () => {
    const token = await login();
    const res = await send('GET', fillPath(PARTNER_PATHS.getPayment, { external_reference: 'nope' }), authed(token));
    assert.equal(res.status, 404);
  });
});
