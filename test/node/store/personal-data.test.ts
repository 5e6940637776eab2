/**
 * Personal data with an end, on both stores (SQLite on a real file, Postgres in a real throwaway
 * server): the retention purge erases the personal fields of old final records and keeps money facts
 * and what is recent, pending or disputed; old processed notifications and delivered outbox bodies
 * are pruned; documents are sealed at rest under PIX_DATA_KEY (the raw file and the raw row hold no
 * digit of them); a data subject's records are found, exported and erased by document. Time is a
 * fake clock (`now`), never a sleep.
 */
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, afterEach, before, describe, test } from 'node:test';
import pg from 'pg';
import { disputeOutcome, paymentOutcome, refusalOutcome, transferOutcome } from '../../../server/domain/outcomes.ts';
import { payoutView } from '../../../server/domain/payouts.ts';
import { DataKeyError, ERASED, PersonalData, PersonalDataCipher, maskDocument, sealedCustomer } from '../../../server/domain/personal-data.ts';
import { PARTNER_STATUS } from '../../../server/partner/wire.ts';
import { openStore } from '../../../server/store/open.ts';
import type { Store } from '../../../server/store/store.ts';
import { checkoutRecord, paymentRecord, payoutRecord, transferRecord } from '../../support/records.ts';
import { startPostgres, type RunningPostgres } from '../../support/postgres.ts';
import { tempDirs } from '../../support/temp-dirs.ts';
import { databaseDeadlines } from '../../../server/config/database.ts';
import { silentLog } from '../../support/silent-log.ts';

const DAY = 86_400_000;
/** The fake clock's now: day 400. Retention 180 days: the cutoff is day 220. */
const NOW = 400 * DAY;
const RETENTION_DAYS = 180;
const OLD = 10 * DAY;
const RECENT = 390 * DAY;

/** A valid CPF and CNPJ (check digits right); Maria's is the records' default. */
const MARIA = '52998224725';
const JOAO = '11144477735';
const KEY = Buffer.alloc(32, 7).toString('base64');
const OTHER_KEY = Buffer.alloc(32, 9).toString('hex');

const tempDir = tempDirs('pix-personal-');
let postgres: RunningPostgres | undefined;
before(async () => {
  postgres = await startPostgres();
});
const opened: Store[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((store) => store.close()));
});
after(async () => {
  await postgres?.stop();
});

interface Opened {
  store: Store;
  /** Every value of one column of a table, read raw (no mapping, no decryption). */
  column(table: string, column: string): Promise<unknown[]>;
  /** The database's bytes at rest (SQLite: the file and its WAL; Postgres: the rows as text). */
  raw(): Promise<string>;
}

const kinds: { name: string; open(): Promise<Opened> }[] = [
  {
    name: 'SQLite',
    async open() {
      const dir = tempDir();
      const store = await openStore({ dataDir: dir, cacheSize: 0 });
      opened.push(store);
      const { default: Database } = await import('libsql');
      return {
        store,
        async column(table, column) {
          const db = new Database(join(dir, 'pix-checkout.db'));
          try {
            return (db.prepare(`SELECT ${column} AS value FROM ${table} ORDER BY rowid`).all() as { value: unknown }[]).map((r) => r.value);
          } finally {
            db.close();
          }
        },
        async raw() {
          return readdirSync(dir)
            .map((file) => readFileSync(join(dir, file)).toString('latin1'))
            .join('\n');
        },
      };
    },
  },
  {
    name: 'Postgres',
    async open() {
      assert.ok(postgres);
      const url = await postgres.createDatabase();
      const store = await openStore({ dataDir: '/nonexistent', databaseUrl: url, deadlines: databaseDeadlines(), cacheSize: 0 });
      opened.push(store);
      const query = async (text: string) => {
        const client = new pg.Client({ connectionString: url });
        await client.connect();
        try {
          return (await client.query(text)).rows as Record<string, unknown>[];
        } finally {
          await client.end();
        }
      };
      return {
        store,
        column: async (table, column) => (await query(`SELECT ${column} AS value FROM ${table}`)).map((r) => r.value),
        raw: async () =>
          JSON.stringify([
            ...(await query('SELECT * FROM checkouts')),
            ...(await query('SELECT * FROM payouts')),
            ...(await query('SELECT * FROM webhook_events')),
          ]),
      };
    },
  },
];

const service = (store: Store, key?: string) =>
  new PersonalData({ store, cipher: new PersonalDataCipher(key), retentionDays: RETENTION_DAYS, now: () => NOW, log: silentLog });

/** A checkout of `document` created at `at`, with one payment (final at `finalAt` when given, else pending). */
async function checkoutWithPayment(
  store: Store,
  tag: string,
  at: number,
  finalAt: number | null,
  customer: { name: string | null; document: string | null; documentHash?: string | null } = { name: 'Maria', document: MARIA },
): Promise<string> {
  const id = `co_${tag.padEnd(24, 'A')}`;
  await store.checkouts.create(checkoutRecord({ id, orderId: `order-${tag}`, createdAt: at, ...customer }));
  const reference = `pay-${tag}`;
  await store.checkouts.attachPayment(id, paymentRecord(reference, at, { checkoutId: id, valueCents: 4990, transactionId: `tx-${tag}` }), 0, null);
  if (finalAt !== null) await store.payments.updateStatus(reference, PARTNER_STATUS.approved, true, finalAt, paymentOutcome);
  return id;
}

const payoutId = (tag: string) => `tr_${tag.padEnd(24, 'B')}`;

/** A payout to `key` (a CPF key unless told), refused (final) at `at`, or accepted and awaiting its outcome. */
async function payoutTo(store: Store, tag: string, at: number, final: boolean, key = JOAO, checkoutId: string | null = null): Promise<string> {
  const id = payoutId(tag);
  const created = await store.payouts.create(
    payoutRecord({
      id,
      idempotencyKey: `key-${tag}`,
      transactionId: `ptx-${tag}`,
      pixKey: key,
      pixKeyType: 'CPF',
      customerDocument: null,
      checkoutId,
      createdAt: at,
      updatedAt: at,
    }),
    PARTNER_STATUS.approved,
  );
  assert.ok('payout' in created && created.created, `payout ${tag} created`);
  if (final) await store.payouts.markRefused(id, 'invalid_key', null, at, refusalOutcome);
  else await store.payouts.markSent(id, transferRecord(`pref-${tag}`, at), transferOutcome);
  return id;
}

for (const kind of kinds) {
  describe(`personal data (${kind.name})`, () => {
    test('the purge erases the personal fields of old final records and keeps money facts, recent, pending and disputed ones', async () => {
      const { store } = await kind.open();
      const old = await checkoutWithPayment(store, 'old', OLD, OLD + DAY);
      const pending = await checkoutWithPayment(store, 'pending', OLD, null);
      const recent = await checkoutWithPayment(store, 'recent', RECENT, RECENT);
      const lateFinal = await checkoutWithPayment(store, 'late', OLD, RECENT);
      const disputed = await checkoutWithPayment(store, 'disputed', OLD, OLD + DAY);
      assert.ok(await store.disputes.open({ reference: 'pay-disputed', notified: 'canceled', webhookEventId: null, at: OLD + 2 * DAY }, disputeOutcome));
      const oldPayout = await payoutTo(store, 'oldpay', OLD, true);
      const awaiting = await payoutTo(store, 'awaiting', OLD, false);
      const recentPayout = await payoutTo(store, 'recentpay', RECENT, true);

      const purged = await service(store).purge();
      assert.deepEqual({ checkouts: purged?.checkouts, payouts: purged?.payouts }, { checkouts: 1, payouts: 1 });
      assert.equal(purged?.cutoff, NOW - RETENTION_DAYS * DAY);

      const erased = await store.checkouts.get(old);
      assert.equal(erased?.name, null);
      assert.equal(erased?.document, null);
      assert.equal(erased?.personalDataErasedAt, NOW);
      // Money facts stay: the amount, the order, the payment and its state, the times.
      assert.equal(erased?.valueCents, 4990);
      assert.equal(erased?.orderId, 'order-old');
      assert.equal(erased?.paymentReference, 'pay-old');
      assert.equal(erased?.createdAt, OLD);
      const [paid] = await store.checkouts.payments(old);
      assert.deepEqual([paid?.valueCents, paid?.partnerStatus, paid?.final, paid?.transactionId], [4990, PARTNER_STATUS.approved, true, 'tx-old']);
      for (const kept of [pending, recent, lateFinal, disputed]) {
        const record = await store.checkouts.get(kept);
        assert.deepEqual([record?.name, record?.document], ['Maria', MARIA], `${kept} keeps its customer`);
      }

      const erasedPayout = await store.payouts.get(oldPayout);
      assert.equal(erasedPayout?.pixKey, ERASED);
      assert.deepEqual([erasedPayout?.valueCents, erasedPayout?.state, erasedPayout?.transactionId], [1000, 'refused', 'ptx-oldpay']);
      // Its view keeps its shape: the key reads `erased`.
      assert.equal(payoutView(erasedPayout).pix_key, ERASED);
      assert.equal((await store.payouts.get(awaiting))?.pixKey, JOAO);
      assert.equal((await store.payouts.get(recentPayout))?.pixKey, JOAO);

      // Idempotent: a second purge (another instance at the same moment) finds nothing more.
      const again = await service(store).purge();
      assert.deepEqual([again?.checkouts, again?.payouts, again?.notifications, again?.deliveries], [0, 0, 0, 0]);

      // Once the dispute is resolved (long ago), its checkout's customer goes too.
      await store.disputes.resolve('pay-disputed', 'checked', OLD + 3 * DAY);
      assert.equal((await service(store).purge())?.checkouts, 1);
      assert.equal((await store.checkouts.get(disputed))?.document, null);
    });

    test('two purges at once (two instances, a lease run out) erase each record once', async () => {
      const { store } = await kind.open();
      const id = await checkoutWithPayment(store, 'twice', OLD, OLD + DAY);
      await payoutTo(store, 'twicepay', OLD, true);
      const [a, b] = await Promise.all([service(store).purge(), service(store).purge()]);
      assert.equal((a?.checkouts ?? 0) + (b?.checkouts ?? 0), 1);
      assert.equal((a?.payouts ?? 0) + (b?.payouts ?? 0), 1);
      assert.equal((await store.checkouts.get(id))?.document, null);
    });

    test('the purge goes in batches until nothing old is left', async () => {
      const { store } = await kind.open();
      const ids = [];
      for (let n = 0; n < 5; n++) ids.push(await checkoutWithPayment(store, `batch${n}`, OLD + n, OLD + DAY));
      for (let n = 0; n < 3; n++) {
        const id = await store.webhookEvents.add(`{"n":${n}}`, OLD);
        await store.webhookEvents.markProcessed(id, OLD, 'applied');
      }
      const purged = await new PersonalData({
        store,
        cipher: new PersonalDataCipher(),
        retentionDays: RETENTION_DAYS,
        now: () => NOW,
        log: silentLog,
        batch: 2,
      }).purge();
      assert.deepEqual([purged?.checkouts, purged?.notifications], [5, 3]);
      for (const id of ids) assert.equal((await store.checkouts.get(id))?.name, null);
    });

    test('a stop ends a purge under way after its current batch (a shutdown does not wait for a whole first purge); the next purge goes on', async () => {
      const { store } = await kind.open();
      for (let n = 0; n < 5; n++) await checkoutWithPayment(store, `stop${n}`, OLD + n, OLD + DAY);
      const options = { store, cipher: new PersonalDataCipher(), retentionDays: RETENTION_DAYS, now: () => NOW, log: silentLog, batch: 2 };
      const purge = store.personalData.purge.bind(store.personalData);
      const stopping = new PersonalData({
        ...options,
        // The shutdown comes while the first batch runs.
        store: { ...store, personalData: { ...store.personalData, purge: (...args) => (void stopping.stop(), purge(...args)) } },
      });
      assert.equal((await stopping.purge())?.checkouts, 2);
      assert.equal((await new PersonalData(options).purge())?.checkouts, 3);
    });

    test('processed notifications and delivered outbox bodies older than the retention are pruned; unprocessed and undelivered kept', async () => {
      const db = await kind.open();
      const { store } = db;
      const oldProcessed = await store.webhookEvents.add('{"old":"processed"}', OLD);
      await store.webhookEvents.markProcessed(oldProcessed, OLD, 'applied');
      await store.webhookEvents.add('{"old":"unprocessed"}', OLD);
      const recentProcessed = await store.webhookEvents.add('{"recent":"processed"}', RECENT);
      await store.webhookEvents.markProcessed(recentProcessed, RECENT, 'applied');

      await checkoutWithPayment(store, 'delivered', OLD, OLD);
      await checkoutWithPayment(store, 'undelivered', OLD, OLD);
      await checkoutWithPayment(store, 'fresh', RECENT, RECENT);
      const entries = await store.outbox.list();
      const of = (tag: string) => entries.find((e) => e.reference === `pay-${tag}`)!;
      const attempt = { status: 200, error: null, durationMs: 5 };
      await store.outbox.recordAttempt(
        of('delivered').id,
        { ...attempt, at: OLD },
        { state: 'delivered', nextAttemptAt: OLD, lastError: null, deliveredAt: OLD },
      );
      await store.outbox.recordAttempt(
        of('fresh').id,
        { ...attempt, at: RECENT },
        { state: 'delivered', nextAttemptAt: RECENT, lastError: null, deliveredAt: RECENT },
      );

      const purged = await service(store).purge();
      assert.equal(purged?.notifications, 1);
      assert.equal(purged?.deliveries, 1);
      assert.deepEqual((await db.column('webhook_events', 'raw_body')).sort(), ['{"old":"unprocessed"}', '{"recent":"processed"}']);

      const pruned = await store.outbox.get(of('delivered').id);
      // The row stays (its event id: the event is never told twice), its body and attempts go.
      assert.deepEqual([pruned?.body, pruned?.state, pruned?.eventId, pruned?.reference], ['', 'delivered', of('delivered').eventId, 'pay-delivered']);
      assert.deepEqual(await store.outbox.attempts(of('delivered').id), []);
      // A pruned row is never replayed: it would send an empty body.
      assert.equal(await store.outbox.replay(of('delivered').id, Date.now()), 0);
      assert.equal((await store.outbox.get(of('delivered').id))?.state, 'delivered');
      assert.notEqual((await store.outbox.get(of('undelivered').id))?.body, '');
      assert.notEqual((await store.outbox.get(of('fresh').id))?.body, '');
      assert.equal((await store.outbox.attempts(of('fresh').id)).length, 1);
    });

    test('with PIX_DATA_KEY the document is sealed at rest: the raw database holds none of its digits, and it opens again', async () => {
      const db = await kind.open();
      const { store } = db;
      const cipher = new PersonalDataCipher(KEY);
      const id = await checkoutWithPayment(store, 'sealed', RECENT, null, sealedCustomer(cipher, 'Maria Souza', '529.982.247-25'));
      const stored = await store.checkouts.get(id);
      assert.match(stored?.document ?? '', /^v1:/);
      assert.match(stored?.name ?? '', /^v1:/);
      assert.equal(cipher.open(stored!.document), '529.982.247-25');
      assert.equal(cipher.open(stored!.name), 'Maria Souza');
      const raw = await db.raw();
      for (const secret of [MARIA, '529.982.247-25', 'Maria Souza']) assert.equal(raw.includes(secret), false, `the raw database holds ${secret}`);

      // The same bytes hold the document when it is stored without a key: the check above can fail.
      await checkoutWithPayment(store, 'clear', RECENT, null, { name: 'Joao Clear', document: JOAO });
      assert.equal((await db.raw()).includes(JOAO), true);
    });

    test('a wrong or missing key is a clear error naming no value, never a crash', async () => {
      const { store } = await kind.open();
      await checkoutWithPayment(store, 'sealed', RECENT, null, sealedCustomer(new PersonalDataCipher(KEY), 'Maria', MARIA));
      // Found by the clear column? No: by its hash, which another key does not make; nothing found, no crash.
      assert.deepEqual((await service(store, OTHER_KEY).export(MARIA)).checkouts, []);
      const stored = await store.checkouts.get(`co_${'sealed'.padEnd(24, 'A')}`);
      assert.throws(
        () => new PersonalDataCipher(OTHER_KEY).open(stored!.document),
        (error: Error) => {
          assert.ok(error instanceof DataKeyError);
          assert.match(error.message, /another key/);
          assert.equal(error.message.includes(MARIA), false);
          return true;
        },
      );
      assert.throws(() => new PersonalDataCipher().open(stored!.document), /PIX_DATA_KEY is not set/);
      assert.throws(() => new PersonalDataCipher('too-short'), /32 bytes/);
    });

    test('the purge seals documents kept in clear from before the key, which are then found by their hash', async () => {
      const db = await kind.open();
      const { store } = db;
      const id = await checkoutWithPayment(store, 'legacy', RECENT, null, { name: 'Maria', document: '529.982.247-25' });
      const purged = await service(store, KEY).purge();
      assert.equal(purged?.sealed, 1);
      assert.equal(purged?.checkouts, 0);
      const sealed = await store.checkouts.get(id);
      assert.match(sealed?.document ?? '', /^v1:/);
      assert.ok(sealed?.documentHash);
      assert.equal((await db.raw()).includes(MARIA), false);
      const exported = await service(store, KEY).export(MARIA);
      assert.deepEqual(
        exported.checkouts.map((c) => [c.checkout_id, c.name, c.document]),
        [[id, 'Maria', '529.982.247-25']],
      );
      assert.equal((await service(store, KEY).purge())?.sealed, 0);
    });

    test("a data subject's export lists their checkouts, payments and payouts; erase clears their personal fields and keeps money facts", async () => {
      const { store } = await kind.open();
      const cipher = new PersonalDataCipher(KEY);
      const sealed = await checkoutWithPayment(store, 'sealedjoao', OLD, RECENT, sealedCustomer(cipher, 'Joao', '111.444.777-35'));
      const clear = await checkoutWithPayment(store, 'clearjoao', RECENT, null, { name: 'Joao', document: JOAO });
      const other = await checkoutWithPayment(store, 'maria', RECENT, RECENT);
      const payout = await payoutTo(store, 'tojoao', RECENT, true, '111.444.777-35');
      const emailKey = await payoutTo(store, 'email', RECENT, true, 'joao@cliente.example');
      const refund = await payoutTo(store, 'refund', RECENT, false, 'joao@cliente.example', sealed);

      const exported = await service(store, KEY).export(JOAO);
      assert.equal(exported.document, maskDocument(JOAO));
      assert.deepEqual(
        exported.checkouts.map((c) => [c.checkout_id, c.name, c.document, c.value, c.payments.map((p) => p.reference)]),
        [
          [sealed, 'Joao', '111.444.777-35', 49.9, ['pay-sealedjoao']],
          [clear, 'Joao', JOAO, 49.9, ['pay-clearjoao']],
        ],
      );
      assert.deepEqual(exported.payouts.map((p) => [p.transfer_id, p.kind, p.pix_key]).sort(), [
        [refund, 'refund', 'joao@cliente.example'],
        [payout, 'payout', '111.444.777-35'],
      ]);

      const report = await service(store, KEY).erase('111.444.777-35');
      assert.deepEqual(report, { checkouts: 2, payouts: 2, inFlight: 0 });
      for (const id of [sealed, clear]) {
        const record = await store.checkouts.get(id);
        assert.deepEqual([record?.name, record?.document, record?.documentHash ?? null, record?.valueCents], [null, null, null, 4990]);
      }
      assert.equal((await store.payouts.get(payout))?.pixKey, ERASED);
      assert.deepEqual([(await store.payouts.get(refund))?.pixKey, (await store.payouts.get(refund))?.state], [ERASED, 'pending']);
      // Others' records are untouched; nothing of Joao's is found any more.
      assert.equal((await store.checkouts.get(other))?.document, MARIA);
      assert.equal((await store.payouts.get(emailKey))?.pixKey, 'joao@cliente.example');
      const after = await service(store, KEY).export(JOAO);
      assert.deepEqual(after.checkouts, []);
      assert.deepEqual(after.payouts, []);
    });
  });
}
