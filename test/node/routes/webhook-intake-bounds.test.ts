/**
 * The intake keeps a bounded share of what anyone posts: a flood of 60 KB notifications
 * about references this proxy never issued, through an open intake, grows the store by about a KiB
 * each; a notification about one of ours keeps at most 16 KiB, the record saying it was cut and how
 * long it was, and is still applied (from the body as received); after a restart a cut body is never
 * read as if whole. Both stores: a real SQLite file (its size measured after a checkpoint) and a real
 * Postgres (the table's size on disk, and the bytes of the bodies kept), real HTTP to the proxy,
 * the real sandbox.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import Database from 'libsql';
import pg from 'pg';
import { DEFAULTS } from '../../../server/config/index.ts';
import { startDevStack, type DevStack } from '../../../server/dev-stack.ts';
import { createLogger } from '../../../server/log.ts';
import { createClock } from '../../../server/sandbox/clock.ts';
import { startSandbox, type RunningSandbox } from '../../../server/sandbox/server.ts';
import { DB_FILE_NAME } from '../../../server/store/sqlite/sqlite-store.ts';
import { stackControl, waitFor } from '../../support/checks.ts';
import { startPostgres, type RunningPostgres } from '../../support/postgres.ts';

const T0 = Date.UTC(2030, 0, 1);
const FLOOD = 300;
const MB = 1024 * 1024;

/** A notification about `reference`, padded with random text (nothing compresses it) to `bytes`. */
function padded(reference: string, bytes: number): string {
  const head = JSON.stringify({ external_reference: reference, status: 2, value: 1, padding: '' });
  const padding = randomBytes(bytes)
    .toString('base64')
    .slice(0, bytes - Buffer.byteLength(head));
  const body = JSON.stringify({ external_reference: reference, status: 2, value: 1, padding });
  assert.equal(Buffer.byteLength(body), bytes);
  return body;
}

interface StoreKind {
  name: string;
  start(sandbox: RunningSandbox): Promise<DevStack>;
  /** The store's size on disk now (bytes), flushed first. */
  size(): Promise<number>;
  /** The bytes of every kept body. */
  keptBytes(): Promise<number>;
  close(): Promise<void>;
}

function sqliteKind(): StoreKind {
  const dataDir = mkdtempSync(join(tmpdir(), 'pix-bounds-'));
  const file = join(dataDir, DB_FILE_NAME);
  const withDb = <T>(use: (db: Database.Database) => T): T => {
    const db = new Database(file);
    try {
      return use(db);
    } finally {
      db.close();
    }
  };
  return {
    name: 'SQLite',
    start: (sandbox) => startDevStack({ sandbox, dataDir, background: false, registerWebhook: false, logger: createLogger({ level: 'silent' }) }),
    async size() {
      // The write-ahead log folded into the file, then both measured (the log is empty after TRUNCATE).
      withDb((db) => db.exec('PRAGMA wal_checkpoint(TRUNCATE)'));
      const wal = `${file}-wal`;
      return statSync(file).size + (existsSync(wal) ? statSync(wal).size : 0);
    },
    async keptBytes() {
      return withDb((db) => (db.prepare('SELECT coalesce(sum(length(CAST(raw_body AS BLOB))), 0) AS n FROM webhook_events').get() as { n: number }).n);
    },
    async close() {
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

function postgresKind(): StoreKind {
  let server: RunningPostgres;
  let url: string;
  const one = async (sql: string) => {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      return Number((await client.query<{ n: string }>(sql)).rows[0]?.n);
    } finally {
      await client.end();
    }
  };
  return {
    name: 'Postgres',
    async start(sandbox) {
      server = await startPostgres();
      url = await server.createDatabase();
      return startDevStack({ sandbox, databaseUrl: url, background: false, registerWebhook: false, logger: createLogger({ level: 'silent' }) });
    },
    // The table with its TOAST table and indexes, after a checkpoint (what the data files hold).
    async size() {
      await one('CHECKPOINT');
      return one("SELECT pg_total_relation_size('webhook_events') AS n");
    },
    keptBytes: () => one('SELECT coalesce(sum(octet_length(raw_body)), 0) AS n FROM webhook_events'),
    async close() {
      await server?.stop();
    },
  };
}

for (const makeKind of [sqliteKind, postgresKind]) {
  const kind = makeKind();
  describe(`the intake's bounds on ${kind.name}`, () => {
    let sandbox: RunningSandbox;
    let stack: DevStack;
    const post = (body: string) =>
      fetch(`${stack.apiUrl}/webhooks/partner`, { method: 'POST', headers: { 'content-type': 'application/json' }, body }).then((r) => r.status);

    before(async () => {
      sandbox = await startSandbox({ clock: createClock(() => T0), settleIntervalMs: 0, webhooks: { timeoutMs: 5000, retryDelayMs: 5 } });
      stack = await kind.start(sandbox);
    });
    after(async () => {
      await stack?.close();
      await sandbox?.close();
      await kind.close();
    });

    test(`${FLOOD} unauthenticated 60 KB notifications about references never issued grow the store by at most 1 MB`, async (t) => {
      const before = await kind.size();
      const keptBefore = await kind.keptBytes();
      const flood = Array.from({ length: FLOOD }, (_, i) => padded(`made-up-${i}`, 60_000));
      for (let i = 0; i < flood.length; i += 20) {
        const statuses = await Promise.all(flood.slice(i, i + 20).map(post));
        assert.deepEqual(new Set(statuses), new Set([202]), 'each acknowledged (refusing would lose a real one)');
      }
      await stack.pix.processor.idle();
      const grown = (await kind.size()) - before;
      const kept = (await kind.keptBytes()) - keptBefore;
      t.diagnostic(
        `${kind.name}: ${FLOOD} notifications of 60,000 B: store +${grown.toLocaleString('en')} B on disk, ${kept.toLocaleString('en')} B of bodies kept`,
      );
      assert.ok(kept <= FLOOD * DEFAULTS.webhookIntake.auditBytes, `${kept} bytes of bodies kept`);
      assert.ok(grown <= MB, `the store grew by ${grown} bytes`);
      // Each is still there for the operator: its start, the reference in it, and how long it was.
      const listed = (await stack.store.webhookEvents.listByResult(['unknown_reference'], 10_000)).filter((e) => e.rawBody.includes('"made-up-'));
      assert.equal(listed.length, FLOOD);
      assert.ok(listed.every((e) => e.originalBytes === 60_000 && Buffer.byteLength(e.rawBody) <= DEFAULTS.webhookIntake.auditBytes));
    });

    test('a 40 KiB notification about one of our payments is kept cut at 16 KiB, flagged, and still applied; a real-sized one is kept whole', async () => {
      const reference = (await stack.pix.payments.create({ value: 9 })).reference;
      await stackControl(stack, 'POST', `/payments/${reference}/pay`);
      const body = padded(reference, 40 * 1024);
      assert.equal(await post(body), 202);
      await stack.pix.processor.idle();
      assert.equal((await stack.store.payments.get(reference))?.final, true, 'confirmed with the partner from the body as received');
      const [cut] = (await stack.store.webhookEvents.listByResult(['applied'], 10)).filter((e) => e.rawBody.includes(reference));
      assert.ok(cut, 'stored and processed');
      assert.equal(cut.originalBytes, 40 * 1024);
      assert.ok(Buffer.byteLength(cut.rawBody) <= DEFAULTS.webhookIntake.keptBytes);
      assert.equal(cut.rawBody, body.slice(0, cut.rawBody.length), 'its start, as received');
      assert.ok(cut.rawBody.length > DEFAULTS.webhookIntake.keptBytes - 4, 'cut at 16 KiB, not shorter');

      const other = (await stack.pix.payments.create({ value: 8 })).reference;
      const real = padded(other, 1500);
      assert.equal(await post(real), 202);
      await stack.pix.processor.idle();
      const whole = (await stack.store.webhookEvents.unprocessed(100)).find((e) => e.rawBody.includes(other));
      assert.equal(whole?.rawBody, real, 'a real-sized notification is kept whole');
      assert.equal(whole?.originalBytes, undefined);
    });

    test('a cut notification waiting for its try again (read whole at the intake) is not settled by a drain meanwhile', async () => {
      const reference = (await stack.pix.payments.create({ value: 6 })).reference;
      const body = padded(reference, 40 * 1024);
      assert.equal(await post(body), 202);
      // Still pending at the partner: kept to be confirmed again.
      const waiting = async () => (await stack.store.webhookEvents.listByResult(['waiting'], 100)).find((e) => e.rawBody.includes(reference));
      const kept = await waitFor('the notification waiting', waiting);
      assert.equal(kept.originalBytes, 40 * 1024);
      await stack.pix.processor.drain();
      assert.equal((await stack.store.webhookEvents.listByResult(['cut'], 100)).filter((e) => e.id === kept.id).length, 0, 'not settled cut');
      await stackControl(stack, 'POST', `/payments/${reference}/pay`);
      await waitFor('applied at its try again', async () => (await stack.store.webhookEvents.listByResult(['applied'], 100)).some((e) => e.id === kept.id));
      assert.equal((await stack.store.payments.get(reference))?.final, true);
    });

    test('a cut body taken up again after a restart is never read as if whole', async () => {
      const reference = (await stack.pix.payments.create({ value: 7 })).reference;
      await stackControl(stack, 'POST', `/payments/${reference}/pay`);
      // What a crash between the write and the processing leaves: its start stored, unprocessed. Its
      // start reads as a whole notification about the payment; read, it would be applied.
      const start = JSON.stringify({ external_reference: reference, status: 2 });
      const id = await stack.store.webhookEvents.add(start, T0, 40 * 1024);
      await stack.pix.processor.drain();
      await stack.pix.processor.idle();
      const [settled] = (await stack.store.webhookEvents.listByResult(['cut'], 10)).filter((e) => e.id === id);
      assert.equal(settled?.originalBytes, 40 * 1024);
      assert.equal((await stack.store.payments.get(reference))?.final, false, 'not applied from a cut body (the reconciler follows it)');
    });
  });
}
