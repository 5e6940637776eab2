/**
 * What a hostile client and a flaky network found, each pinned by a test that failed before its fix:
 * the webhook intake flooded, a stream aborted mid-read that kept polling, a damaged database that
 * looked healthy, a client hanging up mid-upload logged as a server error, inherited field names, and
 * unprintable text on a proof of payment; and the smaller ones (no Host, racing first calls, the
 * proxy's own origin from its configured URL).
 */
import assert from 'node:assert/strict';
import { closeSync, fstatSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import Database from 'libsql';
import { PaymentView } from '../../../src/shared/contract.ts';
import { ErrorBody } from '../../../src/shared/errors.ts';
import { DEFAULTS } from '../../../server/config/index.ts';
import { startDevStack, type DevStack } from '../../../server/dev-stack.ts';
import { createLogger } from '../../../server/log.ts';
import { PARTNER_PATHS } from '../../../server/partner/wire.ts';
import { DB_FILE_NAME, openSqliteStore } from '../../../server/store/sqlite/sqlite-store.ts';
import { StoreError, type Store } from '../../../server/store/store.ts';
import { countReads } from '../../support/checks.ts';

const silent = createLogger({ level: 'silent' });
const json = { 'content-type': 'application/json' };

async function addFault(stack: DevStack, fault: Record<string, unknown>): Promise<number> {
  const res = await stack.sandbox.publicApp.request('/_sandbox/faults', { method: 'POST', headers: json, body: JSON.stringify(fault) });
  return ((await res.json()) as { fault: { id: number } }).fault.id;
}

async function removeFault(stack: DevStack, id: number): Promise<void> {
  await stack.sandbox.publicApp.request(`/_sandbox/faults/${id}`, { method: 'DELETE' });
}

async function openPayment(stack: DevStack): Promise<PaymentView> {
  const res = await stack.app.request('/api/payments', { method: 'POST', headers: json, body: JSON.stringify({ value: 3.5 }) });
  assert.equal(res.status, 201);
  return PaymentView.parse(await res.json());
}

/** Raw HTTP/1.1 on a socket: what fetch will not send (a cut-off body, no Host, `GET *`). */
function rawRequest(url: string, text: string, { hangUpAfterMs }: { hangUpAfterMs?: number } = {}): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => socket.write(text));
    let answer = '';
    socket.on('data', (chunk: Buffer) => (answer += chunk.toString('utf8')));
    socket.on('end', () => resolve(answer));
    socket.on('close', () => resolve(answer));
    socket.on('error', reject);
    if (hangUpAfterMs !== undefined) setTimeout(() => socket.destroy(), hangUpAfterMs);
  });
}

describe('an aborted status stream', () => {
  let stack: DevStack;
  before(async () => {
    stack = await startDevStack({ logger: silent, watchIntervalMs: 250, staleAfterMs: 0 });
  });
  after(() => stack.close());

  test('closed while its first read waits on the partner, it stops polling: no partner reads afterwards', async () => {
    const payments = await Promise.all(Array.from({ length: 3 }, () => openPayment(stack)));
    // Every read of the partner takes 400 ms: the clients hang up during the first one.
    const fault = await addFault(stack, {
      kind: 'latency',
      rate: 1,
      latency_ms: 400,
      path_prefix: PARTNER_PATHS.getPayment.replace(':external_reference', ''),
    });
    const reads = countReads(stack);
    const aborts = payments.flatMap((payment) =>
      Array.from({ length: 5 }, async () => {
        const controller = new AbortController();
        const pending = fetch(`${stack.apiUrl}/payments/${payment.reference}/events`, { signal: controller.signal }).catch(() => null);
        await sleep(100);
        controller.abort();
        await pending;
      }),
    );
    await Promise.all(aborts);
    await sleep(700); // the first reads finish
    const settled = reads.calls();
    await sleep(1500); // six watch intervals
    assert.equal(reads.calls() - settled, 0, `partner reads after every client left: ${reads.calls() - settled}`);
    await removeFault(stack, fault);
  });
});

describe('the webhook intake under a flood', () => {
  let stack: DevStack;
  before(async () => {
    stack = await startDevStack({ logger: silent, registerWebhook: false, background: false });
  });
  after(() => stack.close());

  const notify = (body: string) => stack.app.request('/api/webhooks/partner', { method: 'POST', headers: json, body });
  /** The partner's notification (old format) that a payment was paid. */
  const oldFormatPaid = (reference: string) =>
    JSON.stringify({ type: 'payment', external_reference: reference, status: 2, value: 3.5, transaction_id: null, end2end: null, user_id: null });

  test('copies of one notification share one partner confirmation; every copy is kept and settled', async () => {
    const payment = await openPayment(stack);
    const reads = countReads(stack);
    const body = oldFormatPaid(payment.reference);
    const answers = await Promise.all(Array.from({ length: 60 }, async () => await notify(body)));
    assert.deepEqual(new Set(answers.map((res) => res.status)), new Set([202]));
    await stack.pix.processor.idle();
    assert.ok(reads.calls() <= 2, `partner reads for 60 copies: ${reads.calls()}`);
    // The partner still says pending: one copy is kept to be confirmed again soon, the others are
    // settled by the confirmation they shared (a flood keeps one row waiting, not one each).
    assert.equal(await stack.store.webhookEvents.countUnprocessed(), 1);
  });

  test('a notification is settled by its own confirmation, however many copies keep arriving after it', async () => {
    const payment = await openPayment(stack);
    const body = oldFormatPaid(payment.reference);
    const receivedAt = stack.sandbox.state.clock.now();
    // Each confirmation takes 300 ms, so copies arriving every 10 ms are always waiting when one ends.
    const fault = await addFault(stack, {
      kind: 'latency',
      rate: 1,
      latency_ms: 300,
      path_prefix: PARTNER_PATHS.getPayment.replace(':external_reference', ''),
    });
    let settled = false;
    const first = stack.pix.processor.process(await stack.store.webhookEvents.add(body, receivedAt), body).then(() => (settled = true));
    // A flood of copies from the start, one every few milliseconds, for longer than two intervals.
    let copies = 0;
    while (!settled && copies < 600) {
      void stack.pix.processor.process(await stack.store.webhookEvents.add(body, receivedAt), body);
      copies++;
      await sleep(10);
    }
    await first;
    assert.ok(copies < 600, 'the first notification waited for the flood of copies to end');
    await removeFault(stack, fault);
    await stack.pix.processor.idle();
  });

  test('an unreadable notification is kept (at most 16 KiB, saying so) and acknowledged; past a flood of them, only its start', async () => {
    const db = new Database(join(stack.dataDir, DB_FILE_NAME));
    const last = () =>
      db.prepare('SELECT length(raw_body) AS size, result, original_bytes FROM webhook_events ORDER BY id DESC LIMIT 1').get() as {
        size: number;
        result: string;
        original_bytes: number | null;
      };
    const big = JSON.stringify({ pad: 'x'.repeat(50_000) });
    assert.equal((await notify(big)).status, 202);
    assert.deepEqual([last().size, last().result, last().original_bytes], [DEFAULTS.webhookIntake.keptBytes, 'unreadable', big.length]);
    const before = (db.prepare("SELECT count(*) AS n FROM webhook_events WHERE result = 'unreadable'").get() as { n: number }).n;
    const small = JSON.stringify({ pad: 'y'.repeat(3000) });
    for (let i = before; i < DEFAULTS.webhookIntake.unreadableWholePerHour; i++) assert.equal((await notify(small)).status, 202);
    assert.deepEqual([last().size, last().result, last().original_bytes], [small.length, 'unreadable', null]);
    assert.equal((await notify(small)).status, 202);
    assert.deepEqual([last().size, last().result, last().original_bytes], [DEFAULTS.webhookIntake.auditBytes, 'unreadable', small.length]);
    db.close();
  });

  test('past the cap of notifications waiting for confirmation, the intake answers 503 and stores nothing more', async () => {
    const payment = await openPayment(stack);
    const now = stack.sandbox.state.clock.now();
    // Those kept by the tests above count too.
    const waiting = await stack.store.webhookEvents.countUnprocessed();
    for (let i = waiting; i < DEFAULTS.webhookIntake.pendingCap; i++) await stack.store.webhookEvents.add('{"waiting":true}', now);
    const res = await notify(
      JSON.stringify({ type: 'payment', external_reference: payment.reference, status: 2, value: 3.5, transaction_id: null, end2end: null, user_id: null }),
    );
    assert.equal(res.status, 503);
    assert.equal(res.headers.get('retry-after'), '60');
    assert.equal(await stack.store.webhookEvents.countUnprocessed(), DEFAULTS.webhookIntake.pendingCap);
    await stack.store.webhookEvents.expireUnprocessed(now + 1, now);
  });

  test('notifications never confirmed are set aside after the retention, by the reconciler', async () => {
    const added = await stack.store.webhookEvents.add(
      '{"not":"confirmable"}',
      stack.sandbox.state.clock.now() - DEFAULTS.webhookIntake.pendingRetentionMs - 1000,
    );
    await stack.pix.reconciler.runOnce();
    assert.equal(
      (await stack.store.webhookEvents.unprocessed(100)).some((event) => event.id === added),
      false,
    );
  });
});

describe('the webhook intake per source', () => {
  let stack: DevStack;
  before(async () => {
    stack = await startDevStack({
      logger: silent,
      registerWebhook: false,
      rateLimits: { create: { perMinute: 1000, burst: 1000 }, status: { perMinute: 1000, burst: 1000 }, webhook: { perMinute: 60, burst: 5 } },
    });
  });
  after(() => stack.close());

  test('one source posting faster than its limit gets 429 with Retry-After', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 8; i++) {
      const res = await fetch(`${stack.apiUrl}/webhooks/partner`, { method: 'POST', headers: json, body: '{}' });
      statuses.push(res.status);
    }
    // Kept and acknowledged (unreadable), until the limit.
    assert.deepEqual(statuses.slice(0, 5), [202, 202, 202, 202, 202]);
    assert.equal(statuses.at(-1), 429);
  });

  test('the right secret path is the partner: never limited (a resend burst is not refused), a wrong one is', async () => {
    const secretPath = 'c0ffeec0ffeec0ffee00';
    const guarded = await startDevStack({
      logger: silent,
      registerWebhook: false,
      webhooks: { secretPath },
      rateLimits: { create: { perMinute: 1000, burst: 1000 }, status: { perMinute: 1000, burst: 1000 }, webhook: { perMinute: 60, burst: 5 } },
    });
    try {
      const post = async (segment: string) =>
        (await fetch(`${guarded.apiUrl}/webhooks/partner/${segment}`, { method: 'POST', headers: json, body: '{}' })).status;
      const partner: number[] = [];
      for (let i = 0; i < 8; i++) partner.push(await post(secretPath));
      assert.deepEqual(partner, Array(8).fill(202));
      const strangers: number[] = [];
      for (let i = 0; i < 8; i++) strangers.push(await post('wrong-secret-segment'));
      assert.equal(strangers.at(-1), 429);
    } finally {
      await guarded.close();
    }
  });
});

describe('a damaged or unwritable database', () => {
  const dirs: string[] = [];
  after(() => dirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

  async function damagedDir(): Promise<string> {
    const dir = mkdtempSync(join(tmpdir(), 'pix-damaged-'));
    dirs.push(dir);
    const store = openSqliteStore({ dataDir: dir, cacheSize: 0 });
    for (let i = 0; i < 200; i++) {
      await store.checkouts.create({
        id: `co_${i}`,
        orderId: `o${i}`,
        valueCents: 100,
        description: 'x'.repeat(200),
        name: null,
        document: null,
        callback: null,
        paymentReference: null,
        renewalsUsed: 0,
        createdAt: i,
      });
    }
    await store.close();
    // Into the main file (the rows are in the WAL until a checkpoint), then damaged pages.
    const db = new Database(join(dir, DB_FILE_NAME));
    db.exec('PRAGMA wal_checkpoint(TRUNCATE)');
    db.close();
    const fd = openSync(join(dir, DB_FILE_NAME), 'r+');
    for (let at = 2 * 4096 + 100; at < fstatSync(fd).size; at += 4096) writeSync(fd, Buffer.alloc(512, 0xab), 0, 512, at);
    closeSync(fd);
    return dir;
  }

  test('is refused at open with words an operator can act on', async () => {
    const dir = await damagedDir();
    assert.throws(
      () => openSqliteStore({ dataDir: dir }),
      (error: unknown) => error instanceof StoreError && /damaged.*restore it from a backup/.test(error.message),
    );
  });

  test('a store failing under the proxy answers 503 store_unavailable, and /ready blames the store, not the partner', async () => {
    const stack = await startDevStack({ logger: silent, registerWebhook: false });
    try {
      // The fault: the store fails as a damaged file does (the SQLite adapter turns SQLITE_CORRUPT into this).
      const damaged = () => Promise.reject(new StoreError('the database is damaged; restore it from a backup', 'SQLITE_CORRUPT'));
      const store = stack.store as unknown as { checkouts: Record<keyof Store['checkouts'], unknown>; ping: unknown };
      store.checkouts.create = damaged;
      store.checkouts.get = damaged;
      store.ping = damaged;
      const res = await stack.app.request('/api/checkouts', {
        method: 'POST',
        headers: { ...json, authorization: `Bearer ${stack.apiKey}` },
        body: JSON.stringify({ value: 10, order_id: 'o-1' }),
      });
      assert.equal(res.status, 503);
      assert.equal(ErrorBody.parse(await res.json()).error.code, 'store_unavailable');
      const ready = await stack.app.request('/ready');
      assert.equal(ready.status, 503);
      assert.deepEqual(((await ready.json()) as { checks: unknown }).checks, {
        store: 'failed',
        database: 'sqlite',
        partner: 'not_checked',
        status_codes: 'unverified',
      });
    } finally {
      await stack.close();
    }
  });

  test('a data directory that cannot be written is explained in words, not as a driver code', () => {
    // Under /sys even root may create nothing.
    assert.throws(
      () => openSqliteStore({ dataDir: '/sys/pix-checkout-cannot-write' }),
      (error: unknown) => error instanceof StoreError && /cannot be written.*PIX_DATA_DIR/.test(error.message),
    );
  });
});

describe('requests a hostile or careless client sends', () => {
  let stack: DevStack;
  const lines: string[] = [];
  before(async () => {
    stack = await startDevStack({
      logger: createLogger({ level: 'info', destination: { write: (line: string) => void lines.push(line) } }),
      registerWebhook: false,
    });
  });
  after(() => stack.close());

  test('a client hanging up mid-body is no server error: no error line, a 400 in the request log', async () => {
    const before = lines.length;
    const host = new URL(stack.url).host;
    await rawRequest(
      stack.url,
      `POST /api/checkouts HTTP/1.1\r\nHost: ${host}\r\nAuthorization: Bearer ${stack.apiKey}\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"value":1`,
      { hangUpAfterMs: 150 },
    );
    await sleep(300);
    const logged = lines.slice(before).map((line) => JSON.parse(line) as { level: number; msg: string; status?: number; client_aborted?: boolean });
    assert.equal(logged.filter((line) => line.level >= 50).length, 0, JSON.stringify(logged));
    assert.ok(logged.some((line) => line.client_aborted === true));
  });

  test('field names every object inherits are named in the 400', async () => {
    const body = '{"value":10,"order_id":"o-proto","toString":1,"__proto__":{"x":1},"constructor":2,"hasOwnProperty":3,"valueOf":4}';
    const res = await stack.app.request('/api/checkouts', { method: 'POST', headers: { ...json, authorization: `Bearer ${stack.apiKey}` }, body });
    assert.equal(res.status, 400);
    // Read as sent: a `__proto__` key survives JSON.parse, not a copy into another object.
    const error = (JSON.parse(await res.text()) as ErrorBody).error;
    assert.deepEqual(Object.keys(error.fields ?? {}).sort(), ['__proto__', 'constructor', 'hasOwnProperty', 'toString', 'valueOf']);
    assert.match(error.message, /toString is not a known field/);
  });

  test('a description or name with control or bidi characters, a lone surrogate, or nothing, is refused by field', async () => {
    for (const [field, text] of [
      ['description', 'Pedido\n1'],
      ['description', 'Pedido \u202e1'],
      ['description', 'Pedido \ud83d'],
      ['description', '   '],
      ['name', 'Ana\u0000'],
    ] as const) {
      const extra = field === 'name' ? { name: text, document: '529.982.247-25' } : { description: text };
      const res = await stack.app.request('/api/checkouts', {
        method: 'POST',
        headers: { ...json, authorization: `Bearer ${stack.apiKey}` },
        body: JSON.stringify({ value: 10, order_id: `o-text-${Math.random()}`, ...extra }),
      });
      assert.equal(res.status, 400, JSON.stringify(text));
      assert.ok(ErrorBody.parse(await res.json()).error.fields?.[field], JSON.stringify(text));
    }
  });

  test('no Host, or GET *, answers in the error shape', async () => {
    for (const text of ['GET /api/payments/abc HTTP/1.0\r\n\r\n', 'GET * HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n']) {
      const answer = await rawRequest(stack.url, text);
      const body = answer.slice(answer.indexOf('\r\n\r\n') + 4);
      assert.match(answer, /^HTTP\/1\.[01] 4\d\d /, text);
      assert.doesNotThrow(() => ErrorBody.parse(JSON.parse(body)), `${text}: ${answer}`);
    }
  });

  test('fifty first calls racing for one checkout: one 201, the others 200, all the same payment', async () => {
    const created = await stack.app.request('/api/checkouts', {
      method: 'POST',
      headers: { ...json, authorization: `Bearer ${stack.apiKey}` },
      body: JSON.stringify({ value: 10, order_id: 'o-race' }),
    });
    const { checkout_id } = (await created.json()) as { checkout_id: string };
    const answers = await Promise.all(
      Array.from({ length: 50 }, async () => await stack.app.request(`/api/checkouts/${checkout_id}/payment`, { method: 'POST' })),
    );
    assert.deepEqual(answers.map((res) => res.status).sort(), [...Array.from({ length: 49 }, () => 200), 201]);
    const references = new Set(await Promise.all(answers.map(async (res) => ((await res.json()) as { reference: string }).reference)));
    assert.equal(references.size, 1);
  });

  test("the proxy's own origin comes from its public URL, not from the request's Host", async () => {
    // The shared stack allows any origin; one with an allow-list shows the rule.
    const strict = await startDevStack({ logger: silent, registerWebhook: false, allowedOrigins: ['https://shop.example'] });
    try {
      const forged = await fetch(`${strict.apiUrl}/payments`, {
        method: 'POST',
        headers: { ...json, origin: 'https://evil.example', host: 'evil.example' },
        body: '{"value":1}',
      });
      assert.equal(forged.status, 403);
      const own = await fetch(`${strict.apiUrl}/payments`, { method: 'POST', headers: { ...json, origin: strict.url }, body: '{"value":1}' });
      assert.equal(own.status, 201);
    } finally {
      await strict.close();
    }
  });
});
