/**
 * The proxy's browser API in open-amount mode (on in the dev stack, as for the demo) over a real
 * socket, against the sandbox over real HTTPS. Checkouts, the default mode, are in checkouts.test.ts.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { parseBrCode } from '../../../src/shared/brcode.ts';
import { PaymentView } from '../../../src/shared/contract.ts';
import { ErrorBody } from '../../../src/shared/errors.ts';
import { startDevStack, type DevStack } from '../../../server/dev-stack.ts';
import { createLogger } from '../../../server/log.ts';
import { DEFAULTS } from '../../../server/config/index.ts';
import { CANCELED_MARGIN_MS } from '../../../server/domain/numbering/status-numbering.ts';
import { DEFAULT_ACCOUNT } from '../../../server/sandbox/state.ts';
import { expectError } from '../../support/checks.ts';

let stack: DevStack;
const seen: string[] = [];

before(async () => {
  stack = await startDevStack();
});
after(async () => {
  await stack.close();
});

async function call(method: string, path: string, init: { body?: string; type?: string | null } = {}) {
  const headers: Record<string, string> = {};
  if (init.type !== null) headers['content-type'] = init.type ?? 'application/json';
  // In process, no socket: the proxy's routes and middleware are what is under test here.
  const res = await stack.app.request(`/api${path}`, { method, headers, body: init.body });
  const text = await res.text();
  seen.push(text, JSON.stringify([...res.headers]));
  return { res, text, json: text ? (JSON.parse(text) as unknown) : undefined };
}

async function create(body: unknown) {
  return call('POST', '/payments', { body: JSON.stringify(body) });
}

describe('creating a payment', () => {
  test('answers 201 with the view the browser needs and a valid BR Code', async () => {
    const { res, json } = await create({ value: 25.9, description: 'Pedido 1001' });
    assert.equal(res.status, 201);
    const view = PaymentView.parse(json);
    assert.equal(view.status, 'pending');
    assert.equal(view.value, 25.9);
    assert.equal(res.headers.get('location'), `/payments/${view.reference}`);
    const code = parseBrCode(view.brcode);
    assert.ok(code.ok, 'the code parses and its CRC checks');
    assert.equal(code.ok && code.code.dynamic, true);
    assert.equal(code.ok && code.code.amount, '25.90');
    assert.equal(Date.parse(view.expires_at) - Date.parse(view.created_at), 3600 * 1000);
    assert.ok(Math.abs(Date.parse(view.server_time) - Date.now()) < 60_000);
    // Every field of the contract but a checkout's `renewable`, and nothing beyond it.
    assert.deepEqual(
      Object.keys(json as object).sort(),
      Object.keys(PaymentView.shape)
        .filter((key) => key !== 'renewable')
        .sort(),
      'nothing beyond the contract',
    );
    assert.equal(view.favoured, DEFAULT_ACCOUNT.partner.name, 'who is being paid, from the create answer');
    assert.equal(view.paid_at, null);
    const text = JSON.stringify(json);
    for (const secret of [DEFAULT_ACCOUNT.tenant.id, DEFAULT_ACCOUNT.partner.document]) {
      assert.equal(text.includes(secret), false, 'no tenant or partner id reaches the browser');
    }
  });

  test('the QR image and hosted checkout URLs work', async () => {
    const view = PaymentView.parse((await create({ value: 3 })).json);
    const image = await fetch(view.qr_code_url);
    assert.equal(image.status, 200);
    assert.equal(image.headers.get('content-type'), 'image/svg+xml');
    assert.match(await image.text(), /^<svg/);
    const page = await fetch(view.checkout_url);
    assert.equal(page.status, 200);
    assert.ok((await page.text()).includes(view.brcode));
  });

  const invalid: [string, unknown, string][] = [
    ['value below 0.20', { value: 0.19 }, 'value'],
    ['value above 10,000.00', { value: 10_000.01 }, 'value'],
    ['value with fractions of a cent', { value: 1.001 }, 'value'],
    ['value as a string', { value: '10' }, 'value'],
    ['value missing', { description: 'x' }, 'value'],
    ['description of 51 characters', { value: 1, description: 'd'.repeat(51) }, 'description'],
    // Customer data travels server to server only (checkouts), never from the browser.
    ['a customer name', { value: 1, name: 'Maria' }, 'name'],
    ['a customer document', { value: 1, name: 'Maria', document: '52998224725' }, 'document'],
    ['a callback', { value: 1, callback: 'https://shop.example/thanks' }, 'callback'],
    ['unknown field', { value: 1, tenant_id: 'x' }, 'tenant_id'],
    ['a JSON array', [1, 2], 'body'],
    ['a JSON string', 'hello', 'body'],
    ['JSON null', null, 'body'],
  ];
  for (const [label, body, field] of invalid) {
    test(`${label}: 400 invalid_request naming ${field}`, async () => {
      const error = expectError(await create(body), 400, 'invalid_request');
      assert.ok(error.fields && field in error.fields, `fields name ${field}: ${JSON.stringify(error.fields)}`);
    });
  }

  test('at the bounds: 0.20 and 10,000.00 are accepted', async () => {
    assert.equal((await create({ value: 0.2 })).res.status, 201);
    assert.equal((await create({ value: 10_000 })).res.status, 201);
  });

  test('invalid JSON: 400 invalid_json', async () => {
    expectError(await call('POST', '/payments', { body: '{"value": 1' }), 400, 'invalid_json');
  });

  test('a body that is not JSON: 415', async () => {
    expectError(await call('POST', '/payments', { body: 'value=1', type: 'application/x-www-form-urlencoded' }), 415, 'unsupported_media_type');
    expectError(await call('POST', '/payments', { body: '{"value":1}', type: null }), 415, 'unsupported_media_type');
  });

  test('a huge body: 413', async () => {
    expectError(await create({ value: 1, description: 'x'.repeat(100_000) }), 413, 'payload_too_large');
  });

  test('a huge body sent in chunks, with no Content-Length: 413 without reading it all', async () => {
    let sent = 0;
    const chunk = new TextEncoder().encode(`"${'x'.repeat(1022)}",`);
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode('{"value":1,"padding":['));
      },
      pull(controller) {
        // Would go on for 10 MB if the proxy kept reading.
        if (sent > 10_000_000) return controller.close();
        sent += chunk.byteLength;
        controller.enqueue(chunk);
      },
    });
    const res = await fetch(`${stack.apiUrl}/payments`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body,
      duplex: 'half',
    } as RequestInit);
    assert.equal(res.status, 413);
    assert.equal(ErrorBody.parse(await res.json()).error.code, 'payload_too_large');
    assert.ok(sent < 10_000_000, `stopped early (sent ${sent} bytes)`);
  });

  test('a body that is not UTF-8: 400 invalid_json', async () => {
    const res = await fetch(`${stack.apiUrl}/payments`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: new Uint8Array([0x7b, 0xff, 0xfe, 0x7d]),
    });
    assert.equal(res.status, 400);
    assert.equal(ErrorBody.parse(await res.json()).error.code, 'invalid_json');
  });
});

describe('reading a payment', () => {
  test('follows the sandbox: pending, then paid', async () => {
    const created = PaymentView.parse((await create({ value: 12.34 })).json);
    const pending = await call('GET', `/payments/${created.reference}`, { type: null });
    assert.equal(pending.res.status, 200);
    assert.equal(pending.res.headers.get('cache-control'), 'no-store');
    assert.equal(PaymentView.parse(pending.json).status, 'pending');

    const pay = await fetch(`${stack.url}/sandbox/_sandbox/payments/${created.reference}/pay`, { method: 'POST' });
    assert.equal(pay.status, 200);
    // Reads are served from the store; the partner is asked again once the record is stale.
    const cached = PaymentView.parse((await call('GET', `/payments/${created.reference}`, { type: null })).json);
    assert.equal(cached.status, 'pending', 'within the staleness window the stored status is served');
    stack.sandbox.state.clock.advance(DEFAULTS.staleAfterMs);
    const paid = PaymentView.parse((await call('GET', `/payments/${created.reference}`, { type: null })).json);
    assert.equal(paid.status, 'paid');
    assert.equal(paid.brcode, created.brcode);
    assert.equal(paid.expires_at, created.expires_at);
  });

  test('an unpaid payment shows expired after its expiration, canceled one hour later', async () => {
    const created = PaymentView.parse((await create({ value: 1 })).json);
    const read = async () => PaymentView.parse((await call('GET', `/payments/${created.reference}`, { type: null })).json).status;
    stack.sandbox.state.clock.advance(3600 * 1000 - 5_000);
    assert.equal(await read(), 'pending');
    stack.sandbox.state.clock.advance(5_000);
    assert.equal(await read(), 'expired');
    stack.sandbox.state.clock.advance(3600 * 1000 - 1_000);
    assert.equal(await read(), 'expired');
    // Canceled upstream one second later; the proxy asks again once its record is stale. On this fresh
    // install no canceled code has proved itself yet: it does once read well past the cancellation
    // hour (proofWindows, a margin), and the payment is shown canceled then.
    stack.sandbox.state.clock.advance(DEFAULTS.staleAfterMs);
    assert.equal(await read(), 'expired');
    stack.sandbox.state.clock.advance(CANCELED_MARGIN_MS);
    assert.equal(await read(), 'canceled');
  });

  test('a payment the partner has but this proxy did not issue: 404 not_found', async () => {
    const other = await stack.partner.createPayment({ value: 2 });
    expectError(await call('GET', `/payments/${other.externalReference}`, { type: null }), 404, 'not_found');
  });

  test('an unknown reference: 404 not_found', async () => {
    expectError(await call('GET', '/payments/doesnotexist', { type: null }), 404, 'not_found');
  });

  test('a malformed reference: 400 invalid_reference; an unusual but well-formed one is just not found', async () => {
    const error = expectError(await call('GET', '/payments/a%0Ab', { type: null }), 400, 'invalid_reference');
    assert.ok(error.fields?.reference);
    expectError(await call('GET', `/payments/${'a'.repeat(201)}`, { type: null }), 400, 'invalid_reference');
    expectError(await call('GET', '/payments/%20ab', { type: null }), 400, 'invalid_reference');
    // Any text the partner might use is a reference: encoded in the path, looked up, not found.
    expectError(await call('GET', '/payments/a%20b%2F..', { type: null }), 404, 'not_found');
  });

  test('a wrong method: 405 with Allow', async () => {
    const result = await call('DELETE', '/payments/abc', { type: null });
    expectError(result, 405, 'method_not_allowed');
    assert.equal(result.res.headers.get('allow'), 'GET');
    expectError(await call('GET', '/payments', { type: null }), 405, 'method_not_allowed');
  });

  test('an unknown path: 404 in the same error shape', async () => {
    expectError(await call('GET', '/nothing/here', { type: null }), 404, 'not_found');
  });
});

describe('CORS', () => {
  test('an allowed origin gets the CORS headers on a preflight', async () => {
    const res = await fetch(`${stack.apiUrl}/payments`, {
      method: 'OPTIONS',
      headers: { origin: 'http://shop.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type' },
    });
    assert.equal(res.status, 204);
    assert.equal(res.headers.get('access-control-allow-origin'), 'http://shop.example');
  });
});

describe('when the partner service is down', () => {
  test('answers 503 upstream_unavailable, without details, and stays up', async () => {
    const logged: string[] = [];
    const local = await startDevStack({ logger: createLogger({ level: 'debug', destination: { write: (line: string) => void logged.push(line) } }) });
    try {
      const ok = await fetch(`${local.apiUrl}/payments`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"value":1}' });
      assert.equal(ok.status, 201, 'logged in and created while the sandbox was up');
      await local.sandbox.close();
      const res = await fetch(`${local.apiUrl}/payments`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ value: 1 }),
      });
      assert.equal(res.status, 503);
      const body = ErrorBody.parse(await res.json());
      assert.equal(body.error.code, 'upstream_unavailable');
      assert.doesNotMatch(body.error.message, /127\.0\.0\.1|ECONNREFUSED|https:/);
      // A create's failure is logged once, as such (a refused connection at warn; a reset may have reached the partner).
      assert.ok(
        logged.some((line) =>
          ['payment not created: the request never reached the partner service', 'payment creation outcome unknown: reconcile by transaction_id'].includes(
            JSON.parse(line).msg,
          ),
        ),
        'the cause is logged',
      );
      const health = await fetch(`${local.url}/health`);
      assert.equal(health.status, 200, 'alive');
      const ready = await fetch(`${local.url}/ready`);
      assert.equal(ready.status, 503, 'but not ready');
      assert.equal(ErrorBody.parse(await ready.json()).error.code, 'not_ready');
    } finally {
      await local.close();
    }
    const secrets = [...local.sandbox.state.tokens, DEFAULT_ACCOUNT.accessKey, '52998224725'];
    for (const line of logged) for (const secret of secrets) assert.equal(line.includes(secret), false, 'no secret in a log line');
  });
});

describe('secrets', () => {
  test('no issued token ever appeared in a response of this suite', () => {
    assert.ok(seen.length > 20);
    const tokens = [...stack.sandbox.state.tokens];
    assert.ok(tokens.length > 0, 'the proxy did log in');
    for (const text of seen) {
      for (const token of tokens) assert.equal(text.includes(token), false);
      assert.equal(text.includes(DEFAULT_ACCOUNT.accessKey), false);
    }
  });
});
