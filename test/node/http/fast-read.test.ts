/**
 * The status read's fast path (server/response-headers.ts, PaymentService.readJson) answers exactly
 * what the general path would: the same bytes, the same security, CORS and cache headers, served
 * by node:http or mounted as a plain fetch handler.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Hono } from 'hono';
import { secureHeaders } from 'hono/secure-headers';
import { PaymentView } from '../../../src/shared/contract.ts';
import { PARTNER_STATUS } from '../../../server/partner/wire.ts';
import { SECURITY_HEADERS, createApp, type PixApp } from '../../../server/app.ts';
import { createNodeServer, nodeListener } from '../../../server/http/node-listener.ts';
import type { RequestListener } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startDevStack, type DevStack } from '../../../server/dev-stack.ts';
import { createLogger } from '../../../server/log.ts';
import { PaymentService } from '../../../server/domain/payments.ts';
import { DEFAULTS } from '../../../server/config/index.ts';
import { Outcomes, paymentOutcome } from '../../../server/domain/outcomes.ts';
import { openSqliteStore } from '../../../server/store/sqlite/sqlite-store.ts';
import type { PaymentRecord } from '../../../server/store/store.ts';
import type { PartnerClient } from '../../../server/partner/client.ts';
import { StatusNumbering } from '../../../server/domain/numbering/status-numbering.ts';
import { DEFAULT_STATUS_CODES } from '../../../server/partner/status-codes.ts';

/** A payment service over `store`, at the default numbering verified as a first payment verifies it. */
async function paymentService(
  partner: PartnerClient,
  store: ConstructorParameters<typeof PaymentService>[1]['store'],
  now: () => number,
): Promise<PaymentService> {
  const silent = createLogger({ level: 'silent' });
  return new PaymentService(partner, {
    store,
    expirationSeconds: 3600,
    staleAfterMs: DEFAULTS.staleAfterMs,
    watchIntervalMs: DEFAULTS.watchIntervalMs,
    now,
    log: silent,
    outcomes: new Outcomes(silent),
    numbering: await verifiedNumbering(),
  });
}

/** The default numbering, its pending and approved codes verified as a first payment, and a first one paid in time, verify them. */
async function verifiedNumbering(): Promise<StatusNumbering> {
  const numbering = new StatusNumbering(DEFAULT_STATUS_CODES, createLogger({ level: 'silent' }));
  await numbering.observeFresh({ code: DEFAULT_STATUS_CODES.pending[0]!, word: null }, 'fresh');
  await numbering.observe({ code: DEFAULT_STATUS_CODES.approved[0]!, word: null }, { reference: 'paid', createdAt: 0, expiresAt: 3_600_000, now: 60_000 });
  return numbering;
}

let stack: DevStack;
let reference: string;
const SHOP = 'https://shop.example';

before(async () => {
  stack = await startDevStack({ allowedOrigins: [SHOP], logger: createLogger({ level: 'silent' }) });
  const created = await fetch(`${stack.apiUrl}/payments`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"value":25}' });
  reference = PaymentView.parse(await created.json()).reference;
});
after(async () => {
  await stack.close();
});

/** Every header but the ones that differ per answer. */
function stable(res: Response): Record<string, string> {
  const skip = new Set(['date', 'content-length', 'connection', 'keep-alive', 'allow', 'retry-after', 'x-request-id']);
  return Object.fromEntries([...res.headers].filter(([name]) => !skip.has(name)));
}

describe('security headers', () => {
  test('the precomputed set is what hono/secure-headers sets with the same options', async () => {
    const app = new Hono();
    app.use('*', secureHeaders({ contentSecurityPolicy: { defaultSrc: ["'none'"], frameAncestors: ["'none'"] } }));
    app.get('/', (c) => c.body(null, 204));
    const res = await app.request('/');
    const expected = Object.fromEntries([...res.headers].filter(([name]) => name !== 'content-type'));
    assert.deepEqual({ ...SECURITY_HEADERS }, expected);
  });
});

describe('the status read', () => {
  test('carries the same security and CORS headers as any other API answer, plus no-store', async () => {
    const read = await fetch(`${stack.apiUrl}/payments/${reference}`, { headers: { origin: SHOP } });
    assert.equal(read.status, 200);
    const notFound = await fetch(`${stack.apiUrl}/payments/doesnotexist`, { headers: { origin: SHOP } });
    assert.equal(notFound.status, 404);
    assert.deepEqual(stable(read), { ...stable(notFound), 'cache-control': 'no-store' });
    for (const [name, value] of Object.entries(SECURITY_HEADERS)) assert.equal(read.headers.get(name), value, name);
    assert.equal(read.headers.get('access-control-allow-origin'), SHOP);
    assert.equal(read.headers.get('vary'), 'Origin');
    assert.equal(read.headers.get('content-type'), 'application/json');
    assert.equal(Number(read.headers.get('content-length')), Buffer.byteLength(await read.text()));
  });

  test('another origin gets no Access-Control-Allow-Origin, still Vary: Origin', async () => {
    const read = await fetch(`${stack.apiUrl}/payments/${reference}`, { headers: { origin: 'https://evil.example' } });
    assert.equal(read.status, 200);
    assert.equal(read.headers.get('access-control-allow-origin'), null);
    assert.equal(read.headers.get('vary'), 'Origin');
  });

  test('mounted as a plain fetch handler (no Node socket): the same answer', async () => {
    const app = createApp({
      partner: stack.partner,
      store: stack.store,
      allowedOrigins: [SHOP],
      now: stack.sandbox.state.clock.now,
      logger: createLogger({ level: 'silent' }),
    });
    const outer = new Hono();
    outer.route('/shop', app);
    const mounted = await outer.request(`/shop/api/payments/${reference}`, { headers: { origin: SHOP } });
    const served = await fetch(`${stack.apiUrl}/payments/${reference}`, { headers: { origin: SHOP } });
    assert.equal(mounted.status, 200);
    assert.deepEqual(stable(mounted), stable(served));
    const strip = (text: string) => JSON.parse(text, (key, value) => (key === 'server_time' ? 'T' : value));
    assert.deepEqual(strip(await mounted.text()), strip(await served.text()));
    const preflight = await app.request(`/api/payments/${reference}`, { method: 'OPTIONS', headers: { origin: SHOP, 'access-control-request-method': 'GET' } });
    assert.equal(preflight.status, 204);
    assert.equal(preflight.headers.get('access-control-allow-origin'), SHOP);
    assert.equal(preflight.headers.get('x-content-type-options'), 'nosniff');
  });
});

describe('readJson', () => {
  const record = (over: Partial<PaymentRecord> = {}): PaymentRecord => ({
    reference: 'ref_1',
    checkoutId: null,
    valueCents: 1234,
    description: null,
    partnerStatus: PARTNER_STATUS.pending,
    brcode: '0002010102122677"quoted" \\ back\u2028slash ünï',
    qrCodeUrl: 'https://example.test/qr/ref_1.svg',
    checkoutUrl: 'https://example.test/pay/ref_1',
    createdAt: Date.UTC(2030, 0, 1, 12),
    expiresAt: Date.UTC(2030, 0, 1, 13),
    transactionId: 'tx-1',
    updatedAt: Date.UTC(2030, 0, 1, 12),
    final: false,
    ...over,
  });

  test('is JSON.stringify(view) for every status, value and clock, across record versions', async () => {
    const store = openSqliteStore({ dataDir: ':memory:' });
    let now = Date.UTC(2030, 0, 1, 12, 0, 1);
    const partner = { getPayment: async () => ({ status: { code: PARTNER_STATUS.approved, word: null } }) } as unknown as PartnerClient;
    const service = await paymentService(partner, store, () => now);
    for (const valueCents of [20, 1234, 100, 1_000_000, 1999]) {
      const r = record({ reference: `ref_${valueCents}`, valueCents, transactionId: `tx-${valueCents}` });
      await store.payments.insert(r);
      for (const at of [r.createdAt + 1, r.expiresAt - 1, r.expiresAt, r.expiresAt + 1]) {
        now = at;
        await store.payments.updateStatus(r.reference, PARTNER_STATUS.pending, false, at, paymentOutcome);
        const json = await service.readJson(r.reference);
        assert.equal(json, JSON.stringify(await service.read(r.reference)));
        PaymentView.parse(JSON.parse(json));
      }
    }
    // Stale: refreshed from the partner (approved), and the new version serialized anew.
    now += 10_000;
    const paid = JSON.parse(await service.readJson('ref_20'));
    assert.equal(paid.status, 'paid');
    assert.equal(await service.readJson('ref_20'), JSON.stringify(await service.read('ref_20')));
    await assert.rejects(async () => service.readJson('nope'), { name: 'DomainError', kind: 'not_found' });
    await store.close();
  });

  test('without a synchronous store lookup, the same answer', async () => {
    const inner = openSqliteStore({ dataDir: ':memory:' });
    const store = { ...inner, payments: { ...inner.payments, peek: undefined } };
    const now = Date.UTC(2030, 0, 1, 12, 0, 1);
    const service = await paymentService({} as PartnerClient, store, () => now);
    await inner.payments.insert(record({ updatedAt: now }));
    assert.equal(await service.readJson('ref_1'), JSON.stringify(await service.read('ref_1')));
    await inner.close();
  });
});

/**
 * The node:http fast path (server/http/fast-read.ts): one app served twice, with and without it, and
 * every answer compared. The fast path must answer what the app answers, take the same rate-limit
 * tokens and log the same line, and leave everything else to the app.
 */
describe('the fast path on node:http', () => {
  let now = 0;
  const lines: Record<string, unknown>[] = [];
  let app: PixApp;
  let withFast: { url: string; close(): Promise<void> };
  let withoutFast: { url: string; close(): Promise<void> };
  const answered: boolean[] = [];

  async function serve(listener: RequestListener) {
    const server = createNodeServer(listener);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return {
      url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/api`,
      close: () => new Promise<void>((resolve) => server.close(() => resolve())),
    };
  }

  before(async () => {
    now = stack.sandbox.state.clock.now();
    app = createApp({
      partner: stack.partner,
      store: stack.store,
      allowedOrigins: [SHOP],
      now: () => now,
      // Two status reads at once per client, then one a second.
      rateLimits: { create: { perMinute: 60, burst: 5 }, status: { perMinute: 60, burst: 2 } },
      trustedProxies: 1,
      logger: createLogger({ level: 'info', destination: { write: (line: string) => void lines.push(JSON.parse(line)) } }),
    });
    // Verified as the dev stack's first payment verified its own (the status codes decide reads).
    await app.pix.numbering.observeFresh({ code: DEFAULT_STATUS_CODES.pending[0]!, word: null }, 'fresh');
    const fast = app.pix.fastPath;
    withFast = await serve(
      nodeListener(app.fetch, (req, res) => {
        const done = fast(req, res);
        answered.push(done);
        return done;
      }),
    );
    withoutFast = await serve(nodeListener(app.fetch));
  });
  after(async () => {
    await withFast.close();
    await withoutFast.close();
  });

  /** Each request from a client of its own (X-Forwarded-For, one trusted proxy), so limits do not mix. */
  let client = 0;
  async function both(path: string, init: RequestInit = {}) {
    const from = `203.0.113.${++client}`;
    answered.length = 0;
    const fast = await fetch(`${withFast.url}${path}`, { ...init, headers: { ...init.headers, 'x-forwarded-for': from } });
    const fastAnswered = answered[0];
    const general = await fetch(`${withoutFast.url}${path}`, { ...init, headers: { ...init.headers, 'x-forwarded-for': `198.51.100.${client}` } });
    const strip = (text: string) => (text ? JSON.parse(text, (key, value) => (key === 'server_time' ? 'T' : value)) : text);
    return { fast, general, fastAnswered, fastBody: strip(await fast.text()), generalBody: strip(await general.text()) };
  }

  for (const [name, headers, query] of [
    ['no Origin', {}, ''],
    ['an allowed Origin', { origin: SHOP }, ''],
    ['another Origin', { origin: 'https://evil.example' }, ''],
    ['a query string', { origin: SHOP }, '?cache=1'],
  ] as const) {
    test(`a fresh payment, ${name}: answered by the fast path, the same status, headers and body as the app's`, async () => {
      now = stack.sandbox.state.clock.now();
      await app.pix.payments.reads.record(reference, 0);
      const { fast, general, fastAnswered, fastBody, generalBody } = await both(`/payments/${reference}${query}`, { headers });
      assert.equal(fastAnswered, true, 'the fast path answered');
      assert.equal(fast.status, 200, 'status');
      assert.equal(general.status, 200, 'status');
      assert.deepEqual(stable(fast), stable(general), 'headers');
      assert.equal(fast.headers.get('content-length'), general.headers.get('content-length'), 'content-length');
      // Each answer its own request id (the log line's req_id).
      assert.match(fast.headers.get('x-request-id') ?? '', /^[0-9a-f]{8}-[0-9a-z]+$/, 'x-request-id');
      assert.match(general.headers.get('x-request-id') ?? '', /^[0-9a-f]{8}-[0-9a-z]+$/, 'x-request-id');
      assert.deepEqual(fastBody, generalBody, 'body');
    });
  }

  test("what it does not answer is the app's: unknown, encoded, stale, other methods and routes", async () => {
    now = stack.sandbox.state.clock.now();
    await app.pix.payments.reads.record(reference, 0);
    const cases: [string, RequestInit][] = [
      ['/payments/doesnotexist', {}],
      [`/payments/${reference.slice(0, 4)}%${reference.slice(4)}`, {}],
      [`/payments/${encodeURIComponent(reference)}%2F`, {}],
      [`/payments/${reference}/`, {}],
      [`/payments/${reference}`, { method: 'HEAD' }],
      [`/payments/${reference}`, { method: 'POST', headers: { origin: SHOP } }],
      [`/payments/${reference}`, { method: 'OPTIONS', headers: { origin: SHOP, 'access-control-request-method': 'GET' } }],
      ['/payments/', {}],
      ['/payments', { method: 'GET' }],
    ];
    for (const [path, init] of cases) {
      const { fast, general, fastAnswered, fastBody, generalBody } = await both(path, init);
      assert.equal(fastAnswered, false, `${init.method ?? 'GET'} ${path}: left to the app`);
      assert.equal(fast.status, general.status, `${init.method ?? 'GET'} ${path}: status`);
      assert.deepEqual(stable(fast), stable(general), `${init.method ?? 'GET'} ${path}: headers`);
      assert.deepEqual(fastBody, generalBody, `${init.method ?? 'GET'} ${path}: body`);
    }
    // Stale: the app asks the partner first; the fast path does not answer it.
    now += 60_000;
    answered.length = 0;
    const stale = await fetch(`${withFast.url}/payments/${reference}`);
    assert.equal(answered[0], false, 'a stale status is left to the app');
    assert.equal(stale.status, 200, 'the app answers it');
    // Now fresh again (the app just read it): the fast path answers.
    answered.length = 0;
    assert.equal((await fetch(`${withFast.url}/payments/${reference}`)).status, 200, 'fresh again');
    assert.equal(answered[0], true, 'answered by the fast path once fresh');
  });

  test('the same rate-limit buckets: a client over its limit gets the 429 from the app, and no token is taken twice', async () => {
    now = stack.sandbox.state.clock.now();
    await app.pix.payments.reads.record(reference, 0);
    const from = { 'x-forwarded-for': '192.0.2.77' };
    const read = async () => {
      answered.length = 0;
      const res = await fetch(`${withFast.url}/payments/${reference}`, { headers: from });
      return { status: res.status, fast: answered[0], retry: res.headers.get('retry-after'), body: await res.text() };
    };
    assert.deepEqual(
      [await read(), await read()].map((r) => [r.status, r.fast]),
      [
        [200, true],
        [200, true],
      ],
      'the burst of two',
    );
    const limited = await read();
    assert.equal(limited.status, 429, 'third at once: limited');
    assert.equal(limited.fast, false, 'the refusal is the app’s');
    assert.equal(limited.retry, '1', 'retry-after');
    assert.equal(JSON.parse(limited.body).error.code, 'rate_limited', limited.body);
    // The general path's buckets are the same ones: the app too refuses this client now.
    const viaApp = await fetch(`${withoutFast.url}/payments/${reference}`, { headers: from });
    assert.equal(viaApp.status, 429, 'the app counts the fast path’s reads');
    // One second later one token is back: one read passes (a refusal took none), the next is refused.
    now += 1000;
    assert.deepEqual([(await read()).status, (await read()).status], [200, 429], 'one token a second');
  });

  test('the request line is the same as the app’s, with its own id', async () => {
    now = stack.sandbox.state.clock.now();
    await app.pix.payments.reads.record(reference, 0);
    lines.length = 0;
    await both(`/payments/${reference}?x=1`, { headers: { origin: SHOP } });
    const requests = lines.filter((line) => line.msg === 'request');
    assert.equal(requests.length, 2, JSON.stringify(lines));
    const [fast, general] = requests as { req_id: string; ms: number }[];
    const shape = ({ req_id: _id, ms: _ms, time: _time, ...rest }: Record<string, unknown>) => rest;
    assert.deepEqual(shape(fast!), shape(general!), 'the same fields and values');
    assert.deepEqual(
      shape(fast!),
      { level: 30, service: 'pix-checkout', method: 'GET', path: `/api/payments/${reference}`, status: 200, msg: 'request' },
      'no query',
    );
    assert.notEqual(fast!.req_id, general!.req_id, 'ids from one sequence');
    assert.equal(typeof fast!.ms, 'number', 'duration');
  });
});
