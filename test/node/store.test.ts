/** The SQLite store on a real file in a temporary directory. */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import Database from 'libsql';
import { DB_FILE_NAME, openSqliteStore } from '../../server/store/sqlite/sqlite-store.ts';
import type { CheckoutRecord, PaymentRecord, PayoutRecord } from '../../server/store/store.ts';
import { paymentOutcome, refusalOutcome, transferOutcome } from '../../server/domain/outcomes.ts';

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
    assert.ok(statSync(join(dir, DB_FILE_NAME)).size > 0, 'statSync(join(dir, DB_FILE_NAME)).size > 0');
    const db = new Database(join(dir, DB_FILE_NAME));
    const versions = (db.prepare('SELECT version FROM migrations').all() as { version: number }[]).map((r) => r.version);
    const tables = (db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").all() as { name: string }[]).map((r) => r.name);
    db.close();
    assert.deepEqual(versions, [1, 2, 3, 4, 5]);
    for (const table of ['checkouts', 'payments', 'partner_tokens', 'webhook_events', 'payouts']) assert.ok(tables.includes(table), table);
  });

  test('reopening keeps every record and applies no migration twice', async () => {
    const dir = tempDir();
    let store = openSqliteStore({ dataDir: dir });
    await store.createCheckout(checkout());
    await store.attachPayment(checkout().id, payment({ checkoutId: checkout().id }), 0, null);
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
    await store.attachPayment(checkout().id, payment({ checkoutId: checkout().id }), 0, null);
    await store.attachPayment(checkout().id, payment({ reference: 'ref2', transactionId: 'tx-2', createdAt: 2_000, checkoutId: checkout().id }), 1, 'ref1');
    // The same transaction id again violates a constraint: neither the payment nor the checkout change.
    await assert.rejects(store.attachPayment(checkout().id, payment({ reference: 'ref3', transactionId: 'tx-2', checkoutId: checkout().id }), 2, 'ref2'));
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

const payout = (over: Partial<PayoutRecord> = {}): PayoutRecord => ({
  id: 'tr_AAAAAAAAAAAAAAAAAAAAAAAA',
  idempotencyKey: 'key-1',
  requestHash: 'hash-1',
  kind: 'key',
  checkoutId: null,
  valueCents: 1000,
  pixKey: 'ana@cliente.example',
  pixKeyType: 'EMAIL',
  customerDocument: '12345678909',
  merchantReference: 'seller-1',
  transactionId: 'ptx-1',
  state: 'sending',
  reference: null,
  reason: null,
  reasonMessage: null,
  createdAt: 1_000,
  updatedAt: 1_000,
  ...over,
});
const APPROVED = 2;
const CANCELED = 3;
const transfer = (reference: string, at = 2_000) => ({ reference, partnerStatus: 1, final: false, valueCents: 1000, createdAt: at, updatedAt: at });

describe('SQLite store: payouts', () => {
  test('one payout per idempotency key: the second create answers the first, unchanged', async () => {
    const store = openSqliteStore({ dataDir: tempDir() });
    const first = await store.payouts.create(payout(), APPROVED);
    const second = await store.payouts.create(payout({ id: 'tr_BBBBBBBBBBBBBBBBBBBBBBBB', transactionId: 'ptx-2', valueCents: 5 }), APPROVED);
    assert.ok('created' in first && first.created, '’created’ in first && first.created');
    assert.ok('created' in second && !second.created, '’created’ in second && !second.created');
    assert.equal(second.payout.id, 'tr_AAAAAAAAAAAAAAAAAAAAAAAA');
    assert.equal(second.payout.valueCents, 1000);
    await store.close();
  });

  test('sent: follows its transfer and forgets the document; its final status gives the payout its outcome and one event naming it', async () => {
    const store = openSqliteStore({ dataDir: tempDir() });
    await store.payouts.create(payout(), APPROVED);
    const sent = await store.payouts.markSent('tr_AAAAAAAAAAAAAAAAAAAAAAAA', transfer('pref-1'), transferOutcome);
    assert.deepEqual([sent.payout.state, sent.payout.reference, sent.payout.customerDocument, sent.outcome], ['pending', 'pref-1', null, null]);
    assert.equal((await store.transfers.get('pref-1'))?.final, false);
    const change = await store.transfers.updateStatus('pref-1', APPROVED, true, 3_000, transferOutcome);
    assert.equal(change.outcome?.type, 'transfer.approved');
    assert.equal(change.outcome?.data.transfer_id, 'tr_AAAAAAAAAAAAAAAAAAAAAAAA');
    assert.equal(change.outcome?.data.transfer_reference, 'seller-1');
    assert.equal((await store.payouts.get('tr_AAAAAAAAAAAAAAAAAAAAAAAA'))?.state, 'approved');
    assert.deepEqual(
      (await store.outbox.list()).map((e) => e.type),
      ['transfer.approved'],
    );
    await store.close();
  });

  test('its webhook before its answer: sending it finds the transfer final and takes its outcome, with no second event', async () => {
    const store = openSqliteStore({ dataDir: tempDir() });
    await store.payouts.create(payout(), APPROVED);
    await store.transfers.track(transfer('pref-2'));
    await store.transfers.updateStatus('pref-2', CANCELED, true, 2_500, transferOutcome);
    const sent = await store.payouts.markSent('tr_AAAAAAAAAAAAAAAAAAAAAAAA', transfer('pref-2', 3_000), transferOutcome);
    assert.equal(sent.payout.state, 'canceled');
    assert.equal(sent.outcome?.type, 'transfer.canceled');
    assert.equal((await store.outbox.list()).length, 1);
    await store.close();
  });

  test('refused: the reason, the event in the outbox with the order of a refund, in one step; unknown and discard', async () => {
    const store = openSqliteStore({ dataDir: tempDir() });
    await store.createCheckout(checkout());
    await store.attachPayment(checkout().id, payment({ checkoutId: checkout().id }), 0, null);
    await store.updatePaymentStatus('ref1', APPROVED, true, 2_000, paymentOutcome);
    await store.payouts.create(payout({ checkoutId: checkout().id }), APPROVED);
    const refused = await store.payouts.markRefused('tr_AAAAAAAAAAAAAAAAAAAAAAAA', 'kyc_not_approved', 'KYC pending', 3_000, refusalOutcome);
    assert.deepEqual([refused.payout.state, refused.payout.reason, refused.payout.customerDocument], ['refused', 'kyc_not_approved', null]);
    assert.equal(refused.outcome.data.order_id, 'order-1');
    assert.ok(
      (await store.outbox.list()).some((e) => e.type === 'transfer.refused'),
      '(await store.outbox.list()).some((e) => e.type === ’transfer.refused’)',
    );
    // Unknown: kept, and never discarded; a payout with no answer yet may be discarded.
    await store.payouts.create(payout({ id: 'tr_CCCCCCCCCCCCCCCCCCCCCCCC', idempotencyKey: 'key-3', transactionId: 'ptx-3' }), APPROVED);
    assert.equal((await store.payouts.markUnknown('tr_CCCCCCCCCCCCCCCCCCCCCCCC', 4_000)).state, 'unknown');
    await store.payouts.create(payout({ id: 'tr_DDDDDDDDDDDDDDDDDDDDDDDD', idempotencyKey: 'key-4', transactionId: 'ptx-4' }), APPROVED);
    await store.payouts.discard('tr_DDDDDDDDDDDDDDDDDDDDDDDD');
    assert.equal(await store.payouts.get('tr_DDDDDDDDDDDDDDDDDDDDDDDD'), null);
    // A payout that has an answer is never discarded.
    await store.payouts.discard('tr_CCCCCCCCCCCCCCCCCCCCCCCC');
    assert.equal((await store.payouts.get('tr_CCCCCCCCCCCCCCCCCCCCCCCC'))?.state, 'unknown');
    await store.close();
  });

  test('refunds: not paid, what is left (0 asks for all of it), never past the paid value', async () => {
    const store = openSqliteStore({ dataDir: tempDir() });
    await store.createCheckout(checkout());
    const refund = (n: number, cents: number) =>
      store.payouts.create(
        payout({ id: `tr_${String(n).padStart(24, 'R')}`, idempotencyKey: `r-${n}`, transactionId: `rt-${n}`, checkoutId: checkout().id, valueCents: cents }),
        APPROVED,
      );
    assert.deepEqual(await refund(1, 100), { problem: 'not_paid', refundableCents: 0 });
    await store.attachPayment(checkout().id, payment({ checkoutId: checkout().id }), 0, null);
    await store.updatePaymentStatus('ref1', APPROVED, true, 2_000, paymentOutcome);
    assert.ok('created' in (await refund(2, 4000)), '’created’ in (await refund(2, 4000))');
    assert.deepEqual(await refund(3, 991), { problem: 'exceeds', refundableCents: 990 });
    const rest = await refund(4, 0);
    assert.ok('payout' in rest && rest.payout.valueCents === 990, '’payout’ in rest && rest.payout.valueCents === 990');
    assert.deepEqual(await refund(5, 0), { problem: 'exceeds', refundableCents: 0 });
    await store.close();
  });

  test('the list: newest first, by state, from a cursor; a crash mid-call found by age', async () => {
    const store = openSqliteStore({ dataDir: tempDir() });
    for (let n = 1; n <= 5; n++) {
      await store.payouts.create(
        payout({ id: `tr_${String(n).padStart(24, 'L')}`, idempotencyKey: `l-${n}`, transactionId: `lt-${n}`, createdAt: n * 1_000 }),
        APPROVED,
      );
    }
    await store.payouts.markUnknown(`tr_${'2'.padStart(24, 'L')}`, 9_000);
    const all = (await store.payouts.list({ limit: 10 })).payouts;
    assert.deepEqual(
      all.map((p) => p.idempotencyKey),
      ['l-5', 'l-4', 'l-3', 'l-2', 'l-1'],
    );
    const after3 = (await store.payouts.list({ limit: 10, before: all[2]!.seq })).payouts;
    assert.deepEqual(
      after3.map((p) => p.idempotencyKey),
      ['l-2', 'l-1'],
    );
    assert.deepEqual(
      (await store.payouts.list({ limit: 10, states: ['unknown'] })).payouts.map((p) => p.idempotencyKey),
      ['l-2'],
    );
    const expired = await store.payouts.expireSending(3_500, 10_000);
    assert.deepEqual(expired.map((p) => [p.idempotencyKey, p.state, p.reason]).sort(), [
      ['l-1', 'unknown', 'answer_lost'],
      ['l-3', 'unknown', 'answer_lost'],
    ]);
    await store.close();
  });
});
