/**
 * The proxy's rooms, asked through `createApp(...).request()` (no socket on the proxy's side; the
 * partner is a real sandbox over HTTPS): each route file owns its paths and its 405s, domain errors
 * become HTTP in one place, an outcome event is built once (the outbox row and the in-process event
 * are the same), and the layering rules fail a wrong import.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { promisify } from 'node:util';
import { createApp, type PixApp } from '../../../server/app.ts';
import type { OutcomeEvent } from '../../../server/domain/outcomes.ts';
import { createLogger } from '../../../server/log.ts';
import { createPartnerClient } from '../../../server/partner/client.ts';
import { sandboxPartner } from '../../../server/sandbox-mode.ts';
import { startSandbox, type RunningSandbox } from '../../../server/sandbox/server.ts';
import { openSqliteStore } from '../../../server/store/sqlite/sqlite-store.ts';
import type { Store } from '../../../server/store/store.ts';
import { ErrorBody } from '../../../src/shared/errors.ts';

const API_KEY = 'k'.repeat(40);

describe('the rooms of the proxy, through app.request()', () => {
  let sandbox: RunningSandbox;
  let store: Store;
  let app: PixApp;
  const seen: OutcomeEvent[] = [];

  before(async () => {
    sandbox = await startSandbox();
    store = openSqliteStore({ dataDir: ':memory:' });
    const partner = createPartnerClient({ ...(await sandboxPartner(sandbox)).connection, tokenStore: store.tokens });
    app = createApp({
      partner,
      store,
      apiKey: API_KEY,
      now: sandbox.state.clock.now,
      logger: createLogger({ level: 'silent' }),
      onOutcome: (event) => seen.push(event),
    });
  });
  after(async () => {
    await app.pix.stop();
    await store.close();
    await sandbox.close();
  });

  const errorOf = async (res: Response) => ErrorBody.parse(await res.json()).error;

  test('every known path asked with another method answers 405 naming the right one, in every room', async () => {
    const cases: [string, string, string][] = [
      ['POST', '/health', 'GET'],
      ['DELETE', '/ready', 'GET'],
      ['GET', '/api/payments', 'POST'],
      ['POST', '/api/payments/abc', 'GET'],
      ['PUT', '/api/payments/abc/events', 'GET'],
      ['GET', '/api/checkouts', 'POST'],
      ['POST', '/api/checkouts/co_x', 'GET'],
      ['GET', '/api/checkouts/co_x/payment', 'POST'],
      ['GET', '/api/webhooks/partner', 'POST'],
      ['POST', '/api/pix-checkout.js', 'GET'],
    ];
    for (const [method, path, allow] of cases) {
      const res = await app.request(path, { method });
      assert.equal(res.status, 405, `${method} ${path}`);
      assert.equal(res.headers.get('allow'), allow, `${method} ${path}`);
      assert.equal((await errorOf(res)).code, 'method_not_allowed');
    }
    const unknown = await app.request('/api/nothing-here');
    assert.equal(unknown.status, 404);
  });

  test('domain refusals become their HTTP answers in one place: not found, conflict', async () => {
    const auth = { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json' };
    const missing = await app.request('/api/checkouts/co_' + 'x'.repeat(24), { headers: auth });
    assert.equal(missing.status, 404);
    assert.deepEqual(await errorOf(missing), { code: 'not_found', message: 'No such checkout.' });

    const create = (value: number) =>
      app.request('/api/checkouts', { method: 'POST', headers: auth, body: JSON.stringify({ value, order_id: 'order-rooms-1' }) });
    assert.equal((await create(10)).status, 201);
    const conflict = await create(11);
    assert.equal(conflict.status, 409);
    const body = await errorOf(conflict);
    assert.equal(body.code, 'conflict');
    assert.deepEqual(Object.keys(body.fields ?? {}), ['order_id']);
  });

  test('a paid payment: the outbox row and the in-process event are the one event built once', async () => {
    const auth = { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json' };
    const created = await app.request('/api/checkouts', { method: 'POST', headers: auth, body: JSON.stringify({ value: 12.34, order_id: 'order-rooms-2' }) });
    const checkout = (await created.json()) as { checkout_id: string };
    const issued = await app.request(`/api/checkouts/${checkout.checkout_id}/payment`, { method: 'POST' });
    assert.equal(issued.status, 201);
    const { reference } = (await issued.json()) as { reference: string };

    sandbox.state.pay(sandbox.state.payments.get(reference)!);
    const record = await app.pix.payments.reads.confirm(reference);
    assert.equal(record?.final, true);

    const rows = (await store.outbox.list()).filter((row) => row.reference === reference);
    assert.equal(rows.length, 1);
    const emitted = seen.filter((event) => event.data.reference === reference);
    assert.equal(emitted.length, 1);
    assert.deepEqual(JSON.parse(rows[0]!.body), emitted[0]);
    assert.deepEqual(emitted[0]!.data, { reference, status: 'paid', value: 12.34, checkout_id: checkout.checkout_id, order_id: 'order-rooms-2' });
  });
});

describe('the layering rules (npm run lint)', () => {
  const stray = 'server/domain/zz-stray-import.ts';
  after(() => rmSync(stray, { force: true }));

  test('a domain module importing the HTTP layer fails the check; the tree as it is passes', async () => {
    const run = (files: string[]) =>
      promisify(execFile)(process.execPath, [
        'node_modules/dependency-cruiser/bin/dependency-cruise.mjs',
        '--config',
        '.dependency-cruiser.cjs',
        ...files,
      ]).then(
        () => ({ ok: true, out: '' }),
        (error: { stdout?: string }) => ({ ok: false, out: error.stdout ?? '' }),
      );
    assert.deepEqual(await run(['server']), { ok: true, out: '' });
    writeFileSync(stray, "import { HttpError } from '../http/errors.ts';\nexport const stray = HttpError;\n");
    const broken = await run(['server']);
    assert.equal(broken.ok, false);
    assert.match(broken.out, /domain-below-http: server\/domain\/zz-stray-import\.ts → server\/http\/errors\.ts/);
  });
});
