/** The SQLite store on a real file in a temporary directory. */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import Database from 'libsql';
import { DB_FILE_NAME, openSqliteStore } from '../../server/store/sqlite/sqlite-store.ts';
import type { CheckoutRecord, PaymentRecord } from '../../server/store/store.ts';
import { paymentOutcome } from '../../server/domain/outcomes.ts';

const dirs: string[] = [];
after(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'pix-store-'));
  dirs.push(dir);
  return dir;
}

const checkout = (over: Partial<CheckoutRecord> = {}): CheckoutRecord => ({
  id: 'co_AAAAAAAAAAAAAAAAAAAAAAAA',
  orderId: 'order-1',
  valueCents: 4990,
  description: 'Loja',
  name: 'Maria',
  document: '52998224725',
  callback: null,
  paymentReference: null,
  renewalsUsed: 0,
  createdAt: 1_000,
  ...over,
});

const payment = (over: Partial<PaymentRecord> = {}): PaymentRecord => ({
  reference: 'ref1',
  checkoutId: null,
  valueCents: 4990,
  description: null,
  partnerStatus: 1,
  brcode: '000201...',
  qrCodeUrl: 'https://x/qr',
  checkoutUrl: 'https://x/c',
  createdAt: 1_000,
  expiresAt: 3_601_000,
  transactionId: 'tx-1',
  updatedAt: 1_000,
  final: false,
  ...over,
});

describe('SQLite store', () => {
  test('creates the file and its directory on first start, with the migrations recorded', async () => {
    const dir = join(tempDir(), 'nested', 'data');
    const store = openSqliteStore({ dataDir: dir });
    await store.ping();
    await store.close();
    assert.ok(statSync(join(dir, DB_FILE_NAME)).size > 0);
    const db = new Database(join(dir, DB_FILE_NAME));
    const versions = (db.prepare('SELECT version FROM migrations').all() as { version: number }[]).map((r) => r.version);
    const tables = (db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").all() as { name: string }[]).map((r) => r.name);
    db.close();
    assert.deepEqual(versions, [1, 2, 3]);
    for (const table of ['checkouts', 'payments', 'partner_tokens', 'webhook_events', 'payouts']) assert.ok(tables.includes(table), table);
  });

  test('reopening keeps every record and applies no migration twice', async () => {
    const dir = tempDir();
    let store = openSqliteStore({ dataDir: dir });
    await store.createCheckout(checkout());
    await store.attachPayment(checkout().id, payment({ checkoutId: checkout().id }), 0);
    await store.tokens.save('https://partner|me', 'the-token');
    const eventId = await store.webhookEvents.add('{"raw":true}', 5);
    await store.close();

    store = openSqliteStore({ dataDir: dir });
    assert.equal((await store.getCheckout(checkout().id))?.paymentReference, 'ref1');
    assert.equal((await store.getPayment('ref1'))?.valueCents, 4990);
    assert.equal(await store.tokens.load('https://partner|me'), 'the-token');
    assert.deepEqual(await store.webhookEvents.unprocessed(10), [{ id: eventId, rawBody: '{"raw":true}', receivedAt: 5, processedAt: null }]);
    await store.webhookEvents.markProcessed(eventId, 9);
    assert.deepEqual(await store.webhookEvents.unprocessed(10), []);
    await store.close();
  });

  test('a database from a newer proxy is refused', async () => {
    const dir = tempDir();
    await openSqliteStore({ dataDir: dir }).close();
    const db = new Database(join(dir, DB_FILE_NAME));
    db.prepare('INSERT INTO migrations (version, applied_at) VALUES (99, 0)').run();
    db.close();
    assert.throws(() => openSqliteStore({ dataDir: dir }), /newer than this proxy/);
  });

  test('one checkout per order id: a second insert answers the first', async () => {
    const store = openSqliteStore({ dataDir: tempDir() });
    const first = await store.createCheckout(checkout());
    const second = await store.createCheckout(checkout({ id: 'co_BBBBBBBBBBBBBBBBBBBBBBBB', valueCents: 1 }));
    assert.equal(first.created, true);
    assert.equal(second.created, false);
    assert.equal(second.checkout.id, first.checkout.id);
    assert.equal(second.checkout.valueCents, 4990);
    await store.close();
  });

  test('a final status is never changed again (no downgrade)', async () => {
    const store = openSqliteStore({ dataDir: tempDir() });
    await store.insertPayment(payment());
    await store.updatePaymentStatus('ref1', 2, true, 2_000, paymentOutcome);
    await store.updatePaymentStatus('ref1', 1, false, 3_000, paymentOutcome);
    const stored = await store.getPayment('ref1');
    assert.deepEqual([stored?.partnerStatus, stored?.final, stored?.updatedAt], [2, true, 2_000]);
    await store.close();
  });

  test("a checkout's payments, oldest first; attach is atomic", async () => {
    const store = openSqliteStore({ dataDir: tempDir() });
    await store.createCheckout(checkout());
    await store.attachPayment(checkout().id, payment({ checkoutId: checkout().id }), 0);
    await store.attachPayment(checkout().id, payment({ reference: 'ref2', transactionId: 'tx-2', createdAt: 2_000, checkoutId: checkout().id }), 1);
    // The same transaction id again violates a constraint: neither the payment nor the checkout change.
    await assert.rejects(store.attachPayment(checkout().id, payment({ reference: 'ref3', transactionId: 'tx-2', checkoutId: checkout().id }), 2));
    assert.deepEqual(
      (await store.checkoutPayments(checkout().id)).map((p) => p.reference),
      ['ref1', 'ref2'],
    );
    const stored = await store.getCheckout(checkout().id);
    assert.deepEqual([stored?.paymentReference, stored?.renewalsUsed], ['ref2', 1]);
    await store.close();
  });

  test('the token store clears', async () => {
    const store = openSqliteStore({ dataDir: tempDir() });
    await store.tokens.save('k', 'a');
    await store.tokens.save('k', 'b');
    assert.equal(await store.tokens.load('k'), 'b');
    await store.tokens.clear('k');
    assert.equal(await store.tokens.load('k'), null);
    await store.close();
    await assert.rejects(store.ping(), /closed/);
  });
});
