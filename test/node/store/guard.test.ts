/**
 * The store's guard (server/store/guard.ts): driver errors become StoreErrors, and those are counted
 * per store, nested groups included (the proxy's pix_checkout_store_errors_total). Over a real SQLite
 * store whose file is taken away under it, and a plain object for what passes through unchanged.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { guarded, storeErrorCount } from '../../../server/store/guard.ts';
import { openSqliteStore } from '../../../server/store/sqlite/sqlite-store.ts';
import { StoreError } from '../../../server/store/store.ts';

const dirs: string[] = [];
after(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describe('store errors counted', () => {
  test('each StoreError a store fails with is counted once, on that store, from its groups too', async () => {
    const target = {
      fails: async () => Promise.reject(new Error('SQLITE_IOERR')),
      throws: () => {
        throw new Error('SQLITE_CORRUPT');
      },
      passes: async () => Promise.reject(new RangeError('not a driver error')),
      group: { fails: async () => Promise.reject(new Error('SQLITE_BUSY')) },
    };
    const toError = (error: unknown) => (error instanceof RangeError ? error : new StoreError('the database could not answer'));
    const store = guarded(target, toError);
    const other = guarded(target, toError);
    assert.equal(storeErrorCount(store), 0);
    await assert.rejects(store.fails(), StoreError);
    assert.throws(() => store.throws(), StoreError);
    await assert.rejects(store.group.fails(), StoreError);
    await assert.rejects(store.passes(), RangeError);
    assert.equal(storeErrorCount(store), 3);
    assert.equal(storeErrorCount(other), 0);
    assert.equal(storeErrorCount({}), undefined);
  });

  test('a real SQLite store: an operation after it is closed fails with a StoreError, counted', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'pix-guard-'));
    dirs.push(dir);
    const store = openSqliteStore({ dataDir: dir });
    assert.equal(await store.payments.get('no-such-payment'), null);
    assert.equal(storeErrorCount(store), 0);
    await store.close();
    await assert.rejects(store.ping(), StoreError);
    assert.equal(storeErrorCount(store), 1);
  });
});
