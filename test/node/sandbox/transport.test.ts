/**
 * Conformance, transport and authentication: spec 1 (HTTPS only, JSON with Content-Type), 4 (the
 * common headers), 4.2 and 5 (login, the token and its 5-year lifetime) and 7 (error bodies), against
 * the sandbox over real HTTPS.
 */
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { LIMITS } from '../../../src/shared/limits.ts';
import { LoginResponse, PARTNER_PATHS, PartnerErrorResponse } from '../../../server/partner/wire.ts';
import { DEFAULT_ACCOUNT } from '../../../server/sandbox/state.ts';
import { PLAIN_HTTP_REFUSAL } from '../../../server/sandbox/transport.ts';
import { T0, TIMESTAMP_PATTERN, startHarness, type Harness } from '../../support/sandbox-harness.ts';

let h: Harness;
before(async () => {
  h = await startHarness();
});
after(() => h.close());

const credentials = { email: DEFAULT_ACCOUNT.email, access_key: DEFAULT_ACCOUNT.accessKey };

function assertError(res: { status: number; json: unknown; text: string }, status: number, pattern?: RegExp) {
  assert.equal(res.status, status, res.text);
  const body = PartnerErrorResponse.parse(res.json);
  if (pattern) assert.match(body.message, pattern);
  return body;
}

/** Sends raw bytes to the sandbox's port and reads until it hangs up. */
function raw(bytes: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const url = new URL(h.sandbox.url);
    const socket = connect(Number(url.port), url.hostname, () => socket.end(bytes));
    let text = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (text += chunk));
    socket.on('close', () => resolve(text));
    socket.on('error', reject);
  });
}

describe('1 HTTPS only', () => {
  test('plain HTTP on the same port is refused with a clear answer', async () => {
    const res = await fetch(h.sandbox.url.replace('https:', 'http:') + PARTNER_PATHS.getTenant);
    assert.equal(res.status, PLAIN_HTTP_REFUSAL.status);
    assert.deepEqual(await res.json(), { message: 'HTTPS is required.' });
  });

  test('plain HTTP to a control path is refused too, and the login body is never read', async () => {
    const answer = await raw(`POST ${PARTNER_PATHS.login} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}`);
    assert.match(answer, /^HTTP\/1\.1 403 /);
    assert.match(answer, /HTTPS is required/);
  });

  test('bytes that are neither TLS nor HTTP get a 400 and a closed connection, and the sandbox stays up', async () => {
    const answer = await raw('\x00\x01\x02 garbage\r\n\r\n');
    assert.match(answer, /^HTTP\/1\.1 400 /);
    assert.equal((await h.api('GET', PARTNER_PATHS.getTenant)).status, 200);
  });

  test("the certificate is for localhost and 127.0.0.1, trusted through the sandbox's ca", async () => {
    const res = await h.api('GET', PARTNER_PATHS.getTenant);
    assert.equal(res.status, 200);
  });
});

describe('4 common headers', () => {
  test('User-Agent: missing or not "Company (contact@example.com)" is 400 naming the header', async () => {
    for (const agent of [null, 'curl/8.0', 'Loja (not-an-email)', ' (a@b.c)', 'Loja a@b.c', 'Loja (a@b)', 'Loja (a@b.c) extra']) {
      const res = await h.api('GET', PARTNER_PATHS.getTenant, { headers: { 'user-agent': agent } });
      assertError(res, 400, /User-Agent/);
    }
    for (const agent of ['Loja (a@b.co)', 'Minha Loja LTDA (contato@loja.com.br)']) {
      assert.equal((await h.api('GET', PARTNER_PATHS.getTenant, { headers: { 'user-agent': agent } })).status, 200, agent);
    }
  });

  test('User-Agent is required on login too', async () => {
    assertError(await h.api('POST', PARTNER_PATHS.login, { token: false, body: credentials, headers: { 'user-agent': null } }), 400, /User-Agent/);
  });

  test('Authorization: missing, not Bearer, or an unknown token is 401', async () => {
    for (const authorization of [null, 'Basic abc', 'Bearer', 'Bearer ', `bearer ${h.token}`, `Bearer ${h.token} x`, 'Bearer nope']) {
      const res = await h.api('GET', PARTNER_PATHS.getTenant, { headers: { authorization } });
      assertError(res, 401, /Unauthenticated/);
    }
  });

  test('every endpoint but login needs the token', async () => {
    const paths: [string, string][] = [
      ['GET', PARTNER_PATHS.getTenant],
      ['POST', PARTNER_PATHS.createPayment],
      ['GET', '/api/v2/wallet/partner/transactions/x'],
      ['HEAD', '/api/v2/wallet/partner/transactions/x/check'],
      ['POST', PARTNER_PATHS.solicitTransferForCustomer],
      ['POST', PARTNER_PATHS.transferToKey],
      ['GET', '/api/v2/wallet/partner/transfers/x/check'],
      ['PATCH', PARTNER_PATHS.notificationUrl],
    ];
    for (const [method, path] of paths) assert.equal((await h.api(method, path, { token: false, body: {} })).status, 401, `${method} ${path}`);
  });

  test('a JSON body needs Content-Type: application/json (415 otherwise); charset is fine', async () => {
    const body = JSON.stringify(credentials);
    for (const type of [null, 'text/plain', 'application/x-www-form-urlencoded', 'application/jsonp']) {
      assertError(await h.api('POST', PARTNER_PATHS.login, { token: false, raw: body, headers: { 'content-type': type } }), 415, /Content-Type/);
    }
    const ok = await h.api('POST', PARTNER_PATHS.login, { token: false, raw: body, headers: { 'content-type': 'application/json; charset=utf-8' } });
    assert.equal(ok.status, 200);
  });
});

describe('4.2 / 5 login and the access token', () => {
  test('the right e-mail and access_key give a Bearer token, valid 5 years', async () => {
    const res = await h.api('POST', PARTNER_PATHS.login, { token: false, body: credentials });
    assert.equal(res.status, 200);
    const data = LoginResponse.parse(res.json).data;
    assert.equal(data.token_type, 'Bearer');
    assert.match(data.expires_at!, TIMESTAMP_PATTERN);
    const lifetime = Date.parse(data.expires_at!) - h.sandbox.state.clock.now();
    assert.equal(lifetime, LIMITS.tokenLifetimeSeconds * 1000);
    assert.equal((await h.api('GET', PARTNER_PATHS.getTenant, { token: data.access_token })).status, 200);
  });

  test('wrong credentials: 401, without echoing them', async () => {
    for (const body of [
      { ...credentials, access_key: 'wrong-key' },
      { ...credentials, email: 'other@example.com' },
    ]) {
      const res = await h.api('POST', PARTNER_PATHS.login, { token: false, body });
      assertError(res, 401, /Invalid credentials/);
      assert.equal(res.text.includes('wrong-key'), false);
    }
  });

  test('a login body missing fields, with wrong types or unknown fields: 422 naming them', async () => {
    const cases: [unknown, string[]][] = [
      [{}, ['access_key', 'email']],
      [{ email: 1, access_key: true }, ['access_key', 'email']],
      [{ ...credentials, remember: true }, ['remember']],
      [{ email: '', access_key: '' }, ['access_key', 'email']],
    ];
    for (const [body, fields] of cases) {
      const res = await h.api('POST', PARTNER_PATHS.login, { token: false, body });
      const error = assertError(res, 422);
      assert.deepEqual(Object.keys(error.errors ?? {}).sort(), fields);
    }
  });

  test('the token expires after exactly 5 years of sandbox time', async () => {
    const own = await startHarness();
    try {
      const lifetime = LIMITS.tokenLifetimeSeconds;
      await own.advance(lifetime - 0.001);
      assert.equal((await own.api('GET', PARTNER_PATHS.getTenant)).status, 200, '1 ms before 5 years');
      await own.advance(0.001);
      assertError(await own.api('GET', PARTNER_PATHS.getTenant), 401, /expired/);
      const again = await own.api('POST', PARTNER_PATHS.login, { token: false, body: credentials });
      assert.equal((await own.api('GET', PARTNER_PATHS.getTenant, { token: LoginResponse.parse(again.json).data.access_token })).status, 200);
      assert.equal(own.sandbox.state.clock.now(), T0 + lifetime * 1000);
    } finally {
      await own.close();
    }
  });
});

describe('7 errors', () => {
  test('invalid JSON, a body that is not UTF-8 and an empty body: 400', async () => {
    for (const raw of ['{', '{"email":', Buffer.from([0x7b, 0xff, 0xfe, 0x7d]), '']) {
      assertError(await h.api('POST', PARTNER_PATHS.login, { token: false, raw, headers: { 'content-type': 'application/json' } }), 400, /JSON/);
    }
  });

  test('a body over 64 KiB: 413, with or without Content-Length', async () => {
    const big = JSON.stringify({ ...credentials, pad: 'x'.repeat(70_000) });
    assertError(await h.api('POST', PARTNER_PATHS.login, { token: false, raw: big }), 413);
    assertError(await h.api('POST', PARTNER_PATHS.login, { token: false, raw: big, headers: { 'content-length': null, 'transfer-encoding': 'chunked' } }), 413);
  });

  test('an unknown path is 404 and a wrong method 405 with Allow, in the error shape', async () => {
    assertError(await h.api('GET', '/api/v2/nothing'), 404);
    assertError(await h.api('GET', '/'), 404);
    const wrong: [string, string, string][] = [
      ['GET', PARTNER_PATHS.login, 'POST'],
      ['POST', PARTNER_PATHS.getTenant, 'GET'],
      ['GET', PARTNER_PATHS.createPayment, 'POST'],
      ['DELETE', '/api/v2/wallet/partner/transactions/x', 'GET'],
      ['GET', PARTNER_PATHS.solicitTransferForCustomer, 'POST'],
      ['PUT', PARTNER_PATHS.transferToKey, 'POST'],
      ['POST', '/api/v2/wallet/partner/transfers/x/check', 'GET'],
      ['POST', PARTNER_PATHS.notificationUrl, 'PATCH'],
    ];
    for (const [method, path, allow] of wrong) {
      const res = await h.api(method, path, { body: {} });
      assertError(res, 405);
      assert.equal(res.headers.allow, allow, `${method} ${path}`);
    }
  });
});
