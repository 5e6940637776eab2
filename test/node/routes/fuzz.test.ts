/**
 * Property-based fuzzing of every endpoint (fast-check): random and malformed methods, paths,
 * headers, content types, bodies and sizes through `app.request()`, against the real sandbox and a
 * real SQLite file. No answer may be a 5xx; every 4xx is the shared error body with a known code;
 * every 2xx is the contract's shape.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import fc from 'fast-check';
import type { Hono } from 'hono';
import { CheckoutView, PaymentView } from '../../../src/shared/contract.ts';
import { ERROR_CODES, ErrorBody } from '../../../src/shared/errors.ts';
import { createApp } from '../../../server/app.ts';
import { createLogger } from '../../../server/log.ts';
import { startSandbox, type RunningSandbox } from '../../../server/sandbox/server.ts';
import { openSqliteStore } from '../../../server/store/sqlite/sqlite-store.ts';
import type { Store } from '../../../server/store/store.ts';
import { createPartnerClient } from '../../../server/partner/client.ts';
import { sandboxPartner } from '../../../server/sandbox-mode.ts';

const API_KEY = 'fuzz-api-key-0123456789abcdef0123456789';
let sandbox: RunningSandbox;
let store: Store;
let dataDir: string;
let app: Hono;
const shutdown = new AbortController();
let checkoutId = '';
let reference = '';

before(async () => {
  sandbox = await startSandbox();
  dataDir = mkdtempSync(join(tmpdir(), 'pix-fuzz-'));
  store = openSqliteStore({ dataDir });
  const partner = createPartnerClient({ ...(await sandboxPartner(sandbox)).connection, tokenStore: store.tokens });
  app = createApp({
    partner,
    store,
    apiKey: API_KEY,
    allowedOrigins: ['https://shop.example'],
    openAmount: { min: 1, max: 1000 },
    now: sandbox.state.clock.now,
    logger: createLogger({ level: 'silent' }),
    // Limits are exercised in routes/checkouts.test.ts; here they would only turn most requests into 429s.
    rateLimits: false,
    signal: shutdown.signal,
  });
  const created = await app.request('/api/checkouts', {
    method: 'POST',
    headers: { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json' },
    body: JSON.stringify({ value: 10, order_id: 'fuzz-seed' }),
  });
  checkoutId = CheckoutView.parse(await created.json()).checkout_id;
  const payment = await app.request(`/api/checkouts/${checkoutId}/payment`, { method: 'POST' });
  reference = PaymentView.parse(await payment.json()).reference;
});

after(async () => {
  shutdown.abort();
  await store.close();
  await sandbox.close();
  rmSync(dataDir, { recursive: true, force: true });
});

const segment = fc.oneof(
  fc.constantFrom('..', '.', '%2e%2e', '%00', '%2F', '%20', '', '~', 'ünï', 'a'.repeat(300)),
  fc.string({ maxLength: 40 }).map(encodeURIComponent),
  fc.stringMatching(/^[A-Za-z0-9_-]{1,70}$/),
  fc.stringMatching(/^co_[A-Za-z0-9_-]{20,28}$/),
);

const path = fc.oneof(
  { arbitrary: fc.constantFrom('/api/payments', '/api/checkouts'), weight: 6 },
  fc.constantFrom('/health', '/ready', '/api', '/api/', '/', '/api/payments/'),
  fc.constant(null).map(() => `/api/payments/${reference}`),
  fc.constant(null).map(() => `/api/payments/${reference}/events`),
  fc.constant(null).map(() => `/api/checkouts/${checkoutId}`),
  fc.constant(null).map(() => `/api/checkouts/${checkoutId}/payment`),
  segment.map((s) => `/api/payments/${s}`),
  segment.map((s) => `/api/payments/${s}/events`),
  segment.map((s) => `/api/checkouts/${s}`),
  segment.map((s) => `/api/checkouts/${s}/payment`),
  fc.array(segment, { maxLength: 5 }).map((parts) => `/api/${parts.join('/')}`),
);

const method = fc.oneof(
  { arbitrary: fc.constantFrom('GET', 'POST'), weight: 8 },
  { arbitrary: fc.constantFrom('PUT', 'DELETE', 'PATCH', 'OPTIONS', 'HEAD'), weight: 2 },
  { arbitrary: fc.stringMatching(/^[A-Z]{1,10}$/), weight: 1 },
);

const contentType = fc.option(
  fc.oneof(
    { arbitrary: fc.constant('application/json'), weight: 4 },
    fc.constantFrom(
      'application/json',
      'application/json; charset=utf-8',
      'APPLICATION/JSON',
      'text/plain',
      'application/x-www-form-urlencoded',
      'multipart/form-data; boundary=x',
      'application/jsonx',
      '',
    ),
    fc.stringMatching(/^[\x20-\x7e]{0,40}$/),
  ),
  { nil: undefined, freq: 3 },
);

const amount = fc.oneof(
  fc.integer({ min: 0, max: 2_000_000 }).map((c) => c / 100),
  fc.double(),
  fc.constantFrom(0.2, 1, 10_000, -1, 1e308),
  fc.string({ maxLength: 8 }),
);
const plausible = fc.record(
  {
    value: amount,
    description: fc.string({ maxLength: 60 }),
    order_id: fc.oneof(fc.stringMatching(/^[A-Za-z0-9-]{1,20}$/), fc.string({ maxLength: 80 })),
    name: fc.string({ maxLength: 20 }),
    document: fc.constantFrom('529.982.247-25', '123', '11.222.333/0001-81'),
    callback: fc.constantFrom('https://shop.example/ok', 'http://shop.example', 'javascript:alert(1)'),
    extra: fc.jsonValue(),
  },
  { requiredKeys: [] },
);

/** Close to valid, so the handlers past the parsers are reached too. */
const nearlyValid = fc.record({ value: fc.integer({ min: 20, max: 120_000 }).map((c) => c / 100), order_id: fc.stringMatching(/^[A-Za-z0-9-]{1,20}$/) });

const body = fc.option(
  fc.oneof(
    { arbitrary: nearlyValid.map((o) => JSON.stringify(o)), weight: 3 },
    { arbitrary: plausible.map((o) => JSON.stringify(o)), weight: 3 },
    fc.jsonValue().map((v) => JSON.stringify(v)),
    fc.string({ maxLength: 200 }),
    fc.string({ minLength: 4000, maxLength: 6000 }),
    fc.uint8Array({ maxLength: 300 }),
  ),
  { nil: undefined },
);

const authorization = fc.option(
  fc.oneof(
    { arbitrary: fc.constant(`Bearer ${API_KEY}`), weight: 3 },
    fc.constantFrom('Bearer', 'Bearer ', `bearer ${API_KEY}`, `Basic ${API_KEY}`),
    fc.stringMatching(/^[\x20-\x7e]{0,60}$/),
  ),
  { nil: undefined },
);
const origin = fc.option(fc.constantFrom('https://shop.example', 'https://evil.example', 'null', 'not a url'), { nil: undefined });

const request = fc.record({
  method,
  path,
  contentType,
  body,
  authorization,
  origin,
  forwardedFor: fc.option(fc.stringMatching(/^[\x20-\x7e]{0,40}$/), { nil: undefined }),
});

test('thousands of random and malformed requests: no 5xx, every answer a clear 4xx or a correct 2xx', async () => {
  let tried = 0;
  const statuses = new Map<number, number>();
  await fc.assert(
    fc.asyncProperty(request, async (r) => {
      const headers = new Headers();
      if (r.contentType !== undefined) headers.set('content-type', r.contentType);
      if (r.authorization !== undefined) headers.set('authorization', r.authorization);
      if (r.origin !== undefined) headers.set('origin', r.origin);
      if (r.forwardedFor !== undefined) headers.set('x-forwarded-for', r.forwardedFor);
      const hasBody = r.body !== undefined && r.method !== 'GET' && r.method !== 'HEAD';
      const res = await app.request(r.path, { method: r.method, headers, body: hasBody ? (r.body as BodyInit) : undefined });
      tried++;
      statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
      assert.ok(res.status < 500, `${r.method} ${r.path} answered ${res.status}`);

      if ((res.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
        assert.equal(res.status, 200);
        await res.body?.cancel();
        return;
      }
      const text = await res.text();
      if (r.method === 'HEAD' || res.status === 204) return;
      const json = JSON.parse(text) as unknown;
      if (res.status >= 400) {
        const error = ErrorBody.parse(json).error;
        assert.ok((ERROR_CODES as readonly string[]).includes(error.code), error.code);
        assert.ok(error.message.length > 0);
        return;
      }
      if (r.path === '/health' || r.path === '/ready') return;
      if (/^\/api\/checkouts(\/co_[^/]+)?$/.test(r.path)) CheckoutView.parse(json);
      else PaymentView.parse(json);
    }),
    { numRuns: 5000 },
  );
  console.log(`fuzz: ${tried} requests tried; statuses ${JSON.stringify(Object.fromEntries([...statuses].sort(([a], [b]) => a - b)))}`);
  assert.ok(tried >= 5000);
});
