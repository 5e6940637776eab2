/**
 * The merchant webhook in one call (server/merchant/webhook-events.ts): constructEvent on signed
 * bodies, webhookHandler in a real node:http server (reading the stream itself, or a body a framework
 * already read), webhookFetchHandler on Requests and in Hono, and real deliveries from the proxy over
 * the sandbox to a webhookHandler. Real sockets on 127.0.0.1, port 0; everything stopped in `after`.
 */
import assert from 'node:assert/strict';
import { createServer, request as httpRequest, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { Hono } from 'hono';
import { CheckoutView, PaymentView, type OutcomeEvent } from '../../../src/shared/contract.ts';
import { signWebhook } from '../../../server/domain/signature.ts';
import { startDevStack, type DevStack } from '../../../server/dev-stack.ts';
import { createLogger } from '../../../server/log.ts';
import {
  WebhookVerificationError,
  constructEvent,
  verifyWebhookSignature,
  webhookFetchHandler,
  webhookHandler,
  type NodeWebhookHandler,
  type WebhookRequest,
} from '../../../server/merchant/webhook-events.ts';
import { stackControl, waitFor } from '../../support/checks.ts';

const SECRET = 'whsec_merchant_0123456789abcdef0123456789abcdef';
const NOW = Date.UTC(2030, 0, 1, 12);

const paid: OutcomeEvent = {
  id: 'evt_0123456789abcdef0123456789abcdef',
  type: 'payment.paid',
  created_at: '2030-01-01T12:00:00.000Z',
  data: { reference: 'ref-1', status: 'paid', value: 49.9, checkout_id: 'co_AAAAAAAAAAAAAAAAAAAAAAAA', order_id: 'order-1' },
};
const refused: OutcomeEvent = {
  id: 'evt_fedcba9876543210fedcba9876543210',
  type: 'transfer.refused',
  created_at: '2030-01-01T12:00:01.000Z',
  data: {
    reference: 'tr-ref-1',
    status: 'refused',
    value: 10,
    checkout_id: null,
    order_id: null,
    transfer_id: 'tr_1',
    transfer_reference: 'payout-7',
    reason: 'kyc_not_approved',
  },
};
const body = JSON.stringify(paid);

/** The headers a delivery carries, signed at `at` (default NOW). */
const signed = (raw: string, at = NOW, secret = SECRET) => ({
  'content-type': 'application/json',
  'pix-checkout-event-id': paid.id,
  'pix-checkout-signature': signWebhook(raw, secret, at),
});

/** The WebhookVerificationError `run` throws; fails on anything else. */
function refusal(run: () => unknown): WebhookVerificationError {
  try {
    run();
  } catch (error) {
    assert.ok(error instanceof WebhookVerificationError, `a WebhookVerificationError, got ${String(error)}`);
    return error;
  }
  assert.fail('expected a WebhookVerificationError');
}

describe('constructEvent', () => {
  test('a good signature: the event, typed and as sent', () => {
    const event = constructEvent(body, signed(body), SECRET, { now: NOW });
    assert.deepEqual(event, paid);
  });

  test('a Buffer body and a fetch Headers give the same event', () => {
    const headers = new Headers(signed(body));
    assert.deepEqual(constructEvent(Buffer.from(body, 'utf8'), headers, SECRET, { now: NOW }), paid);
  });

  test('a plain object in any case, with array values (node:http repeats), is read case-insensitively', () => {
    const signature = signWebhook(body, SECRET, NOW);
    assert.deepEqual(constructEvent(body, { 'Pix-Checkout-Signature': [signature], 'x-other': undefined }, SECRET, { now: NOW }), paid);
    assert.deepEqual(constructEvent(body, { 'PIX-CHECKOUT-SIGNATURE': signature }, SECRET, { now: NOW }), paid);
    // Two signatures (a secret being rotated): either v1 may match.
    const other = signWebhook(body, 'another-secret-0123456789abcdef0123456789', NOW);
    assert.deepEqual(constructEvent(body, { 'pix-checkout-signature': [other, signature] }, SECRET, { now: NOW }), paid);
  });

  test('a transfer outcome with its transfer fields passes', () => {
    const raw = JSON.stringify(refused);
    const event = constructEvent(raw, signed(raw), SECRET, { now: NOW });
    assert.equal(event.type, 'transfer.refused');
    assert.deepEqual([event.data.transfer_id, event.data.transfer_reference, event.data.reason], ['tr_1', 'payout-7', 'kyc_not_approved']);
  });

  test('fields a newer proxy adds are let through, not refused', () => {
    const raw = JSON.stringify({ ...paid, livemode: false, data: { ...paid.data, extra: 1 } });
    assert.equal(constructEvent(raw, signed(raw), SECRET, { now: NOW }).id, paid.id);
  });

  test('a tampered body: invalid_signature', () => {
    const headers = signed(body);
    const error = refusal(() => constructEvent(body.replace('49.9', '4990'), headers, SECRET, { now: NOW }));
    assert.equal(error.code, 'invalid_signature');
    assert.equal(refusal(() => constructEvent(`${body} `, headers, SECRET, { now: NOW })).code, 'invalid_signature');
  });

  test('another secret: invalid_signature, and the message names no secret', () => {
    const error = refusal(() => constructEvent(body, signed(body), 'whsec_wrong_0123456789abcdef0123456789abcdef', { now: NOW }));
    assert.equal(error.code, 'invalid_signature');
    assert.doesNotMatch(error.message, /whsec/);
  });

  test('an old or future timestamp, rightly signed: timestamp_out_of_window; within the tolerance: accepted', () => {
    const headers = signed(body, NOW - 301_000);
    const old = refusal(() => constructEvent(body, headers, SECRET, { now: NOW }));
    assert.equal(old.code, 'timestamp_out_of_window');
    assert.match(old.message, /301 s/);
    assert.equal(refusal(() => constructEvent(body, signed(body, NOW + 400_000), SECRET, { now: NOW })).code, 'timestamp_out_of_window');
    assert.equal(constructEvent(body, signed(body, NOW - 299_000), SECRET, { now: NOW }).id, paid.id);
    assert.equal(constructEvent(body, headers, SECRET, { now: NOW, toleranceSeconds: 600 }).id, paid.id, 'a wider tolerance');
  });

  test('an old timestamp with a wrong HMAC is invalid_signature, never out of window', () => {
    const headers = signed(body, NOW - 3600_000, 'whsec_forger_0123456789abcdef0123456789abcdef');
    assert.equal(refusal(() => constructEvent(body, headers, SECRET, { now: NOW })).code, 'invalid_signature');
  });

  test('a missing or empty header: missing_signature; a malformed one: invalid_signature', () => {
    assert.equal(refusal(() => constructEvent(body, {}, SECRET, { now: NOW })).code, 'missing_signature');
    assert.equal(refusal(() => constructEvent(body, new Headers(), SECRET, { now: NOW })).code, 'missing_signature');
    assert.equal(refusal(() => constructEvent(body, { 'pix-checkout-signature': '' }, SECRET, { now: NOW })).code, 'missing_signature');
    assert.equal(refusal(() => constructEvent(body, { 'pix-checkout-signature': [] }, SECRET, { now: NOW })).code, 'missing_signature');
    for (const bad of ['garbage', `t=${NOW / 1000}`, 'v1=abc', 't=x,v1=abc']) {
      assert.equal(refusal(() => constructEvent(body, { 'pix-checkout-signature': bad }, SECRET, { now: NOW })).code, 'invalid_signature', bad);
    }
  });

  test('a signed body that is not JSON, or not an outcome event: invalid_payload naming the field', () => {
    const notJson = 'not json';
    assert.equal(refusal(() => constructEvent(notJson, signed(notJson), SECRET, { now: NOW })).code, 'invalid_payload');
    const wrong = JSON.stringify({ ...paid, type: 'payment.refunded' });
    const error = refusal(() => constructEvent(wrong, signed(wrong), SECRET, { now: NOW }));
    assert.equal(error.code, 'invalid_payload');
    assert.match(error.message, /type is not one of the accepted values/);
    const noData = JSON.stringify({ id: 'evt_1' });
    assert.match(refusal(() => constructEvent(noData, signed(noData), SECRET, { now: NOW })).message, /data is required/);
  });

  test('misuse is a TypeError: an empty secret, a parsed body', () => {
    assert.throws(() => constructEvent(body, signed(body), ''), TypeError);
    assert.throws(() => constructEvent(paid as unknown as string, signed(body), SECRET), /raw body/);
  });

  test('missing is missing: a secret, body, headers or handler not set says so, naming the variable', () => {
    // The merchant's server did not load .env: `process.env.PIX_MERCHANT_WEBHOOK_SECRET` is undefined.
    const env: Record<string, string | undefined> = {};
    const unset = env.PIX_MERCHANT_WEBHOOK_SECRET!;
    const secret = /: secret is not set \(PIX_MERCHANT_WEBHOOK_SECRET, .*node --env-file=\.env\)$/;
    const onEvent = () => {};
    for (const [where, run] of [
      ['constructEvent', () => constructEvent(body, signed(body), unset)],
      ['webhookHandler', () => webhookHandler(unset, onEvent)],
      ['webhookFetchHandler', () => webhookFetchHandler(unset, onEvent)],
      ['verifyWebhookSignature', () => verifyWebhookSignature(body, signed(body)['pix-checkout-signature'], unset, { now: NOW })],
    ] as const) {
      assert.throws(run, (error: Error) => error instanceof TypeError && error.message.startsWith(`${where}: `) && secret.test(error.message), where);
    }
    assert.throws(() => constructEvent(body, signed(body), ''), secret, 'an empty line is not set either');
    assert.throws(() => constructEvent(undefined as unknown as string, signed(body), SECRET), /^TypeError: constructEvent: rawBody is not set \(/);
    assert.throws(() => constructEvent(body, undefined as unknown as Headers, SECRET), /^TypeError: constructEvent: headers is not set \(/);
    assert.throws(() => webhookHandler(SECRET, undefined as unknown as typeof onEvent), /^TypeError: webhookHandler: onEvent is not set \(/);
    assert.throws(() => webhookFetchHandler(SECRET, undefined as unknown as typeof onEvent), /^TypeError: webhookFetchHandler: onEvent is not set \(/);
    // An empty body is a delivery to refuse, not an option not set.
    assert.equal(refusal(() => constructEvent('', signed(''), SECRET, { now: NOW })).code, 'invalid_payload');
    // Set, the check answers as before.
    assert.equal(verifyWebhookSignature(body, signed(body)['pix-checkout-signature'], SECRET, { now: NOW }), true);
    assert.equal(verifyWebhookSignature(body, 'garbage', SECRET, { now: NOW }), false);
  });
});

/** A real node:http server; `route` receives each request. */
async function listen(route: (req: IncomingMessage, res: ServerResponse) => void): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = createServer(route);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks/pix`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

async function post(url: string, raw: string | Buffer, headers: Record<string, string> = signed(String(raw), Date.now())) {
  const res = await fetch(url, { method: 'POST', headers, body: typeof raw === 'string' ? raw : new Uint8Array(raw) });
  const text = await res.text();
  const json: any = JSON.parse(text);
  return { status: res.status, json };
}

describe('webhookHandler in node:http', () => {
  const events: OutcomeEvent[] = [];
  const errors: unknown[] = [];
  let failNext = false;
  let server: Awaited<ReturnType<typeof listen>>;
  const handler = webhookHandler(
    SECRET,
    async (event) => {
      await new Promise((resolve) => setTimeout(resolve, 1));
      if (failNext) {
        failNext = false;
        throw new Error('database down');
      }
      events.push(event);
    },
    { onError: (error) => errors.push(error) },
  );

  before(async () => {
    server = await listen((req, res) => handler(req, res));
  });
  after(async () => {
    await server.close();
  });

  test('a signed delivery: 200 {received:true}, onEvent awaited with the event', async () => {
    const answer = await post(server.url, body);
    assert.deepEqual(answer, { status: 200, json: { received: true } });
    assert.deepEqual(events.at(-1), paid);
  });

  test('a refused delivery: 400 with the code and a message, onEvent not called', async () => {
    const before = events.length;
    const tampered = await post(server.url, body.replace('order-1', 'order-2'), signed(body, Date.now()));
    assert.equal(tampered.status, 400);
    assert.equal(tampered.json.error.code, 'invalid_signature');
    assert.ok(tampered.json.error.message.length > 0, 'a message');
    const unsigned = await post(server.url, body, { 'content-type': 'application/json' });
    assert.deepEqual([unsigned.status, unsigned.json.error.code], [400, 'missing_signature']);
    const old = await post(server.url, body, signed(body, Date.now() - 3600_000));
    assert.deepEqual([old.status, old.json.error.code], [400, 'timestamp_out_of_window']);
    assert.equal(events.length, before);
  });

  test('onEvent throws: 500 (the proxy delivers it again), the error goes to onError, not to the answer', async () => {
    failNext = true;
    const answer = await post(server.url, body);
    assert.equal(answer.status, 500);
    assert.equal(answer.json.error.code, 'internal');
    assert.doesNotMatch(JSON.stringify(answer.json), /database down/);
    assert.equal((errors.at(-1) as Error).message, 'database down');
    assert.deepEqual(await post(server.url, body), { status: 200, json: { received: true } }, 'the retry is handled');
  });

  test('a body over the limit: 413, whether declared or streamed in chunks', async () => {
    const big = Buffer.alloc(300 * 1024, 'a');
    const declared = await post(server.url, big, { 'content-type': 'application/json', 'pix-checkout-signature': 't=1,v1=00' });
    assert.deepEqual([declared.status, declared.json.error.code], [413, 'payload_too_large']);
    // Chunked, no length announced: cut off while reading.
    const streamed = await new Promise<{ status: number; text: string }>((resolve, reject) => {
      const req = httpRequest(server.url, { method: 'POST', headers: { 'content-type': 'application/json', 'transfer-encoding': 'chunked' } }, (res) => {
        let text = '';
        res.on('data', (chunk: Buffer) => (text += String(chunk)));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      });
      req.on('error', reject);
      for (let i = 0; i < 5; i++) req.write(Buffer.alloc(64 * 1024, 'a'));
      req.end();
    });
    assert.equal(streamed.status, 413);
    assert.equal(JSON.parse(streamed.text).error.code, 'payload_too_large');
  });

  test('another method: 405 with Allow: POST; with a next (Express middleware), next() instead', async () => {
    const res = await fetch(server.url);
    assert.equal(res.status, 405);
    assert.equal(res.headers.get('allow'), 'POST');
    const nexts: unknown[] = [];
    const front = await listen((req, res) =>
      handler(req, res, (error?: unknown) => {
        nexts.push(error);
        res.writeHead(204).end();
      }),
    );
    try {
      assert.equal((await fetch(front.url)).status, 204);
      assert.deepEqual(nexts, [undefined]);
    } finally {
      await front.close();
    }
  });
});

describe('webhookHandler after a framework read the body', () => {
  const events: OutcomeEvent[] = [];
  const errors: unknown[] = [];
  const handler: NodeWebhookHandler = webhookHandler(SECRET, (event) => void events.push(event), { onError: (error) => errors.push(error) });

  /** What a body parser does before the handler runs: reads the stream, then sets `req[field]`. */
  async function after_(read: (raw: Buffer) => Partial<WebhookRequest>) {
    return listen((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => handler(Object.assign(req, read(Buffer.concat(chunks))), res));
    });
  }

  test('a Buffer req.body (express.raw()), a string req.body (express.text()), a req.rawBody beside a parsed body', async () => {
    for (const read of [
      (raw: Buffer) => ({ body: raw }),
      (raw: Buffer) => ({ body: raw.toString('utf8') }),
      (raw: Buffer) => ({ rawBody: raw, body: JSON.parse(raw.toString('utf8')) }),
    ]) {
      const server = await after_(read);
      try {
        const before = events.length;
        assert.deepEqual(await post(server.url, body), { status: 200, json: { received: true } });
        assert.equal(events.length, before + 1);
        assert.equal(events.at(-1)!.id, paid.id);
        const tampered = await post(server.url, body.replace('49.9', '1'), signed(body, Date.now()));
        assert.deepEqual([tampered.status, tampered.json.error.code], [400, 'invalid_signature']);
      } finally {
        await server.close();
      }
    }
  });

  test('a body parsed to an object (express.json() first): 500 saying so, told to onError', async () => {
    const server = await after_((raw) => ({ body: JSON.parse(raw.toString('utf8')) }));
    try {
      const answer = await post(server.url, body);
      assert.equal(answer.status, 500);
      assert.match(answer.json.error.message, /before any JSON body parser/);
      assert.match(String(errors.at(-1)), /body parser/);
    } finally {
      await server.close();
    }
  });

  test('express.json() that skipped the body (req.body = {}, stream unread): the stream is read', async () => {
    const server = await listen((req, res) => handler(Object.assign(req, { body: {} }), res));
    try {
      assert.deepEqual(await post(server.url, body), { status: 200, json: { received: true } });
    } finally {
      await server.close();
    }
  });
});

describe('webhookFetchHandler', () => {
  const events: OutcomeEvent[] = [];
  const handler = webhookFetchHandler(SECRET, (event) => void events.push(event), { now: NOW, onError: () => undefined });
  const request = (raw: string, headers: Record<string, string> = signed(raw), method = 'POST') =>
    new Request('http://shop.example/hooks/pix', { method, headers, body: method === 'POST' ? raw : undefined });

  test('a signed Request: 200 {received:true}; a tampered one: 400 with its code', async () => {
    const ok = await handler(request(body));
    assert.equal(ok.status, 200);
    assert.deepEqual(await ok.json(), { received: true });
    assert.deepEqual(events.at(-1), paid);
    const bad = await handler(request(body.replace('paid"', 'canceled"'), signed(body)));
    assert.equal(bad.status, 400);
    assert.deepEqual((await bad.json()).error.code, 'invalid_signature');
  });

  test('GET: 405; a body already read: 500; too large: 413; onEvent throws: 500', async () => {
    assert.equal((await handler(request('', {}, 'GET'))).status, 405);
    const used = request(body);
    await used.text();
    assert.equal((await handler(used)).status, 500);
    const big = 'x'.repeat(300 * 1024);
    const large = await handler(request(big, signed(big)));
    assert.equal(large.status, 413);
    assert.equal((await large.json()).error.code, 'payload_too_large');
    const failing = webhookFetchHandler(
      SECRET,
      () => {
        throw new Error('nope');
      },
      { now: NOW, onError: () => undefined },
    );
    assert.equal((await failing(request(body))).status, 500);
  });

  test('in a Hono route: (c) => handler(c.req.raw)', async () => {
    const app = new Hono();
    app.post('/hooks/pix', (c) => handler(c.req.raw));
    const res = await app.request('/hooks/pix', { method: 'POST', headers: signed(body), body });
    assert.equal(res.status, 200);
    assert.deepEqual(await res.json(), { received: true });
    const unsigned = await app.request('/hooks/pix', { method: 'POST', body });
    assert.equal(unsigned.status, 400);
    assert.equal((await unsigned.json()).error.code, 'missing_signature');
  });
});

describe('real deliveries: the proxy over the sandbox, to a webhookHandler', () => {
  let stack: DevStack;
  let receiver: Awaited<ReturnType<typeof listen>>;
  const events: OutcomeEvent[] = [];
  const refusals: string[] = [];

  before(async () => {
    const handler = webhookHandler(SECRET, (event) => void events.push(event));
    receiver = await listen((req, res) => {
      // What the proxy's deliveries see: the answer's status.
      res.on('finish', () => res.statusCode !== 200 && refusals.push(String(res.statusCode)));
      handler(req, res);
    });
    stack = await startDevStack({ merchantWebhook: { url: receiver.url, secret: SECRET }, logger: createLogger({ level: 'silent' }) });
  });
  after(async () => {
    await stack.close();
    await receiver.close();
  });

  test('a checkout paid in the sandbox arrives as a verified payment.paid with its order id', async () => {
    const order = `order-ce-${process.pid}`;
    const created = await fetch(`${stack.apiUrl}/checkouts`, {
      method: 'POST',
      headers: { authorization: `Bearer ${stack.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ value: 23.45, order_id: order }),
    });
    assert.equal(created.status, 201);
    const checkout = CheckoutView.parse(await created.json());
    const payment = PaymentView.parse(await (await fetch(`${stack.apiUrl}/checkouts/${checkout.checkout_id}/payment`, { method: 'POST' })).json());
    await stackControl(stack, 'POST', `/payments/${payment.reference}/pay`);
    const event = await waitFor('the payment.paid delivery', () => events.find((e) => e.data.reference === payment.reference));
    assert.equal(event.type, 'payment.paid');
    assert.deepEqual([event.data.order_id, event.data.checkout_id, event.data.value, event.data.status], [order, checkout.checkout_id, 23.45, 'paid']);
    assert.match(event.id, /^evt_[0-9a-f]{32}$/);
    assert.deepEqual(refusals, []);
  });
});
