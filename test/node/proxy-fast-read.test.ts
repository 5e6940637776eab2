/**
 * The status read's fast path (server/response-headers.ts, PaymentService.readJson) answers exactly
 * what the general path would: the same bytes, the same security, CORS and cache headers, served
 * by node:http or mounted as a plain fetch handler.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Hono } from 'hono';
import { secureHeaders } from 'hono/secure-headers';
import { PaymentView } from '../../src/shared/contract.ts';
import { PARTNER_STATUS } from '../../server/partner/wire.ts';
import { SECURITY_HEADERS, createApp } from '../../server/app.ts';
import { startDevStack, type DevStack } from '../../server/dev-stack.ts';
import { createLogger } from '../../server/log.ts';
import { PaymentService } from '../../server/domain/payments.ts';
import { Outcomes, paymentOutcome } from '../../server/domain/outcomes.ts';
import { openSqliteStore } from '../../server/store/sqlite/sqlite-store.ts';
import type { PaymentRecord } from '../../server/store/store.ts';
import type { PartnerClient } from '../../server/partner/client.ts';
import { StatusNumbering } from '../../server/domain/status-numbering.ts';
import { DEFAULT_STATUS_CODES } from '../../server/partner/status-codes.ts';

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
    now,
    log: silent,
    outcomes: new Outcomes(silent),
    numbering: await verifiedNumbering(),
  });
}

/** The default numbering, verified as a first payment verifies it. */
async function verifiedNumbering(): Promise<StatusNumbering> {
  const numbering = new StatusNumbering(DEFAULT_STATUS_CODES, createLogger({ level: 'silent' }));
  await numbering.observeFresh({ code: DEFAULT_STATUS_CODES.pending, word: null }, 'fresh');
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
  const skip = new Set(['date', 'content-length', 'connection', 'keep-alive', 'allow', 'retry-after']);
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
      await store.insertPayment(r);
      for (const at of [r.createdAt + 1, r.expiresAt - 1, r.expiresAt, r.expiresAt + 1]) {
        now = at;
        await store.updatePaymentStatus(r.reference, PARTNER_STATUS.pending, false, at, paymentOutcome);
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
    const store = { ...inner, peekPayment: undefined };
    const now = Date.UTC(2030, 0, 1, 12, 0, 1);
    const service = await paymentService({} as PartnerClient, store, () => now);
    await inner.insertPayment(record({ updatedAt: now }));
    assert.equal(await service.readJson('ref_1'), JSON.stringify(await service.read('ref_1')));
    await inner.close();
  });
});
