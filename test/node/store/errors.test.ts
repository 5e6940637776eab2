/**
 * Where the store touches its database (server/store/errors.ts, sqlite/context.ts, postgres/context.ts):
 * a driver's error becomes a StoreError, counted once on its store (the proxy's
 * pix_checkout_store_errors_total), a failure inside a transaction included, on SQLite and on a real
 * Postgres; and each statement the SQLite store prepares counts as a write exactly when SQLite's own
 * plan of it writes, so a read added to an aggregate is never taken for a write.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, mock, test } from 'node:test';
import Database from 'libsql';
import pg from 'pg';
import { databaseDeadlines } from '../../../server/config/database.ts';
import { paymentOutcome } from '../../../server/domain/outcomes.ts';
import { PARTNER_STATUS } from '../../../server/partner/wire.ts';
import { countingErrors, storeErrorCount, storeErrors } from '../../../server/store/errors.ts';
import { openStore } from '../../../server/store/open.ts';
import { onlyReads } from '../../../server/store/sqlite/context.ts';
import { DB_FILE_NAME, openSqliteStore } from '../../../server/store/sqlite/sqlite-store.ts';
import { StoreError, type Store } from '../../../server/store/store.ts';
import { startPostgres, type RunningPostgres } from '../../support/postgres.ts';
import { tempDirs } from '../../support/temp-dirs.ts';
import { paymentRecord } from '../../support/records.ts';

const tempDir = tempDirs('pix-store-errors-');
let postgres: RunningPostgres | undefined;
before(async () => {
  postgres = await startPostgres();
});
after(async () => {
  await postgres?.stop();
});

describe('store errors counted', () => {
  test('each StoreError is counted once on its store, however many layers it passes; other errors pass unchanged', () => {
    const errors = storeErrors((error) => (error instanceof RangeError ? error : new StoreError('the database could not answer')));
    const store = countingErrors({}, errors);
    const other = countingErrors(
      {},
      storeErrors((error) => error as Error),
    );
    assert.equal(storeErrorCount(store), 0);
    const made = errors.convert(new Error('SQLITE_IOERR'));
    assert.ok(made instanceof StoreError);
    // A statement's error rethrown by its transaction: the same StoreError, not counted again.
    assert.equal(errors.convert(made), made);
    assert.ok(errors.convert(new Error('SQLITE_CORRUPT')) instanceof StoreError);
    const passed = new RangeError('not a driver error');
    assert.equal(errors.convert(passed), passed);
    assert.equal(storeErrorCount(store), 2);
    assert.equal(storeErrorCount(other), 0);
    assert.equal(storeErrorCount({}), undefined);
  });

  test('SQLite: an operation after the store is closed fails with a StoreError, counted', async () => {
    const store = openSqliteStore({ dataDir: tempDir() });
    assert.equal(await store.payments.get('no-such-payment'), null);
    assert.equal(storeErrorCount(store), 0);
    await store.close();
    await assert.rejects(store.ping(), StoreError);
    assert.equal(storeErrorCount(store), 1);
  });

  /**
   * A payment made final writes its outcome event in the same transaction; the database fails that
   * second statement (a trigger raising, as a full disk or a damaged page would): the transaction
   * rolls back, and the caller gets a StoreError, counted once.
   */
  async function failsInsideTransaction(store: Store, breakOutbox: () => Promise<void>): Promise<void> {
    const at = Date.UTC(2030, 0, 1);
    await store.payments.insert(paymentRecord('ref-tx', at));
    await breakOutbox();
    assert.equal(storeErrorCount(store), 0);
    await assert.rejects(store.payments.updateStatus('ref-tx', PARTNER_STATUS.approved, true, at + 1, paymentOutcome), StoreError);
    assert.equal(storeErrorCount(store), 1);
    const kept = await store.payments.get('ref-tx');
    assert.equal(kept?.final, false, 'the status change rolled back with its event');
  }

  test('SQLite: a statement failing inside a transaction is a StoreError, counted once', async () => {
    const dir = tempDir();
    const store = openSqliteStore({ dataDir: dir, cacheSize: 0 });
    try {
      await failsInsideTransaction(store, async () => {
        const other = new Database(join(dir, DB_FILE_NAME));
        other.exec(`CREATE TRIGGER outbox_fails BEFORE INSERT ON outbox BEGIN SELECT RAISE(ABORT, 'the outbox cannot be written'); END`);
        other.close();
      });
    } finally {
      await store.close();
    }
  });

  test('Postgres: a statement failing inside a transaction is a StoreError, counted once', { timeout: 30_000 }, async () => {
    const url = await postgres!.createDatabase();
    const store = await openStore({ dataDir: tempDir(), databaseUrl: url, deadlines: databaseDeadlines(), cacheSize: 0 });
    try {
      await failsInsideTransaction(store, async () => {
        const client = new pg.Client({ connectionString: url });
        await client.connect();
        await client.query(
          `CREATE FUNCTION outbox_fails() RETURNS trigger AS $$ BEGIN RAISE EXCEPTION 'disk full' USING ERRCODE = '53100'; END $$ LANGUAGE plpgsql`,
        );
        await client.query('CREATE TRIGGER outbox_fails BEFORE INSERT ON outbox FOR EACH ROW EXECUTE FUNCTION outbox_fails()');
        await client.end();
      });
    } finally {
      await store.close();
    }
  });
});

describe('SQLite writes counted by the statement', () => {
  test("every statement the store prepares counts as a write exactly when SQLite's plan of it writes", async () => {
    const dir = tempDir();
    const prepared = mock.method(Database.prototype, 'prepare');
    let store: Store;
    try {
      store = openSqliteStore({ dataDir: dir });
      // Built per call: each shape of the payouts list.
      await store.payouts.list({ limit: 1 });
      await store.payouts.list({ states: ['pending', 'approved'], before: 10, limit: 1 });
    } finally {
      prepared.mock.restore();
    }
    await store.close();
    const texts = [...new Set(prepared.mock.calls.map((call) => call.arguments[0]))];
    assert.ok(texts.length > 80, `the store's statements were seen (${texts.length})`);
    const db = new Database(join(dir, DB_FILE_NAME));
    try {
      const wrong: string[] = [];
      let reads = 0;
      for (const text of texts) {
        // SQLite's own answer: a statement that may write opens a write transaction (Transaction, p2 = 1).
        const plan = db.prepare(`EXPLAIN ${text}`).all() as { opcode: string; p2: number }[];
        const writes = plan.some((step) => step.opcode === 'Transaction' && step.p2 !== 0);
        if (!writes) reads++;
        if (onlyReads(db.prepare(text), text) === writes) wrong.push(`${writes ? 'a write counted as a read' : 'a read counted as a write'}: ${text}`);
      }
      assert.deepEqual(wrong, []);
      assert.ok(reads > 30, `reads among them (${reads})`);
    } finally {
      db.close();
    }
  });
});
