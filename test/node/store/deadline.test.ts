/**
 * The request's store deadline (store/deadline.ts) on a real SQLite store: a store call once it passed
 * fails at once (request_deadline); after a partner answer the store gets at least a second more
 * (allowStoreAtLeast), so a slow partner never leaves a payment it created without the time to record
 * it; detached work and work after the answer have no deadline.
 */
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, test } from 'node:test';
import { allowStoreAtLeast, storeTimeLeft, withoutStoreBudget, withStoreBudget } from '../../../server/store/deadline.ts';
import { openSqliteStore } from '../../../server/store/sqlite/sqlite-store.ts';

describe("a request's store deadline", () => {
  test('past it a store call fails at once; a partner answer leaves the store at least a second more', async () => {
    const store = openSqliteStore({ dataDir: ':memory:' });
    try {
      await withStoreBudget(50, async () => {
        // The partner's slow answer took the whole budget...
        await sleep(80);
        await assert.rejects(store.payments.get('slow'), (error: Error & { code?: string }) => error.code === 'request_deadline');
        // ...and its answer leaves the store a second to record it.
        allowStoreAtLeast(1000);
        assert.equal(await store.payments.get('slow'), null);
        assert.ok(storeTimeLeft()! > 500);
      });
    } finally {
      await store.close();
    }
  });

  test('no deadline outside a request, in detached work, or after the answer', async () => {
    const store = openSqliteStore({ dataDir: ':memory:' });
    try {
      assert.equal(storeTimeLeft(), undefined);
      let later: Promise<unknown> = Promise.resolve();
      await withStoreBudget(30, async () => {
        withoutStoreBudget(() => assert.equal(storeTimeLeft(), undefined));
        later = sleep(60).then(() => store.payments.get('after-the-answer'));
      });
      assert.equal(await later, null, 'work the request left running is not cut by its deadline');
    } finally {
      await store.close();
    }
  });
});
