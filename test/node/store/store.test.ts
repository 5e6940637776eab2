/**
 * The two stores behind one interface, the same tests against each: SQLite on a real file in a
 * temporary directory, Postgres in a real throwaway server (one cluster for this file, a fresh
 * database per test). A second store object on the same database is a second instance on Postgres
 * (its own claims, leases, changes heard); on SQLite every store object is the one holder. What only
 * one of them has (SQLite's file, Postgres's migrations table and cluster) is tested on its own.
 */
import assert from 'node:assert/strict';
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { after, afterEach, before, describe, test as nodeTest } from 'node:test';
import Database from 'libsql';
import pg from 'pg';
import {
  amountMismatchOutcome,
  disputeOutcome,
  overpaidOutcome,
  paymentOutcome,
  refusalOutcome,
  returnOutcome,
  transferOutcome,
} from '../../../server/domain/outcomes.ts';
import { PARTNER_STATUS } from '../../../server/partner/wire.ts';
import { openStore, type StoreOptions } from '../../../server/store/open.ts';
import { DB_FILE_NAME } from '../../../server/store/sqlite/sqlite-store.ts';
import { StoreError, type PaymentRecord, type ReportCursor, type Store, type StoreChange } from '../../../server/store/store.ts';
import { waitFor } from '../../support/checks.ts';
import { checkoutRecord as checkout, paymentRecord, payoutRecord as payout, transferRecord as transfer } from '../../support/records.ts';
import { startPostgres, type RunningPostgres } from '../../support/postgres.ts';
import { tempDirs } from '../../support/temp-dirs.ts';
import { databaseDeadlines } from '../../../server/config/database.ts';

/** A store call that never answers fails its test instead of hanging the file. */
const test = (name: string, fn: () => Promise<void>): void => void nodeTest(name, { timeout: 30_000 }, fn);

const PENDING = PARTNER_STATUS.pending;
const APPROVED = PARTNER_STATUS.approved;
const CANCELED = PARTNER_STATUS.canceled;

const tempDir = tempDirs('pix-store-');

let postgres: RunningPostgres | undefined;
before(async () => {
  postgres = await startPostgres();
});

/** Every store a test opened, closed after it whatever happened (a second close does nothing). */
const opened: Store[] = [];
afterEach(
  async () => {
    await Promise.all(opened.splice(0).map((store) => store.close()));
  },
  { timeout: 30_000 },
);
after(async () => {
  await postgres?.stop();
});

/** Where each store's database is, so that another store can be opened on it. */
type Location = Pick<StoreOptions, 'dataDir' | 'databaseUrl'>;
const locations = new WeakMap<Store, Location>();
type Tuning = Pick<StoreOptions, 'claimMs' | 'cacheSize'>;

async function openAt(location: Location, tuning: Tuning = {}): Promise<Store> {
  const store = await openStore({ ...location, deadlines: databaseDeadlines(), ...tuning });
  opened.push(store);
  locations.set(store, location);
  return store;
}
function locationOf(store: Store): Location {
  const location = locations.get(store);
  assert.ok(location, 'a store this file opened');
  return location;
}

interface StoreKind {
  name: 'SQLite' | 'Postgres';
  /** A store on a new, empty database. */
  open(tuning?: Tuning): Promise<Store>;
  /** Another store on the database of `of` (open or closed): another instance on Postgres, the same holder on SQLite. */
  reopen(of: Store, tuning?: Tuning): Promise<Store>;
}

const kinds: StoreKind[] = [
  {
    name: 'SQLite',
    open: (tuning) => openAt({ dataDir: tempDir() }, tuning),
    reopen: (of, tuning) => openAt(locationOf(of), tuning),
  },
  {
    name: 'Postgres',
    async open(tuning) {
      assert.ok(postgres, 'the Postgres cluster started in before()');
      // dataDir is not used with a database URL: an empty directory shows it if it were.
      return openAt({ dataDir: tempDir(), databaseUrl: await postgres.createDatabase() }, tuning);
    },
    reopen: (of, tuning) => openAt(locationOf(of), tuning),
  },
];

/** A query on a Postgres store's database, on a connection of its own. */
async function sql<R extends pg.QueryResultRow>(store: Store, text: string, values?: unknown[]): Promise<R[]> {
  const url = locationOf(store).databaseUrl;
  assert.ok(url, 'a Postgres store');
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<R>(text, values)).rows;
  } finally {
    await client.end();
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The store suite's payment: a whole checkout's R$ 49,90, created at 1 s. */
const payment = (over: Partial<PaymentRecord> = {}): PaymentRecord => paymentRecord('ref1', 1_000, { valueCents: 4990, transactionId: 'tx-1', ...over });

/** `tr_` and 24 characters, unique per tag and number. */
const payoutId = (tag: string, n: number) => `tr_${tag}${String(n).padStart(24 - tag.length, '0')}`;

/** A checkout of `cents` whose one payment is approved, written to the store directly (the stack-level one is paidCheckout in test/support/checks.ts). */
async function storePaidCheckout(store: Store, cents: number, id = checkout().id): Promise<string> {
  await store.checkouts.create(checkout({ id, orderId: `order-${id}`, valueCents: cents }));
  const reference = `pay-${id}`;
  assert.equal(await store.checkouts.attachPayment(id, payment({ reference, transactionId: `tx-${id}`, checkoutId: id, valueCents: cents }), 0, null), true);
  assert.equal((await store.payments.updateStatus(reference, APPROVED, true, 2_000, paymentOutcome)).changed, true);
  return id;
}

/** `count` payments made final at `at`: as many deliveries in the outbox, due at `at`; answers their ids, oldest first. */
async function dueDeliveries(store: Store, count: number, at: number): Promise<number[]> {
  for (let n = 1; n <= count; n++) {
    await store.payments.insert(payment({ reference: `due-${n}`, transactionId: `tx-due-${n}` }));
    assert.ok((await store.payments.updateStatus(`due-${n}`, APPROVED, true, at, paymentOutcome)).outcome, `an outcome for due-${n}`);
  }
  const ids = (await store.outbox.list({ state: 'pending' })).map((e) => e.id);
  assert.equal(ids.length, count);
  return ids;
}

const ids = (records: readonly { id: number }[]) => records.map((r) => r.id);

/** Opens connections up front (Postgres's pool opens them on demand), so that calls made at once run at once. */
async function warm(...stores: Store[]): Promise<void> {
  await Promise.all(stores.flatMap((store) => Array.from({ length: 8 }, () => store.checkouts.get('co_warm'))));
}

for (const kind of kinds) {
  describe(`${kind.name} store`, () => {
    test('names its kind; only a shared store has a cluster', async () => {
      const store = await kind.open();
      assert.equal(store.kind, kind.name === 'SQLite' ? 'sqlite' : 'postgres');
      if (kind.name === 'SQLite') assert.equal(store.cluster, undefined);
      else assert.ok(store.cluster && store.cluster.instanceId.length > 0, 'a Postgres store has a cluster with an instance id');
      await store.ping();
    });

    test('widget files: each version kept with its files (a second store reads them), kept again, and forgotten once no start kept it since', async () => {
      const store = await kind.open();
      const bytes = (text: string) => new TextEncoder().encode(text);
      const text = (body: Uint8Array | null) => (body ? new TextDecoder().decode(body) : null);
      await store.widgetFiles.keep(
        'version1',
        [
          { name: 'pix-checkout.later.js', body: bytes('later 1') },
          { name: 'pix-checkout.en.js', body: bytes('en 1\u0000') },
        ],
        1_000,
        0,
      );
      await store.widgetFiles.keep('version2', [{ name: 'pix-checkout.later.js', body: bytes('later 2') }], 2_000, 0);
      const other = await kind.reopen(store);
      assert.equal(text(await other.widgetFiles.get('version1', 'pix-checkout.later.js')), 'later 1');
      assert.equal(text(await other.widgetFiles.get('version1', 'pix-checkout.en.js')), 'en 1\u0000', 'the bytes as kept');
      assert.equal(text(await other.widgetFiles.get('version2', 'pix-checkout.later.js')), 'later 2');
      assert.equal(await other.widgetFiles.get('version2', 'pix-checkout.en.js'), null, 'a file that version did not have');
      assert.equal(await other.widgetFiles.get('version3', 'pix-checkout.later.js'), null, 'a version never kept');
      // version2 starts again at 5 s and forgets what no start kept since 1.5 s: version1.
      await store.widgetFiles.keep('version2', [{ name: 'pix-checkout.later.js', body: bytes('later 2') }], 5_000, 1_500);
      assert.equal(await other.widgetFiles.get('version1', 'pix-checkout.later.js'), null);
      assert.equal(text(await other.widgetFiles.get('version2', 'pix-checkout.later.js')), 'later 2');
      // The version starting is never forgotten by its own start, however old its last keep.
      await store.widgetFiles.keep('version2', [], 9_000, 8_000);
      assert.equal(text(await other.widgetFiles.get('version2', 'pix-checkout.later.js')), 'later 2');
    });

    test('reports: each table a page at a time by creation time (ties by key), within the range, with the order id; the outbox read in order', async () => {
      const store = await kind.open();
      const id = (n: number) => `co_${String(n).padStart(24, 'R')}`;
      // Two at 5 s (a tie: ordered by key), one at 6 s, one outside the range (at 9 s).
      for (const [n, at] of [
        [2, 5_000],
        [1, 5_000],
        [3, 6_000],
        [4, 9_000],
      ] as const) {
        await store.checkouts.create(checkout({ id: id(n), orderId: `order-r${n}`, createdAt: at }));
        assert.equal(
          await store.checkouts.attachPayment(id(n), payment({ reference: `rref-${n}`, transactionId: `tx-r${n}`, checkoutId: id(n), createdAt: at }), 0, null),
          true,
        );
      }
      await store.payments.insert(payment({ reference: 'rref-0', transactionId: 'tx-r0', createdAt: 5_500 }));
      await store.payouts.create(
        payout({ id: payoutId('R', 1), idempotencyKey: 'rk-1', transactionId: 'rptx-1', checkoutId: null, createdAt: 5_000 }),
        APPROVED,
      );
      await store.payouts.create(
        payout({ id: payoutId('R', 2), idempotencyKey: 'rk-2', transactionId: 'rptx-2', checkoutId: null, createdAt: 5_000 }),
        APPROVED,
      );
      const all = async <R>(read: (cursor: ReportCursor | null) => Promise<R[]>, cursorOf: (r: R) => ReportCursor) => {
        const rows: R[] = [];
        let cursor: ReportCursor | null = null;
        for (let i = 0; i < 20; i++) {
          const page = await read(cursor);
          rows.push(...page);
          if (page.length < 1) return rows;
          cursor = cursorOf(page.at(-1)!);
        }
        return rows;
      };
      const checkouts = await all(
        (c) => store.reports.checkouts(5_000, 9_000, c, 1),
        (r) => ({ createdAt: r.createdAt, key: r.id }),
      );
      assert.deepEqual(
        checkouts.map((c) => [c.id, c.payment?.partnerStatus]),
        [
          [id(1), 1],
          [id(2), 1],
          [id(3), 1],
        ],
      );
      const payments = await all(
        (c) => store.reports.payments(5_000, 9_000, c, 1),
        (r) => ({ createdAt: r.createdAt, key: r.reference }),
      );
      assert.deepEqual(
        payments.map((p) => [p.reference, p.orderId]),
        [
          ['rref-1', 'order-r1'],
          ['rref-2', 'order-r2'],
          ['rref-0', null],
          ['rref-3', 'order-r3'],
        ],
      );
      const payouts = await all(
        (c) => store.reports.payouts(5_000, 9_000, c, 1),
        (r) => ({ createdAt: r.createdAt, key: String(r.seq) }),
      );
      assert.deepEqual(
        payouts.map((p) => p.id),
        [payoutId('R', 1), payoutId('R', 2)],
      );
      assert.deepEqual(
        (await store.reports.payments(5_000, 9_000, null, 10)).map((p) => p.reference),
        ['rref-1', 'rref-2', 'rref-0', 'rref-3'],
        'one page',
      );

      // The outbox in the order it was written, and resumed.
      await store.payments.updateStatus('rref-1', APPROVED, true, 7_000, paymentOutcome);
      await store.payments.updateStatus('rref-2', APPROVED, true, 7_001, paymentOutcome);
      const last = await store.outbox.lastId();
      const written = await store.outbox.after(0, 10);
      assert.deepEqual(
        written.map((e) => e.reference),
        ['rref-1', 'rref-2'],
      );
      assert.equal(last, written.at(-1)!.id);
      assert.deepEqual(
        (await store.outbox.after(written[0]!.id, 10)).map((e) => e.reference),
        ['rref-2'],
      );
      assert.equal(await store.outbox.resume(50_000), 2);
      assert.ok((await store.outbox.list()).every((e) => e.nextAttemptAt === 50_000 && e.createdAt === 50_000));
    });

    test('reopening keeps every record and applies no migration twice', async () => {
      const store = await kind.open();
      await store.checkouts.create(checkout());
      assert.equal(await store.checkouts.attachPayment(checkout().id, payment({ checkoutId: checkout().id }), 0, null), true);
      await store.tokens.save('https://partner|me', 'the-token');
      const eventId = await store.webhookEvents.add('{"raw":true}', 5);
      await store.close();

      const again = await kind.reopen(store);
      assert.equal((await again.checkouts.get(checkout().id))?.paymentReference, 'ref1');
      assert.equal((await again.payments.get('ref1'))?.valueCents, 4990);
      assert.equal(await again.tokens.load('https://partner|me'), 'the-token');
      assert.deepEqual(await again.webhookEvents.unprocessed(10), [{ id: eventId, rawBody: '{"raw":true}', receivedAt: 5, processedAt: null }]);
      await again.webhookEvents.markProcessed(eventId, 9);
      assert.deepEqual(await again.webhookEvents.unprocessed(10), []);
    });

    test('one checkout per order id: a second insert answers the first', async () => {
      const store = await kind.open();
      const first = await store.checkouts.create(checkout());
      const second = await store.checkouts.create(checkout({ id: 'co_BBBBBBBBBBBBBBBBBBBBBBBB', valueCents: 1 }));
      assert.equal(first.created, true);
      assert.equal(second.created, false);
      assert.equal(second.checkout.id, first.checkout.id);
      assert.equal(second.checkout.valueCents, 4990);
      assert.equal(await store.checkouts.get('co_BBBBBBBBBBBBBBBBBBBBBBBB'), null);
    });

    test('a final status is never changed again (no downgrade); its outcome is recorded once', async () => {
      const store = await kind.open();
      await store.payments.insert(payment());
      assert.deepEqual(await store.payments.updateStatus('ref1', PENDING, false, 1_500, paymentOutcome), { changed: true, outcome: null });
      const final = await store.payments.updateStatus('ref1', APPROVED, true, 2_000, paymentOutcome);
      assert.deepEqual([final.changed, final.outcome?.type, final.outcome?.data.reference], [true, 'payment.paid', 'ref1']);
      assert.deepEqual(await store.payments.updateStatus('ref1', PENDING, false, 3_000, paymentOutcome), { changed: false, outcome: null });
      assert.deepEqual(await store.payments.updateStatus('ref1', CANCELED, true, 3_000, paymentOutcome), { changed: false, outcome: null });
      const stored = await store.payments.get('ref1');
      assert.deepEqual([stored?.partnerStatus, stored?.final, stored?.updatedAt], [APPROVED, true, 2_000]);
      assert.deepEqual(
        (await store.outbox.list()).map((e) => [e.type, e.reference, e.eventId]),
        [['payment.paid', 'ref1', final.outcome?.id]],
      );
      assert.deepEqual(
        (await store.payments.nonFinal(10)).map((p) => p.reference),
        [],
      );
    });

    test("the reconciler's due payments: by due time from the last read (a check counts), near expiry sooner, parked ones hourly; counted when parked", async () => {
      const store = await kind.open();
      const schedule = { everyMs: 60_000, nearMs: 10_000, nearWindowMs: 300_000, cancelAfterMs: 3_600_000, parkAfterMs: 4_500_000, parkedEveryMs: 3_600_000 };
      const now = 10_000_000;
      const open = (reference: string, createdAt: number, expiresAt: number, updatedAt: number) =>
        store.payments.insert(payment({ reference, transactionId: `tx-${reference}`, createdAt, expiresAt, updatedAt }));
      await open('read-recently', 1_000, 9_000_000, 9_900_000); // due at 9,960,000
      await open('checked-recently', 2_000, 9_000_000, 9_000_000); // checked below: due at 10,010,000
      await open('near-expiry', 3_000, now + 100_000, 9_985_000); // near: due at 9,995,000
      await open('parked-checked', 500, 1_000_000, 1_000_000); // parked, checked at 8,000,000: due at 11,600,000
      await open('parked-due', 600, 1_000_000, 1_000_000); // parked, checked at 6,000,000: due at 9,600,000
      await open('newest-never-checked', 4_000, 9_000_000, 9_000_000); // due at 9,060,000
      await open('final', 100, 1_000_000, 1_000_000);
      await store.payments.updateStatus('final', CANCELED, true, 1_000_000, paymentOutcome);
      await store.payments.markChecked(['checked-recently'], 9_950_000);
      await store.payments.markChecked(['parked-checked'], 8_000_000);
      await store.payments.markChecked(['parked-due', 'final'], 6_000_000);
      // A check is not a confirmed status: the record's updatedAt stays.
      assert.equal((await store.payments.get('checked-recently'))?.updatedAt, 9_000_000);
      assert.deepEqual(
        (await store.payments.due(now, 10, schedule)).map((p) => p.reference),
        ['newest-never-checked', 'parked-due', 'read-recently', 'near-expiry'],
      );
      assert.deepEqual(
        (await store.payments.due(now, 2, schedule)).map((p) => p.reference),
        ['newest-never-checked', 'parked-due'],
      );
      assert.deepEqual(
        (await store.payments.due(now + 10_000, 10, schedule)).map((p) => p.reference),
        ['newest-never-checked', 'parked-due', 'read-recently', 'near-expiry', 'checked-recently'],
      );
      assert.equal(await store.payments.countOpenExpiredBefore(now - schedule.parkAfterMs), 2);
      assert.equal(await store.payments.countOpenExpiredBefore(1_000_000), 0);
    });

    test("the reconciler's due transfers: by due time from the last read, a check counting, the longest overdue first", async () => {
      const store = await kind.open();
      await store.transfers.track({ ...transfer('t-old-checked', 1_000), createdAt: 1_000 });
      await store.transfers.track({ ...transfer('t-newer', 50_000), createdAt: 50_000 });
      await store.transfers.track({ ...transfer('t-old', 2_000), createdAt: 2_000 });
      await store.transfers.track({ ...transfer('t-final', 500), createdAt: 500 });
      await store.transfers.updateStatus('t-final', APPROVED, true, 600, transferOutcome);
      await store.transfers.markChecked(['t-old-checked', 't-final'], 100_000);
      assert.equal((await store.transfers.get('t-old-checked'))?.updatedAt, 1_000, 'a check is not an update');
      assert.deepEqual(
        (await store.transfers.due(120_000, 10, 60_000)).map((t) => t.reference),
        ['t-old', 't-newer'],
      );
      assert.deepEqual(
        (await store.transfers.due(120_000, 1, 60_000)).map((t) => t.reference),
        ['t-old'],
      );
      assert.deepEqual(
        (await store.transfers.due(160_000, 10, 60_000)).map((t) => t.reference),
        ['t-old', 't-newer', 't-old-checked'],
      );
    });

    test("a checkout's payments, oldest first; attach is atomic", async () => {
      const store = await kind.open();
      await store.checkouts.create(checkout());
      assert.equal(await store.checkouts.attachPayment(checkout().id, payment({ checkoutId: checkout().id }), 0, null), true);
      assert.equal(
        await store.checkouts.attachPayment(
          checkout().id,
          payment({ reference: 'ref2', transactionId: 'tx-2', createdAt: 2_000, checkoutId: checkout().id }),
          1,
          'ref1',
        ),
        true,
      );
      // The same transaction id again violates a constraint: neither the payment nor the checkout change.
      await assert.rejects(
        store.checkouts.attachPayment(checkout().id, payment({ reference: 'ref3', transactionId: 'tx-2', checkoutId: checkout().id }), 2, 'ref2'),
      );
      assert.deepEqual(
        (await store.checkouts.payments(checkout().id)).map((p) => p.reference),
        ['ref1', 'ref2'],
      );
      assert.equal(await store.payments.get('ref3'), null);
      const stored = await store.checkouts.get(checkout().id);
      assert.deepEqual([stored?.paymentReference, stored?.renewalsUsed], ['ref2', 1]);
    });

    test("attach with nothing attached, twice: the first is made current; the second is kept in the checkout's payments, never current", async () => {
      const store = await kind.open();
      await store.checkouts.create(checkout());
      assert.equal(await store.checkouts.attachPayment(checkout().id, payment({ checkoutId: checkout().id }), 0, null), true);
      assert.equal(
        await store.checkouts.attachPayment(checkout().id, payment({ reference: 'ref2', transactionId: 'tx-2', checkoutId: checkout().id }), 0, null),
        false,
      );
      const stored = await store.checkouts.get(checkout().id);
      assert.deepEqual([stored?.paymentReference, stored?.renewalsUsed], ['ref1', 0]);
      assert.deepEqual(
        (await store.checkouts.payments(checkout().id)).map((p) => p.reference),
        ['ref1', 'ref2'],
      );
      assert.equal((await store.payments.get('ref2'))?.checkoutId, checkout().id);
    });

    test('a renewal naming the current payment is made current; one naming a stale payment is kept but not made current', async () => {
      const store = await kind.open();
      await store.checkouts.create(checkout());
      await store.checkouts.attachPayment(checkout().id, payment({ checkoutId: checkout().id }), 0, null);
      const renewal = (n: number) => payment({ reference: `ref${n}`, transactionId: `tx-${n}`, createdAt: n * 1_000, checkoutId: checkout().id });
      assert.equal(await store.checkouts.attachPayment(checkout().id, renewal(2), 1, 'ref1'), true);
      // Another issuer read ref1 too, before ref2 was attached.
      assert.equal(await store.checkouts.attachPayment(checkout().id, renewal(3), 1, 'ref1'), false);
      // Nothing attached, as read before anything was: stale too.
      assert.equal(await store.checkouts.attachPayment(checkout().id, renewal(4), 1, null), false);
      const stored = await store.checkouts.get(checkout().id);
      assert.deepEqual([stored?.paymentReference, stored?.renewalsUsed], ['ref2', 1]);
      assert.deepEqual(
        (await store.checkouts.payments(checkout().id)).map((p) => p.reference),
        ['ref1', 'ref2', 'ref3', 'ref4'],
      );
      assert.equal(await store.checkouts.attachPayment(checkout().id, renewal(5), 2, 'ref2'), true);
      assert.deepEqual([(await store.checkouts.get(checkout().id))?.paymentReference, (await store.checkouts.get(checkout().id))?.renewalsUsed], ['ref5', 2]);
    });

    test('a renewal is not made current once a payment of the checkout is recorded paid (by another instance): it is kept, never current', async () => {
      const a = await kind.open();
      const b = await kind.reopen(a);
      await a.checkouts.create(checkout());
      await a.checkouts.attachPayment(checkout().id, payment({ checkoutId: checkout().id }), 0, null, APPROVED);
      // The issuer (A) checked ref1 unpaid; another instance (B) records it paid before A attaches.
      assert.equal((await b.payments.updateStatus('ref1', APPROVED, true, 2_000, paymentOutcome)).changed, true);
      const renewal = payment({ reference: 'ref2', transactionId: 'tx-2', createdAt: 2_000, checkoutId: checkout().id });
      assert.equal(await a.checkouts.attachPayment(checkout().id, renewal, 1, 'ref1', APPROVED), false);
      const stored = await a.checkouts.get(checkout().id);
      assert.deepEqual([stored?.paymentReference, stored?.renewalsUsed], ['ref1', 0]);
      assert.deepEqual(
        (await a.checkouts.payments(checkout().id)).map((p) => p.reference),
        ['ref1', 'ref2'],
      );
      // A canceled code does not stop a renewal.
      await a.checkouts.create(checkout({ id: 'co_CCCCCCCCCCCCCCCCCCCCCCCC', orderId: 'order-c' }));
      await a.checkouts.attachPayment(
        'co_CCCCCCCCCCCCCCCCCCCCCCCC',
        payment({ reference: 'c1', transactionId: 'tx-c1', checkoutId: 'co_CCCCCCCCCCCCCCCCCCCCCCCC' }),
        0,
        null,
      );
      await b.payments.updateStatus('c1', CANCELED, true, 2_000, paymentOutcome);
      const next = payment({ reference: 'c2', transactionId: 'tx-c2', checkoutId: 'co_CCCCCCCCCCCCCCCCCCCCCCCC' });
      assert.equal(await a.checkouts.attachPayment('co_CCCCCCCCCCCCCCCCCCCCCCCC', next, 1, 'c1', APPROVED), true);
    });

    test('what our transaction_id belongs to (a notification naming only it): a payment, else a payout with its transfer reference', async () => {
      const store = await kind.open();
      await store.payments.insert(payment({ reference: 'ref-tx', transactionId: 'tx-ours' }));
      await store.payouts.create(payout({ transactionId: 'ptx-9' }), APPROVED);
      assert.deepEqual(await store.payments.findByTransactionId('tx-ours'), { kind: 'payment', reference: 'ref-tx' });
      assert.equal(await store.payments.findByTransactionId('ptx-9'), null, 'a payout the partner has not answered yet: no reference to follow');
      await store.payouts.markSent(payout().id, transfer('pref-9', 3_000), transferOutcome);
      assert.deepEqual(await store.payments.findByTransactionId('ptx-9'), { kind: 'transfer', reference: 'pref-9' });
      assert.equal(await store.payments.findByTransactionId('nobody'), null);
    });

    test('a return of a paid payment: its larger totals recorded with their history and events, the payment still paid; refunds take only the rest', async () => {
      const store = await kind.open();
      const id = await storePaidCheckout(store, 4_990);
      const reference = `pay-${id}`;
      const at = (when: number) => (p: PaymentRecord, orderId: string | null) => returnOutcome(p, orderId, when);
      const first = await store.payments.recordReturn(reference, 1_000, 'notification', 3_000, at(3_000));
      assert.deepEqual(
        [first.changed, first.outcome?.type, first.outcome?.data.returned_value, first.outcome?.data.order_id],
        [true, 'payment.returned', 10, `order-${id}`],
      );
      // A copy, or an older total, changes nothing; a larger one is recorded, its own event.
      assert.deepEqual(await store.payments.recordReturn(reference, 1_000, 'notification', 3_500, at(3_500)), { changed: false, outcome: null });
      assert.equal((await store.payments.recordReturn(reference, 500, 'notification', 3_600, at(3_600))).changed, false);
      assert.equal((await store.payments.recordReturn(reference, 2_000, 'status', 4_000, at(4_000))).changed, true);
      const again = await kind.reopen(store);
      const recorded = (await again.payments.get(reference))!;
      assert.deepEqual([recorded.returnedCents, recorded.final, recorded.partnerStatus], [2_000, true, APPROVED]);
      assert.deepEqual(
        (await again.payments.returnsOf(reference)).map((r) => [r.returnedCents, r.source, r.recordedAt]),
        [
          [1_000, 'notification', 3_000],
          [2_000, 'status', 4_000],
        ],
      );
      assert.deepEqual(
        (await again.payments.returnsSince(3_500, 10)).map((r) => r.returnedCents),
        [2_000],
      );
      assert.deepEqual((await again.outbox.list()).filter((e) => e.type === 'payment.returned').length, 2);
      // What is left to refund: paid 49,90, returned 20,00.
      const asked = await again.payouts.create(payout({ checkoutId: id, valueCents: 4_990 }), APPROVED);
      assert.deepEqual(asked, { problem: 'exceeds', refundableCents: 2_990 });
      // A payment not final has nothing to return.
      await again.payments.insert(payment({ reference: 'open-1', transactionId: 'tx-open-1' }));
      assert.equal((await again.payments.recordReturn('open-1', 100, 'notification', 5_000, at(5_000))).changed, false);
    });

    test('an amount mismatch is recorded on a payment not final, with its event in the outbox once', async () => {
      const store = await kind.open();
      await store.checkouts.create(checkout());
      await store.checkouts.attachPayment(checkout().id, payment({ checkoutId: checkout().id }), 0, null);
      const first = await store.payments.flagAmountMismatch('ref1', 5_000, 3_000, amountMismatchOutcome);
      assert.deepEqual(
        [first.changed, first.outcome?.type, first.outcome?.data.reported_value, first.outcome?.data.order_id],
        [true, 'payment.amount_mismatch', 50, checkout().orderId],
      );
      assert.equal((await store.payments.get('ref1'))?.reportedValueCents, 5_000);
      // The same value again changes nothing; another one is recorded, its event already told (one id per payment).
      assert.deepEqual(await store.payments.flagAmountMismatch('ref1', 5_000, 4_000, amountMismatchOutcome), { changed: false, outcome: null });
      assert.equal((await store.payments.flagAmountMismatch('ref1', 6_000, 4_000, amountMismatchOutcome)).changed, true);
      assert.deepEqual(
        (await store.outbox.list()).map((e) => e.type),
        ['payment.amount_mismatch'],
      );
      const again = await kind.reopen(store);
      assert.deepEqual(
        [(await again.payments.get('ref1'))?.reportedValueCents, (await again.checkouts.payments(checkout().id))[0]?.reportedValueCents],
        [6_000, 6_000],
      );
      // A final payment is never flagged.
      await store.payments.updateStatus('ref1', CANCELED, true, 5_000, paymentOutcome);
      assert.equal((await store.payments.flagAmountMismatch('ref1', 7_000, 6_000, amountMismatchOutcome)).changed, false);
    });

    test("a checkout's event is added to the outbox once per id", async () => {
      const store = await kind.open();
      await store.checkouts.create(checkout());
      const paid = [payment({ checkoutId: checkout().id }), payment({ reference: 'ref2', transactionId: 'tx-2', checkoutId: checkout().id })];
      const event = overpaidOutcome(checkout(), paid, 'off', 3_000);
      assert.equal(await store.checkouts.addEvent(event, 'ref2', 3_000), true);
      assert.equal(await store.checkouts.addEvent(overpaidOutcome(checkout(), paid, 'off', 4_000), 'ref2', 4_000), false);
      const rows = await store.outbox.list();
      assert.deepEqual(
        rows.map((e) => [e.type, e.reference, e.eventId]),
        [['checkout.overpaid', 'ref2', event.id]],
      );
      assert.deepEqual(JSON.parse(rows[0]!.body).data, {
        reference: 'ref2',
        status: 'overpaid',
        value: 49.9,
        checkout_id: checkout().id,
        order_id: checkout().orderId,
        references: ['ref1', 'ref2'],
        refund: 'off',
      });
    });

    test('two store objects attaching at once to a checkout with nothing attached: exactly one is made current', async () => {
      const a = await kind.open();
      const b = await kind.reopen(a);
      await warm(a, b);
      for (let n = 1; n <= 8; n++) {
        const id = `co_${String(n).padStart(24, 'X')}`;
        await a.checkouts.create(checkout({ id, orderId: `race-${n}` }));
        const issued = (who: string) => payment({ reference: `${who}-${n}`, transactionId: `tx-${who}-${n}`, checkoutId: id });
        const [byA, byB] = await Promise.all([a.checkouts.attachPayment(id, issued('a'), 0, null), b.checkouts.attachPayment(id, issued('b'), 0, null)]);
        assert.equal(Number(byA) + Number(byB), 1, `exactly one made current (checkout ${n}: A ${byA}, B ${byB})`);
        assert.equal((await a.checkouts.get(id))?.paymentReference, byA ? `a-${n}` : `b-${n}`);
        assert.deepEqual((await b.checkouts.payments(id)).map((p) => p.reference).sort(), [`a-${n}`, `b-${n}`]);
      }
    });

    test('the token store saves, replaces and clears; a closed store refuses', async () => {
      const store = await kind.open();
      assert.equal(await store.tokens.load('k'), null);
      await store.tokens.save('k', 'a');
      await store.tokens.save('k', 'b');
      assert.equal(await store.tokens.load('k'), 'b');
      await store.tokens.clear('k');
      assert.equal(await store.tokens.load('k'), null);
      await store.close();
      await assert.rejects(store.ping(), /closed/);
    });

    test('notifications: listed oldest first without a claim; claimed by the store that added them, again and again; processed ones never', async () => {
      const store = await kind.open({ claimMs: 10_000 });
      const later = await store.webhookEvents.add('{"n":1}', 5);
      const earlier = await store.webhookEvents.add('{"n":2}', 3);
      const rejected = await store.webhookEvents.addRejected('not json', 4, 'unreadable');
      const listed = await store.webhookEvents.unprocessed(10);
      assert.deepEqual(ids(listed), [earlier, later]);
      assert.deepEqual(listed[0], { id: earlier, rawBody: '{"n":2}', receivedAt: 3, processedAt: null });
      assert.equal(await store.webhookEvents.countUnprocessed(), 2);
      assert.equal(await store.webhookEvents.countUnprocessed(1), 1);
      // Held by this store: its own claims are its own to take up, at any time.
      assert.deepEqual(ids(await store.webhookEvents.claimUnprocessed(10, 6)), [earlier, later]);
      assert.deepEqual(ids(await store.webhookEvents.claimUnprocessed(10, 6)), [earlier, later]);
      assert.deepEqual(await store.webhookEvents.claimUnprocessed(1, 7), [{ id: earlier, rawBody: '{"n":2}', receivedAt: 3, processedAt: null }]);
      await store.webhookEvents.markProcessed(earlier, 8, 'applied');
      assert.deepEqual(ids(await store.webhookEvents.claimUnprocessed(10, 9)), [later]);
      assert.deepEqual(ids(await store.webhookEvents.unprocessed(10)), [later]);
      assert.deepEqual(
        (await store.webhookEvents.listByResult(['unreadable', 'unknown_reference'], 10)).map((e) => [e.id, e.result, e.processedAt]),
        [[rejected, 'unreadable', 4]],
      );
      assert.equal(await store.webhookEvents.expireUnprocessed(6, 20), 1);
      assert.deepEqual(await store.webhookEvents.claimUnprocessed(10, 21), []);
      assert.equal(await store.webhookEvents.countUnprocessed(), 0);
    });

    if (kind.name === 'Postgres') {
      test("a notification one instance added is another's only once its claim ran out (claimed_until <= now), or at once when the first closes", async () => {
        const a = await kind.open({ claimMs: 10_000 });
        const b = await kind.reopen(a, { claimMs: 10_000 });
        const first = await a.webhookEvents.add('{"n":1}', 1_000);
        assert.deepEqual(await b.webhookEvents.claimUnprocessed(10, 1_000), []);
        assert.deepEqual(await b.webhookEvents.claimUnprocessed(10, 10_999), []);
        // Listed to both, whoever holds it.
        assert.deepEqual(ids(await b.webhookEvents.unprocessed(10)), [first]);
        assert.deepEqual(ids(await b.webhookEvents.claimUnprocessed(10, 11_000)), [first]);
        // Now B's, until 21,000.
        assert.deepEqual(await a.webhookEvents.claimUnprocessed(10, 11_000), []);
        assert.deepEqual(await a.webhookEvents.claimUnprocessed(10, 20_999), []);
        assert.deepEqual(ids(await a.webhookEvents.claimUnprocessed(10, 21_000)), [first]);
        await a.webhookEvents.markProcessed(first, 21_500, 'applied');

        const second = await a.webhookEvents.add('{"n":2}', 50_000);
        assert.deepEqual(await b.webhookEvents.claimUnprocessed(10, 50_000), []);
        await a.close();
        assert.deepEqual(ids(await b.webhookEvents.claimUnprocessed(10, 50_000)), [second]);
      });
    } else {
      test('a notification one store object added is claimable by another at once (SQLite: every store object is the one holder, "local")', async () => {
        const a = await kind.open({ claimMs: 10_000 });
        const b = await kind.reopen(a, { claimMs: 10_000 });
        const event = await a.webhookEvents.add('{"n":1}', 1_000);
        assert.deepEqual(ids(await b.webhookEvents.claimUnprocessed(10, 1_000)), [event]);
        assert.deepEqual(ids(await a.webhookEvents.claimUnprocessed(10, 1_000)), [event]);
        await b.webhookEvents.markProcessed(event, 2_000, 'applied');
        assert.deepEqual(await a.webhookEvents.claimUnprocessed(10, 2_000), []);
      });
    }

    test('a notification kept to be confirmed again: unprocessed, `waiting`, held until its retry plus the claim time, its authentication remembered', async () => {
      const a = await kind.open({ claimMs: 10_000 });
      const kept = await a.webhookEvents.add('{"n":1}', 1_000);
      const plain = await a.webhookEvents.add('{"n":2}', 1_000);
      await a.webhookEvents.keep(kept, 30_000, true);
      await a.webhookEvents.keep(plain, 30_000, false);
      // Kept again without words: it stays authenticated.
      await a.webhookEvents.keep(kept, 31_000, false);
      assert.deepEqual(ids(await a.webhookEvents.unprocessed(10)), [kept, plain]);
      assert.equal(await a.webhookEvents.countUnprocessed(), 2);
      assert.deepEqual(ids(await a.webhookEvents.listByResult(['waiting'], 10)).sort(), [kept, plain].sort());
      // Taken up again (a restart: drain): its words still count.
      const again = await (await kind.reopen(a, { claimMs: 10_000 })).webhookEvents.claimUnprocessed(10, 2_000);
      if (kind.name === 'SQLite') {
        assert.deepEqual(
          again.map((e) => [e.id, e.authenticated ?? false]),
          [
            [kept, true],
            [plain, false],
          ],
        );
      } else {
        // Another instance: not while this one holds it (until the retry plus the claim time).
        assert.deepEqual(again, []);
        const b = await kind.reopen(a, { claimMs: 10_000 });
        assert.deepEqual(await b.webhookEvents.claimUnprocessed(10, 39_999), []);
        assert.deepEqual(
          (await b.webhookEvents.claimUnprocessed(10, 41_000)).map((e) => [e.id, e.authenticated ?? false]),
          [
            [kept, true],
            [plain, false],
          ],
        );
      }
      // Settled: never kept again.
      await a.webhookEvents.markProcessed(kept, 50_000, 'applied');
      await a.webhookEvents.keep(kept, 60_000, true);
      assert.deepEqual(ids(await a.webhookEvents.unprocessed(10)), [plain]);
    });

    test('disputes: only of a final payment, one open at a time, its event written once with it; resolved, the next one is another event', async () => {
      const store = await kind.open();
      const id = await storePaidCheckout(store, 2_000);
      const reference = `pay-${id}`;
      await store.payments.insert(payment({ reference: 'open-one', transactionId: 'tx-open' }));
      const input = { reference, notified: 'canceled' as const, webhookEventId: 7, at: 5_000 };
      assert.equal(await store.disputes.open({ ...input, reference: 'open-one' }, disputeOutcome), null, 'not final: no dispute');
      assert.equal(await store.disputes.open({ ...input, reference: 'nobody' }, disputeOutcome), null, 'unknown: no dispute');

      const first = await store.disputes.open(input, disputeOutcome);
      assert.ok(first?.opened && first.outcome, 'opened, with its event');
      assert.deepEqual(
        [first.dispute.reference, first.dispute.checkoutId, first.dispute.recordedStatus, first.dispute.notified, first.dispute.webhookEventId],
        [reference, id, APPROVED, 'canceled', 7],
      );
      const again = await store.disputes.open({ ...input, at: 6_000, webhookEventId: 8 }, disputeOutcome);
      assert.deepEqual([again?.opened, again?.outcome, again?.dispute.id], [false, null, first.dispute.id]);
      const written = () => store.outbox.list().then((rows) => rows.filter((e) => e.type === 'payment.disputed'));
      assert.deepEqual(
        (await written()).map((e) => [e.eventId, e.reference]),
        [[first.outcome.id, reference]],
      );
      assert.deepEqual(ids(await store.disputes.listOpen(10)), [first.dispute.id]);
      assert.deepEqual(ids(await store.disputes.openOfCheckout(id)), [first.dispute.id]);
      assert.deepEqual(await store.disputes.openOfCheckout('co_other'), []);
      // The final status is untouched.
      assert.deepEqual([(await store.payments.get(reference))?.partnerStatus, (await store.payments.get(reference))?.final], [APPROVED, true]);

      const resolved = await store.disputes.resolve(reference, 'checked with the partner', 9_000);
      assert.deepEqual([resolved?.resolvedAt, resolved?.resolution], [9_000, 'checked with the partner']);
      assert.equal(await store.disputes.resolve(reference, 'again', 9_500), null, 'nothing open');
      assert.deepEqual(await store.disputes.listOpen(10), []);
      assert.deepEqual(await store.disputes.openOfCheckout(id), []);

      const second = await store.disputes.open({ ...input, at: 10_000 }, disputeOutcome);
      assert.ok(second?.opened && second.outcome, 'a new dispute');
      assert.notEqual(second.outcome.id, first.outcome.id, 'another event');
      assert.equal((await written()).length, 2);
    });

    test('disputes opened at once by two store objects: one dispute, one event', async () => {
      const a = await kind.open();
      const b = await kind.reopen(a);
      await warm(a, b);
      const id = await storePaidCheckout(a, 2_000);
      const input = { reference: `pay-${id}`, notified: 'canceled' as const, webhookEventId: null, at: 5_000 };
      const results = await Promise.all([a, b, a, b].map((store) => store.disputes.open(input, disputeOutcome)));
      assert.equal(results.filter((r) => r?.opened).length, 1);
      assert.equal(new Set(results.map((r) => r?.dispute.id)).size, 1);
      assert.equal((await a.outbox.list()).filter((e) => e.type === 'payment.disputed').length, 1);
    });

    test('deliveries: a claim answers the due ones oldest first and puts them off for claimMs; release makes them due again; an attempt sets the next one', async () => {
      const store = await kind.open({ claimMs: 10_000 });
      const [d1, d2, d3] = await dueDeliveries(store, 3, 2_000);
      assert.ok(d1 !== undefined && d2 !== undefined && d3 !== undefined, 'three deliveries');
      assert.deepEqual(await store.outbox.claimDue(1_999, 10), []);
      const claimed = await store.outbox.claimDue(2_000, 2);
      assert.deepEqual(ids(claimed), [d1, d2]);
      assert.deepEqual(
        claimed.map((e) => [e.state, e.attempts]),
        [
          ['pending', 0],
          ['pending', 0],
        ],
      );
      assert.equal((await store.outbox.get(d1))?.nextAttemptAt, 12_000);
      assert.deepEqual(ids(await store.outbox.claimDue(2_000, 10)), [d3]);
      // A second worker at the same moment finds nothing: every due one is claimed.
      assert.deepEqual(await store.outbox.claimDue(2_000, 10), []);
      assert.deepEqual(await store.outbox.claimDue(11_999, 10), []);
      // A worker that died leaves its claims: due again once they run out.
      assert.deepEqual(ids(await store.outbox.claimDue(12_000, 10)), [d1, d2, d3]);

      // Claimed but not attempted (shutdown): due again at once.
      await store.outbox.release([d1, d2], 13_000);
      assert.equal((await store.outbox.get(d1))?.nextAttemptAt, 13_000);
      assert.deepEqual(await store.outbox.claimDue(12_999, 10), []);
      assert.deepEqual(ids(await store.outbox.claimDue(13_000, 10)), [d1, d2]);

      await store.outbox.recordAttempt(
        d1,
        { at: 13_000, status: 500, error: 'HTTP 500', durationMs: 12 },
        { state: 'pending', nextAttemptAt: 15_000, lastError: 'HTTP 500', deliveredAt: null },
      );
      const retried = await store.outbox.get(d1);
      assert.deepEqual([retried?.state, retried?.attempts, retried?.nextAttemptAt, retried?.lastError], ['pending', 1, 15_000, 'HTTP 500']);
      assert.deepEqual(await store.outbox.claimDue(14_999, 10), []);
      assert.deepEqual(ids(await store.outbox.claimDue(15_000, 10)), [d1]);
      await store.outbox.recordAttempt(
        d1,
        { at: 15_000, status: 200, error: null, durationMs: 8 },
        { state: 'delivered', nextAttemptAt: 15_000, lastError: null, deliveredAt: 15_000 },
      );
      assert.deepEqual(
        (await store.outbox.attempts(d1)).map((a) => [a.deliveryId, a.at, a.status, a.error, a.durationMs]),
        [
          [d1, 13_000, 500, 'HTTP 500', 12],
          [d1, 15_000, 200, null, 8],
        ],
      );
      // A delivered one is never released into sight again, nor claimed.
      await store.outbox.release([d1], 16_000);
      assert.equal((await store.outbox.get(d1))?.state, 'delivered');
      assert.deepEqual(ids(await store.outbox.claimDue(1_000_000, 10)), [d2, d3]);
      assert.deepEqual(ids(await store.outbox.list({ state: 'delivered' })), [d1]);
    });

    test('the delivery backlog: the pending ones (claimed or retried too), dated by the oldest; neither delivered nor failed ones', async () => {
      const store = await kind.open({ claimMs: 10_000 });
      assert.deepEqual(await store.outbox.backlog(), { pending: 0, oldestPendingAt: null });
      const [d1, d2, d3] = await dueDeliveries(store, 3, 2_000);
      assert.ok(d1 !== undefined && d2 !== undefined && d3 !== undefined, 'three deliveries');
      assert.deepEqual(await store.outbox.backlog(), { pending: 3, oldestPendingAt: 2_000 });
      await store.outbox.claimDue(2_000, 10);
      await store.outbox.recordAttempt(
        d1,
        { at: 3_000, status: 200, error: null, durationMs: 5 },
        { state: 'delivered', nextAttemptAt: 3_000, lastError: null, deliveredAt: 3_000 },
      );
      await store.outbox.recordAttempt(
        d2,
        { at: 3_000, status: 500, error: 'HTTP 500', durationMs: 5 },
        { state: 'failed', nextAttemptAt: 3_000, lastError: 'HTTP 500', deliveredAt: null },
      );
      await store.outbox.recordAttempt(
        d3,
        { at: 3_000, status: 500, error: 'HTTP 500', durationMs: 5 },
        { state: 'pending', nextAttemptAt: 13_000, lastError: 'HTTP 500', deliveredAt: null },
      );
      assert.deepEqual(await store.outbox.backlog(), { pending: 1, oldestPendingAt: 2_000 });
    });

    test('deliveries claimed at once by three store objects: never the same one twice, every due one claimed', async () => {
      const a = await kind.open({ claimMs: 10_000 });
      const b = await kind.reopen(a, { claimMs: 10_000 });
      const c = await kind.reopen(a, { claimMs: 10_000 });
      const due = await dueDeliveries(a, 50, 1_000);
      await warm(a, b, c);
      // Each round at the moment the previous round's claims run out: every delivery is due again.
      for (let round = 0, now = 1_000; round < 4; round++, now += 10_000) {
        const claims = await Promise.all([a, b, c, a, b, c].map((store) => store.outbox.claimDue(now, 10)));
        for (const claim of claims) assert.ok(claim.length <= 10, `a claim answers at most its limit (got ${claim.length})`);
        const all = claims.flatMap(ids);
        assert.equal(new Set(all).size, all.length, `no delivery claimed twice in round ${round}: ${JSON.stringify(claims.map(ids))}`);
        assert.deepEqual(
          all.sort((x, y) => x - y),
          due,
        );
        for (const store of [a, b, c]) assert.deepEqual(await store.outbox.claimDue(now, 100), []);
      }
    });

    test('deliveries: a claim that ran out and was taken by another is not renewed, released nor failed by its first holder; a delivery is never undone', async () => {
      const a = await kind.open({ claimMs: 10_000 });
      const b = await kind.reopen(a, { claimMs: 10_000 });
      const [d1, d2] = await dueDeliveries(a, 2, 1_000);
      assert.ok(d1 !== undefined && d2 !== undefined, 'two deliveries');
      const [byA] = await a.outbox.claimDue(1_000, 1);
      assert.ok(byA?.claim, 'a claim names its token');
      // Renewed right before it is sent: held for the claim time from then.
      assert.equal(await a.outbox.renew(d1, byA.claim, 5_000), true);
      assert.equal((await a.outbox.get(d1))?.nextAttemptAt, 15_000);
      assert.deepEqual(ids(await b.outbox.claimDue(14_999, 1)), [d2]);
      // The first holder's claim runs out: another worker takes it.
      const [byB] = await b.outbox.claimDue(15_000, 10);
      assert.equal(byB?.id, d1);
      assert.notEqual(byB.claim, byA.claim);
      assert.equal(await a.outbox.renew(d1, byA.claim, 15_001), false, 'no longer held');
      assert.equal(await a.outbox.renew(d1, byB.claim!, 15_001), true, 'held by the second claim (whichever store object renews it)');
      // A release under the old claim leaves the new holder's claim alone.
      await a.outbox.release([d1], 15_002, byA.claim);
      assert.equal((await a.outbox.get(d1))?.nextAttemptAt, 25_001);
      assert.equal(
        await b.outbox.recordAttempt(
          d1,
          { at: 16_000, status: 204, error: null, durationMs: 5 },
          { state: 'delivered', nextAttemptAt: 16_000, lastError: null, deliveredAt: 16_000 },
          byB.claim,
        ),
        true,
      );
      // The first holder's late failure, with its claim or with none, never undoes the delivery; the attempt is kept.
      for (const claim of [byA.claim, null]) {
        assert.equal(
          await a.outbox.recordAttempt(
            d1,
            { at: 17_000, status: 500, error: 'HTTP 500', durationMs: 30_000 },
            { state: 'pending', nextAttemptAt: 27_000, lastError: 'HTTP 500', deliveredAt: null },
            claim,
          ),
          false,
        );
      }
      const delivered = await a.outbox.get(d1);
      assert.deepEqual([delivered?.state, delivered?.deliveredAt, delivered?.lastError, delivered?.attempts], ['delivered', 16_000, null, 1]);
      assert.deepEqual(
        (await a.outbox.attempts(d1)).map((x) => x.status),
        [204, 500, 500],
      );
      // A failure under a claim that ran out, while the other holder has not answered yet, is not recorded on the row either.
      const [again] = await a.outbox.claimDue(30_000, 10);
      assert.equal(again?.id, d2);
      const [taken] = await b.outbox.claimDue(40_000, 10);
      assert.equal(taken?.id, d2);
      assert.equal(
        await a.outbox.recordAttempt(
          d2,
          { at: 41_000, status: null, error: 'timeout', durationMs: 10_000 },
          { state: 'failed', nextAttemptAt: 41_000, lastError: 'timeout', deliveredAt: null },
          again.claim,
        ),
        false,
      );
      assert.deepEqual([(await a.outbox.get(d2))?.state, (await a.outbox.get(d2))?.nextAttemptAt], ['pending', 50_000]);
    });

    test('two store objects making one payment final at once: one change, one outcome, one delivery', async () => {
      const a = await kind.open();
      const b = await kind.reopen(a);
      for (let n = 1; n <= 10; n++) await a.payments.insert(payment({ reference: `race-${n}`, transactionId: `tx-race-${n}` }));
      await warm(a, b);
      for (let n = 1; n <= 10; n++) {
        const reference = `race-${n}`;
        const [byA, byB] = await Promise.all([
          a.payments.updateStatus(reference, APPROVED, true, 2_000, paymentOutcome),
          b.payments.updateStatus(reference, CANCELED, true, 2_001, paymentOutcome),
        ]);
        assert.equal(Number(byA.changed) + Number(byB.changed), 1, `exactly one change for ${reference}`);
        const [winner, loser] = byA.changed ? [byA, byB] : [byB, byA];
        assert.ok(winner.outcome, `the change carries its outcome (${reference})`);
        assert.equal(loser.outcome, null);
        const status = byA.changed ? APPROVED : CANCELED;
        assert.equal(winner.outcome.type, status === APPROVED ? 'payment.paid' : 'payment.canceled');
        // Read afresh (no cache): the winner's status is the one stored.
        const reader = await kind.reopen(a, { cacheSize: 0 });
        assert.deepEqual([(await reader.payments.get(reference))?.partnerStatus, (await reader.payments.get(reference))?.final], [status, true]);
        await reader.close();
        if (kind.name === 'Postgres') {
          // Each instance reads the stored status: the winner remembered it, the loser forgot its copy.
          assert.equal((await a.payments.get(reference))?.partnerStatus, status);
          assert.equal((await b.payments.get(reference))?.partnerStatus, status);
        }
      }
      const outbox = await a.outbox.list();
      assert.equal(outbox.length, 10);
      assert.equal(new Set(outbox.map((e) => e.reference)).size, 10);
    });
    test('a write through another store object on the same database (a command line beside the proxy) is read here, though the record was cached', async () => {
      const proxy = await kind.open();
      const cli = await kind.reopen(proxy, { cacheSize: 0 });
      await proxy.payments.insert(payment({ reference: 'seen-1', transactionId: 'tx-seen-1' }));
      assert.equal((await proxy.payments.get('seen-1'))?.final, false);
      assert.equal(proxy.payments.peek?.('seen-1')?.final, false, 'cached');
      assert.equal((await cli.payments.updateStatus('seen-1', APPROVED, true, 2_000, paymentOutcome)).changed, true);
      // SQLite sees it at once (the file's data_version moved); a Postgres instance once the change is heard.
      const read =
        kind.name === 'SQLite'
          ? await proxy.payments.get('seen-1')
          : await waitFor("the other instance's write heard", async () =>
              (await proxy.payments.get('seen-1'))?.final ? proxy.payments.get('seen-1') : undefined,
            );
      assert.deepEqual([read?.partnerStatus, read?.updatedAt], [APPROVED, 2_000]);
      assert.equal(proxy.payments.peek?.('seen-1')?.final ?? true, true, 'the fast path never answers the old record');
      // An update that changes no status (who is being paid) is seen too.
      await cli.payments.setFavoured('seen-1', 'Loja Exemplo');
      if (kind.name === 'SQLite') assert.equal((await proxy.payments.get('seen-1'))?.favoured, 'Loja Exemplo');
    });

    if (kind.name === 'SQLite') {
      test('a write by another connection to the file (another process) evicts the cached record within a millisecond', async () => {
        const proxy = await kind.open();
        await proxy.payments.insert(payment({ reference: 'seen-2', transactionId: 'tx-seen-2' }));
        assert.equal((await proxy.payments.get('seen-2'))?.partnerStatus, PENDING);
        const other = new Database(join(locationOf(proxy).dataDir, DB_FILE_NAME));
        try {
          other.prepare('UPDATE payments SET partner_status = ?, final = 1, updated_at = 5000 WHERE reference = ?').run(CANCELED, 'seen-2');
        } finally {
          other.close();
        }
        // Another process's write is looked for at most every millisecond (a pragma per read would cost as much as the read).
        await sleep(5);
        assert.equal(proxy.payments.peek?.('seen-2'), undefined, 'evicted');
        assert.deepEqual([(await proxy.payments.get('seen-2'))?.partnerStatus, (await proxy.payments.get('seen-2'))?.final], [CANCELED, true]);
      });
    }
  });

  describe(`${kind.name} store: payouts`, () => {
    test('one payout per idempotency key: the second create answers the first, unchanged', async () => {
      const store = await kind.open();
      const first = await store.payouts.create(payout(), APPROVED);
      const second = await store.payouts.create(payout({ id: 'tr_BBBBBBBBBBBBBBBBBBBBBBBB', transactionId: 'ptx-2', valueCents: 5 }), APPROVED);
      assert.ok('created' in first && first.created, `the first is created: ${JSON.stringify(first)}`);
      assert.ok('created' in second && !second.created, `the second is not: ${JSON.stringify(second)}`);
      assert.equal(second.payout.id, 'tr_AAAAAAAAAAAAAAAAAAAAAAAA');
      assert.equal(second.payout.valueCents, 1000);
      assert.equal(await store.payouts.get('tr_BBBBBBBBBBBBBBBBBBBBBBBB'), null);
    });

    test('sent: follows its transfer and forgets the document; its final status gives the payout its outcome and one event naming it', async () => {
      const store = await kind.open();
      await store.payouts.create(payout(), APPROVED);
      const sent = await store.payouts.markSent('tr_AAAAAAAAAAAAAAAAAAAAAAAA', transfer('pref-1'), transferOutcome);
      assert.deepEqual([sent.payout.state, sent.payout.reference, sent.payout.customerDocument, sent.outcome], ['pending', 'pref-1', null, null]);
      assert.equal((await store.transfers.get('pref-1'))?.final, false);
      assert.deepEqual(
        (await store.transfers.nonFinal(10)).map((t) => t.reference),
        ['pref-1'],
      );
      const change = await store.transfers.updateStatus('pref-1', APPROVED, true, 3_000, transferOutcome);
      assert.equal(change.outcome?.type, 'transfer.approved');
      assert.equal(change.outcome?.data.transfer_id, 'tr_AAAAAAAAAAAAAAAAAAAAAAAA');
      assert.equal(change.outcome?.data.transfer_reference, 'seller-1');
      assert.equal((await store.payouts.get('tr_AAAAAAAAAAAAAAAAAAAAAAAA'))?.state, 'approved');
      assert.deepEqual(await store.transfers.updateStatus('pref-1', CANCELED, true, 4_000, transferOutcome), { changed: false, outcome: null });
      assert.deepEqual(
        (await store.outbox.list()).map((e) => e.type),
        ['transfer.approved'],
      );
      assert.deepEqual(await store.transfers.nonFinal(10), []);
    });

    test('its webhook before its answer: sending it finds the transfer final and takes its outcome, with no second event', async () => {
      const store = await kind.open();
      await store.payouts.create(payout(), APPROVED);
      await store.transfers.track(transfer('pref-2'));
      await store.transfers.updateStatus('pref-2', CANCELED, true, 2_500, transferOutcome);
      const sent = await store.payouts.markSent('tr_AAAAAAAAAAAAAAAAAAAAAAAA', transfer('pref-2', 3_000), transferOutcome);
      assert.equal(sent.payout.state, 'canceled');
      assert.equal(sent.outcome?.type, 'transfer.canceled');
      assert.equal((await store.outbox.list()).length, 1);
    });

    test("its webhook before its answer, the partner's record naming our transaction_id: the event names the payout, its checkout and order; the payout takes the outcome and its reference", async () => {
      const store = await kind.open();
      const checkoutId = await storePaidCheckout(store, 4990);
      await store.payouts.create(payout({ checkoutId, valueCents: 1000 }), APPROVED);
      // The notification is handled first: the transfer, read from the partner, carries the transaction_id we sent.
      await store.transfers.track({ ...transfer('pref-tx', 2_400), transactionId: 'ptx-1' });
      const change = await store.transfers.updateStatus('pref-tx', APPROVED, true, 2_500, transferOutcome);
      const linked = {
        transfer_id: 'tr_AAAAAAAAAAAAAAAAAAAAAAAA',
        transfer_reference: 'seller-1',
        checkout_id: checkoutId,
        order_id: `order-${checkoutId}`,
      };
      const named = (data: Record<string, unknown> | undefined) =>
        data && { transfer_id: data.transfer_id, transfer_reference: data.transfer_reference, checkout_id: data.checkout_id, order_id: data.order_id };
      assert.deepEqual(named(change.outcome?.data), linked);
      const early = await store.payouts.get('tr_AAAAAAAAAAAAAAAAAAAAAAAA');
      assert.deepEqual([early?.state, early?.reference, early?.customerDocument], ['approved', 'pref-tx', null]);
      // The create's answer at last: nothing changes, nothing is written twice.
      const sent = await store.payouts.markSent('tr_AAAAAAAAAAAAAAAAAAAAAAAA', transfer('pref-tx', 3_000), transferOutcome);
      assert.equal(sent.payout.state, 'approved');
      const rows = (await store.outbox.list()).filter((e) => e.type === 'transfer.approved');
      assert.equal(rows.length, 1);
      assert.deepEqual(named(JSON.parse(rows[0]!.body).data), linked);
      // A payout whose answer was lost (unknown) takes its transfer's outcome the same way.
      await store.payouts.create(payout({ id: 'tr_CCCCCCCCCCCCCCCCCCCCCCCC', idempotencyKey: 'key-3', transactionId: 'ptx-3' }), APPROVED);
      await store.payouts.markUnknown('tr_CCCCCCCCCCCCCCCCCCCCCCCC', 2_600);
      await store.transfers.track({ ...transfer('pref-lost', 2_700), transactionId: 'ptx-3' });
      const lost = await store.transfers.updateStatus('pref-lost', CANCELED, true, 2_800, transferOutcome);
      assert.equal(lost.outcome?.data.transfer_id, 'tr_CCCCCCCCCCCCCCCCCCCCCCCC');
      const settled = await store.payouts.get('tr_CCCCCCCCCCCCCCCCCCCCCCCC');
      assert.deepEqual([settled?.state, settled?.reference], ['canceled', 'pref-lost']);
    });

    test("its webhook before its answer, the partner's record naming no transaction_id: the event not delivered yet is written again naming the payout; a delivered one is left, and told again linked under its own id", async () => {
      const store = await kind.open();
      const checkoutId = await storePaidCheckout(store, 4990);
      await store.payouts.create(payout({ checkoutId }), APPROVED);
      await store.transfers.track(transfer('pref-late', 2_400));
      const told = await store.transfers.updateStatus('pref-late', APPROVED, true, 2_500, transferOutcome);
      assert.equal(told.outcome?.data.transfer_id, undefined, 'nothing links it yet');
      const sent = await store.payouts.markSent('tr_AAAAAAAAAAAAAAAAAAAAAAAA', transfer('pref-late', 3_000), transferOutcome);
      assert.equal(sent.payout.state, 'approved');
      const [row] = (await store.outbox.list()).filter((e) => e.type === 'transfer.approved');
      const data = JSON.parse(row!.body).data;
      assert.deepEqual(
        [data.transfer_id, data.transfer_reference, data.checkout_id, data.order_id, row!.eventId],
        ['tr_AAAAAAAAAAAAAAAAAAAAAAAA', 'seller-1', checkoutId, `order-${checkoutId}`, told.outcome?.id],
      );
      // Delivered before the answer came: what the merchant received stays what it was.
      await store.payouts.create(payout({ id: 'tr_DDDDDDDDDDDDDDDDDDDDDDDD', idempotencyKey: 'key-4', transactionId: 'ptx-4' }), APPROVED);
      await store.transfers.track(transfer('pref-delivered', 2_400));
      const first = await store.transfers.updateStatus('pref-delivered', CANCELED, true, 2_500, transferOutcome);
      const delivered = (await store.outbox.list()).find((e) => e.eventId === first.outcome?.id)!;
      await store.outbox.recordAttempt(
        delivered.id,
        { at: 2_600, status: 204, error: null, durationMs: 3 },
        { state: 'delivered', nextAttemptAt: 2_600, lastError: null, deliveredAt: 2_600 },
      );
      const late = await store.payouts.markSent('tr_DDDDDDDDDDDDDDDDDDDDDDDD', transfer('pref-delivered', 3_000), transferOutcome);
      assert.equal((await store.outbox.get(delivered.id))?.body, delivered.body);
      assert.equal((await store.payouts.get('tr_DDDDDDDDDDDDDDDDDDDDDDDD'))?.state, 'canceled');
      // ...and the merchant is told again, linked, under another id: once, however often it is marked.
      const relinked = (await store.outbox.list()).filter((e) => e.type === 'transfer.canceled' && e.eventId !== delivered.eventId);
      assert.equal(relinked.length, 1);
      assert.equal(late.outcome?.id, relinked[0]!.eventId);
      const linked = JSON.parse(relinked[0]!.body).data;
      assert.deepEqual([linked.reference, linked.status, linked.transfer_id], ['pref-delivered', 'canceled', 'tr_DDDDDDDDDDDDDDDDDDDDDDDD']);
    });

    test('refused: the reason, the event in the outbox with the order of a refund, in one step; unknown and discard', async () => {
      const store = await kind.open();
      await storePaidCheckout(store, 4990);
      await store.payouts.create(payout({ checkoutId: checkout().id }), APPROVED);
      const refused = await store.payouts.markRefused('tr_AAAAAAAAAAAAAAAAAAAAAAAA', 'kyc_not_approved', 'KYC pending', 3_000, refusalOutcome);
      assert.deepEqual([refused.payout.state, refused.payout.reason, refused.payout.customerDocument], ['refused', 'kyc_not_approved', null]);
      assert.equal(refused.outcome.data.order_id, `order-${checkout().id}`);
      assert.deepEqual(
        (await store.outbox.list()).map((e) => e.type),
        ['payment.paid', 'transfer.refused'],
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
    });

    test('refunds: not paid, what is left (0 asks for all of it), never past the paid value', async () => {
      const store = await kind.open();
      await store.checkouts.create(checkout());
      const refund = (n: number, cents: number) =>
        store.payouts.create(
          payout({ id: payoutId('R', n), idempotencyKey: `r-${n}`, transactionId: `rt-${n}`, checkoutId: checkout().id, valueCents: cents }),
          APPROVED,
        );
      assert.deepEqual(await refund(1, 100), { problem: 'not_paid', refundableCents: 0 });
      await store.checkouts.attachPayment(checkout().id, payment({ checkoutId: checkout().id }), 0, null);
      // Paid means approved: a pending payment refunds nothing.
      assert.deepEqual(await refund(1, 100), { problem: 'not_paid', refundableCents: 0 });
      await store.payments.updateStatus('ref1', APPROVED, true, 2_000, paymentOutcome);
      assert.ok('created' in (await refund(2, 4000)), 'a refund of 4000 of 4990 is created');
      assert.deepEqual(await refund(3, 991), { problem: 'exceeds', refundableCents: 990 });
      const rest = await refund(4, 0);
      assert.ok('payout' in rest && rest.payout.valueCents === 990, `0 refunds what is left, 990: ${JSON.stringify(rest)}`);
      assert.deepEqual(await refund(5, 0), { problem: 'exceeds', refundableCents: 0 });
      // A refused refund gives back what it held.
      await store.payouts.markRefused(payoutId('R', 4), 'bank_refused', null, 3_000, refusalOutcome);
      assert.deepEqual(await refund(6, 991), { problem: 'exceeds', refundableCents: 990 });
      assert.deepEqual(
        (await store.payouts.ofCheckout(checkout().id)).map((p) => [p.idempotencyKey, p.valueCents, p.state]),
        [
          ['r-2', 4000, 'sending'],
          ['r-4', 990, 'refused'],
        ],
      );
    });

    test('refunds from two store objects at once never pass the paid value: 7 of 3000 against 10000 paid, exactly 3 taken', async () => {
      const a = await kind.open();
      const b = await kind.reopen(a);
      for (let round = 1; round <= 4; round++) {
        const id = await storePaidCheckout(a, 10_000, `co_${String(round).padStart(24, 'P')}`);
        await warm(a, b);
        const answers = await Promise.all(
          [1, 2, 3, 4, 5, 6, 7].map((n) =>
            (n % 2 === 0 ? a : b).payouts.create(
              payout({ id: payoutId(`C${round}`, n), idempotencyKey: `c-${round}-${n}`, transactionId: `ct-${round}-${n}`, checkoutId: id, valueCents: 3_000 }),
              APPROVED,
            ),
          ),
        );
        const created = answers.filter((r) => 'created' in r && r.created);
        const exceeds = answers.filter((r) => 'problem' in r && r.problem === 'exceeds');
        assert.equal(created.length, 3, JSON.stringify(answers));
        assert.equal(exceeds.length, 4, JSON.stringify(answers));
        for (const refusal of exceeds) assert.deepEqual(refusal, { problem: 'exceeds', refundableCents: 1_000 });
        assert.deepEqual(
          (await b.payouts.ofCheckout(id)).map((p) => p.valueCents),
          [3_000, 3_000, 3_000],
        );
      }
    });

    test('one payout per idempotency key when two store objects create it at once', async () => {
      const a = await kind.open();
      const b = await kind.reopen(a);
      const refunded = await storePaidCheckout(a, 10_000);
      await warm(a, b);
      for (let n = 1; n <= 6; n++) {
        // A payout, and a refund (decided under its checkout's lock), each asked of both at once.
        const checkoutId = n % 2 === 0 ? refunded : null;
        const asked = (who: string) =>
          payout({ id: payoutId(who, n), idempotencyKey: `same-${n}`, transactionId: `${who}-tx-${n}`, checkoutId, valueCents: 1_000 });
        const answers = await Promise.all([a.payouts.create(asked('A'), APPROVED), b.payouts.create(asked('B'), APPROVED)]);
        const stored = answers.map((r) => ('payout' in r ? r.payout.id : `problem ${r.problem}`));
        assert.equal(stored[0], stored[1], `both answer the one payout of key same-${n}: ${JSON.stringify(answers)}`);
        assert.equal(answers.filter((r) => 'created' in r && r.created).length, 1, `one created for key same-${n}: ${JSON.stringify(answers)}`);
      }
      const listed = (await a.payouts.list({ limit: 100 })).payouts;
      assert.equal(listed.length, 6);
      assert.deepEqual(
        (await b.payouts.ofCheckout(refunded)).map((p) => p.valueCents),
        [1_000, 1_000, 1_000],
      );
    });

    test('the list: newest first, by state, from a cursor; a crash mid-call found by age', async () => {
      const store = await kind.open();
      for (let n = 1; n <= 5; n++) {
        await store.payouts.create(payout({ id: payoutId('L', n), idempotencyKey: `l-${n}`, transactionId: `lt-${n}`, createdAt: n * 1_000 }), APPROVED);
      }
      await store.payouts.markUnknown(payoutId('L', 2), 9_000);
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
        (await store.payouts.list({ limit: 2 })).payouts.map((p) => p.idempotencyKey),
        ['l-5', 'l-4'],
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
      assert.deepEqual(await store.payouts.expireSending(3_500, 11_000), []);
      assert.deepEqual(
        (await store.payouts.list({ limit: 10, states: ['sending'] })).payouts.map((p) => p.idempotencyKey),
        ['l-5', 'l-4'],
      );
    });
  });
}

/** The tables both dialects' migrations make (Postgres adds `leases`). */
const STORE_TABLES = [
  'checkouts',
  'payments',
  'partner_tokens',
  'webhook_events',
  'transfers',
  'outbox',
  'delivery_attempts',
  'payouts',
  'disputes',
  'payment_intents',
  'payment_returns',
  'widget_files',
];

function hasTables(tables: string[], expected: string[]): void {
  for (const table of expected) assert.ok(tables.includes(table), `a ${table} table`);
}

describe('SQLite store: its file', () => {
  const sqlite = kinds.find((k) => k.name === 'SQLite')!;

  test('creates the file and its directory on first start, with the migrations recorded', async () => {
    const dir = join(tempDir(), 'nested', 'data');
    const store = await openAt({ dataDir: dir });
    await store.ping();
    await store.close();
    await (await sqlite.reopen(store)).close();
    assert.ok(statSync(join(dir, DB_FILE_NAME)).size > 0, 'the database file is written');
    const db = new Database(join(dir, DB_FILE_NAME));
    const versions = (db.prepare('SELECT version FROM migrations').all() as { version: number }[]).map((r) => r.version);
    const tables = (db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").all() as { name: string }[]).map((r) => r.name);
    db.close();
    assert.deepEqual(versions, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14]);
    hasTables(tables, STORE_TABLES);
  });

  test('a database from a newer proxy is refused', async () => {
    const store = await sqlite.open();
    await store.close();
    const db = new Database(join(locationOf(store).dataDir, DB_FILE_NAME));
    db.prepare('INSERT INTO migrations (version, applied_at) VALUES (99, 0)').run();
    db.close();
    await assert.rejects(sqlite.reopen(store), /newer than this proxy/);
  });
});

describe('Postgres store: its database', () => {
  const postgresKind = kinds.find((k) => k.name === 'Postgres')!;

  test('the migrations recorded in the migrations table, each once across reopening', async () => {
    const store = await postgresKind.open();
    await store.close();
    await (await postgresKind.reopen(store)).close();
    const versions = (await sql<{ version: number }>(store, 'SELECT version FROM migrations ORDER BY version')).map((r) => r.version);
    assert.deepEqual(versions, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    const tables = (await sql<{ name: string }>(store, "SELECT table_name AS name FROM information_schema.tables WHERE table_schema = 'public'")).map(
      (r) => r.name,
    );
    hasTables(tables, [...STORE_TABLES, 'leases']);
  });

  test('a database from a newer proxy is refused', async () => {
    const store = await postgresKind.open();
    await store.close();
    await sql(store, 'INSERT INTO migrations (version, applied_at) VALUES (99, 0)');
    await assert.rejects(postgresKind.reopen(store), /newer than this proxy/);
  });

  test('a database that cannot be reached, or does not exist, is a StoreError saying so', async () => {
    assert.ok(postgres, 'the Postgres cluster started in before()');
    await assert.rejects(
      openStore({ dataDir: tempDir(), databaseUrl: 'postgres://postgres@127.0.0.1:1/pix', deadlines: databaseDeadlines() }),
      (error: unknown) => error instanceof StoreError && /cannot be reached/.test(error.message),
    );
    await assert.rejects(
      openStore({ dataDir: tempDir(), databaseUrl: postgres.url('pix_no_such_database'), deadlines: databaseDeadlines() }),
      (error: unknown) => error instanceof StoreError && /does not exist/.test(error.message),
    );
  });
});

describe('Postgres store: several instances', () => {
  const postgresKind = kinds.find((k) => k.name === 'Postgres')!;
  const two = async (tuning?: Tuning): Promise<[Store, Store]> => {
    const a = await postgresKind.open(tuning);
    return [a, await postgresKind.reopen(a, tuning)];
  };
  const clusterOf = (store: Store) => {
    assert.ok(store.cluster, 'a Postgres store has a cluster');
    return store.cluster;
  };

  test('each instance has its own id and listens for the others', async () => {
    const [a, b] = await two();
    assert.notEqual(clusterOf(a).instanceId, clusterOf(b).instanceId);
    assert.equal(clusterOf(a).listening(), true);
    assert.equal(clusterOf(b).listening(), true);
    await a.close();
    assert.equal(clusterOf(a).listening(), false);
  });

  test('leases: one holder at a time, renewed by its holder, given up by it only, then taken by another', async () => {
    const [a, b] = await two();
    assert.equal(await clusterOf(a).lease('poll:ref1', 10_000), true);
    assert.equal(await clusterOf(b).lease('poll:ref1', 10_000), false);
    assert.equal(await clusterOf(a).lease('poll:ref1', 10_000), true);
    // Another lease is another matter.
    assert.equal(await clusterOf(b).lease('poll:ref2', 10_000), true);
    // Only its holder gives it up.
    await clusterOf(b).release('poll:ref1');
    assert.equal(await clusterOf(b).lease('poll:ref1', 10_000), false);
    await clusterOf(a).release('poll:ref1');
    assert.equal(await clusterOf(b).lease('poll:ref1', 10_000), true);
    assert.equal(await clusterOf(a).lease('poll:ref1', 10_000), false);
  });

  test('a lease that ran out is taken by another instance', async () => {
    const [a, b] = await two();
    assert.equal(await clusterOf(b).lease('reconcile', 200), true);
    assert.equal(await clusterOf(a).lease('reconcile', 10_000), false);
    await sleep(200);
    // The database's clock decides; the wait above is a guard, not a timing.
    await waitFor('the 200 ms lease to run out', () => clusterOf(a).lease('reconcile', 10_000), 5_000);
    assert.equal(await clusterOf(b).lease('reconcile', 200), false);
  });

  test('closing gives its leases up at once', async () => {
    const [a, b] = await two();
    assert.equal(await clusterOf(a).lease('poll:ref1', 60_000), true);
    assert.equal(await clusterOf(a).lease('reconcile', 60_000), true);
    await a.close();
    assert.equal(await clusterOf(b).lease('poll:ref1', 60_000), true);
    assert.equal(await clusterOf(b).lease('reconcile', 60_000), true);
  });

  test("one instance hears another's payment change, and then reads the new status though it had cached the old one", async () => {
    const [a, b] = await two();
    await a.payments.insert(payment());
    assert.equal((await b.payments.get('ref1'))?.partnerStatus, PENDING);
    assert.equal(b.payments.peek?.('ref1')?.partnerStatus, PENDING, 'B keeps the pending record at hand');
    const received: StoreChange[] = [];
    clusterOf(b).onChange((change) => received.push(change));

    await a.payments.updateStatus('ref1', APPROVED, true, 2_000, paymentOutcome);
    await waitFor("B to hear A's status change", () => received.some((c) => c.kind === 'payment' && c.reference === 'ref1'), 5_000);
    const read = await b.payments.get('ref1');
    assert.deepEqual([read?.partnerStatus, read?.final, read?.updatedAt], [APPROVED, true, 2_000]);

    // Who is being paid, too.
    received.length = 0;
    await a.payments.setFavoured('ref1', 'Loja da Maria');
    await waitFor("B to hear A's favoured", () => received.some((c) => c.kind === 'payment' && c.reference === 'ref1'), 5_000);
    assert.equal((await b.payments.get('ref1'))?.favoured, 'Loja da Maria');
  });

  test('an instance never hears its own changes; a listener unsubscribed hears nothing more', async () => {
    const [a, b] = await two();
    await a.payments.insert(payment());
    await a.payments.insert(payment({ reference: 'ref2', transactionId: 'tx-2' }));
    const heardByA: StoreChange[] = [];
    clusterOf(a).onChange((change) => heardByA.push(change));
    const gone: StoreChange[] = [];
    const kept: StoreChange[] = [];
    const unsubscribe = clusterOf(b).onChange((change) => gone.push(change));
    clusterOf(b).onChange((change) => kept.push(change));
    unsubscribe();

    // A's own change, then B's: notifications come in commit order, so once A hears B's, it would have heard its own.
    await a.payments.updateStatus('ref1', APPROVED, true, 2_000, paymentOutcome);
    await b.payments.updateStatus('ref2', CANCELED, true, 2_100, paymentOutcome);
    await waitFor("A to hear B's change", () => heardByA.some((c) => c.kind === 'payment' && c.reference === 'ref2'), 5_000);
    assert.deepEqual(
      heardByA.filter((c) => c.kind === 'payment'),
      [{ kind: 'payment', reference: 'ref2' }],
    );
    await waitFor("B's kept listener to hear A's change", () => kept.some((c) => c.kind === 'payment' && c.reference === 'ref1'), 5_000);
    assert.deepEqual(
      kept.filter((c) => c.kind === 'payment'),
      [{ kind: 'payment', reference: 'ref1' }],
    );
    assert.deepEqual(gone, []);
  });

  test('notifications claimed at once by three instances: never the same one twice, every one claimed', async () => {
    const [a, b] = await two({ claimMs: 1_000 });
    const c = await postgresKind.reopen(a, { claimMs: 1_000 });
    const added: number[] = [];
    for (let n = 0; n < 40; n++) added.push(await a.webhookEvents.add(`{"n":${n}}`, n));
    await warm(a, b, c);
    // Each round when every claim of the one before ran out: any instance may take any.
    for (let now = 10_000; now <= 50_000; now += 10_000) {
      const claims = await Promise.all([a, b, c].map((store) => store.webhookEvents.claimUnprocessed(40, now)));
      const all = claims.flatMap(ids);
      assert.equal(new Set(all).size, all.length, `none claimed twice at ${now}: ${JSON.stringify(claims.map(ids))}`);
      assert.deepEqual(
        all.sort((x, y) => x - y),
        added,
      );
      // Each now holds its own until now + 1,000.
      for (const [i, store] of [a, b, c].entries()) assert.deepEqual(ids(await store.webhookEvents.claimUnprocessed(40, now + 500)), ids(claims[i]!));
    }
  });
});
