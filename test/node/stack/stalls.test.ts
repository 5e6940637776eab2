/**
 * Stalls over Postgres, on a real proxy process and a throwaway Postgres: while another session holds
 * `checkouts` and `payments` locked (ACCESS EXCLUSIVE, inside a transaction), a request that needs
 * them answers `503 store_unavailable` once its statement's deadline passes, and the log names the
 * lock timeout (not a connection timeout); `/ready` answers 503 within its own deadline, naming the
 * store that did not answer; released, both recover. And a slow statement is named as a statement
 * timeout. Asserted on codes and words, never on durations (the bounds are test timeouts).
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { MIGRATION_LOCK } from '../../../server/store/postgres/migrations.ts';
import { queryDeadlines } from '../../../server/store/postgres/deadlines.ts';
import { deadlineCause } from '../../../server/store/postgres/errors.ts';
import { openPostgresStore } from '../../../server/store/postgres/postgres-store.ts';
import { startSandbox, type RunningSandbox } from '../../../server/sandbox/server.ts';
import { proxyEnv } from '../../support/cluster-harness.ts';
import { startPostgres, type RunningPostgres } from '../../support/postgres.ts';
import { databaseDeadlines } from '../../../server/config/database.ts';

const API_KEY = 'stalls-test-key-0123456789abcdef0123456789ab';
const USER_AGENT = 'Loja Teste (dev@loja.example)';

let postgres: RunningPostgres;
let sandbox: RunningSandbox;
let dir: string;
let databaseUrl: string;

before(async () => {
  [postgres, sandbox] = await Promise.all([startPostgres(), startSandbox()]);
  databaseUrl = await postgres.createDatabase();
  dir = mkdtempSync(join(tmpdir(), 'pix-stalls-'));
  writeFileSync(join(dir, 'ca.pem'), sandbox.ca);
});
after(async () => {
  await sandbox?.close();
  await postgres?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

interface LogLine {
  level: number;
  msg: string;
  url?: string;
  err?: { message?: string; code?: string };
}

describe('a table locked by another session', () => {
  test(
    'a request answers 503 store_unavailable naming the lock timeout; /ready answers 503 within its deadline; both recover',
    { timeout: 120_000 },
    async (t) => {
      const env = {
        ...proxyEnv(sandbox.url, dir, USER_AGENT, API_KEY),
        PORT: '0',
        PIX_LOG_LEVEL: 'info',
        PIX_WEBHOOK_SOURCE_IPS: '127.0.0.1',
        PIX_DATABASE_URL: databaseUrl,
        PIX_READY_CACHE_MS: '0',
      };
      const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', 'server/main.ts'], {
        cwd: process.cwd(),
        env,
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      const locker = new pg.Client({ connectionString: databaseUrl });
      try {
        const lines: LogLine[] = [];
        const waiting: { match: (l: LogLine) => boolean; resolve: (l: LogLine) => void }[] = [];
        /** The first line (so far or to come) that matches: log lines reach stdout a little after the answer. */
        const lineWhere = (match: (l: LogLine) => boolean) =>
          new Promise<LogLine>((resolve) => {
            const seen = lines.find(match);
            if (seen) resolve(seen);
            else waiting.push({ match, resolve });
          });
        createInterface({ input: child.stdout! }).on('line', (line) => {
          const entry = JSON.parse(line) as LogLine;
          lines.push(entry);
          for (const wait of waiting.filter((w) => w.match(entry))) wait.resolve(entry);
        });
        const url = (await lineWhere((l) => l.msg === 'pix-checkout proxy listening')).url!;
        const merchant = { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json' };
        const create = (order: string) =>
          fetch(`${url}/api/checkouts`, { method: 'POST', headers: merchant, body: JSON.stringify({ value: 10, order_id: order }) });
        assert.equal((await create(`stall-before-${process.pid}`)).status, 201);
        assert.equal((await fetch(`${url}/ready`)).status, 200);

        await locker.connect();
        await locker.query('BEGIN');
        await locker.query('LOCK TABLE checkouts, payments IN ACCESS EXCLUSIVE MODE');

        let started = performance.now();
        const stalled = await create(`stall-during-${process.pid}`);
        const stalledMs = Math.round(performance.now() - started);
        assert.equal(stalled.status, 503);
        assert.equal(((await stalled.json()) as { error: { code: string } }).error.code, 'store_unavailable');
        // The request's own line, or the outage's first line when a background loop declared one first
        // (store/outage.ts): either carries the store's own sentence.
        const cause = await lineWhere((l) => l.msg === 'the store cannot serve' || ((l as { outage?: string }).outage === 'store' && l.err !== undefined));
        assert.match(cause.err?.message ?? '', /lock timeout after \d+ ms \(lock_timeout\)/);
        assert.doesNotMatch(cause.err?.message ?? '', /connection timeout|cannot be reached/);
        assert.equal(cause.err?.code, '55P03');

        started = performance.now();
        const notReady = await fetch(`${url}/ready`);
        // Printed, never asserted (the machine's load decides them): the deadlines' effect.
        t.diagnostic(`under the lock: a create answered 503 after ${stalledMs} ms, /ready 503 after ${Math.round(performance.now() - started)} ms`);
        assert.equal(notReady.status, 503);
        const body = (await notReady.json()) as { error: { code: string; message: string }; checks: { store: string } };
        assert.equal(body.error.code, 'not_ready');
        assert.equal(body.checks.store, 'failed');
        // Its store check has a budget of its own (1 s): the lock wait ends it (55P03), or the check's deadline does.
        assert.match(body.error.message, /the store did not answer within \d+ ms|the store failed \(55P03\)/);

        await locker.query('ROLLBACK');
        assert.equal((await create(`stall-after-${process.pid}`)).status, 201);
        assert.equal((await fetch(`${url}/ready`)).status, 200);

        const exited = once(child, 'exit');
        const signalled = performance.now();
        child.kill('SIGTERM');
        assert.equal((await exited)[0], 0);
        t.diagnostic(`SIGTERM to exit 0 (idle instance, Postgres, PIX_SHUTDOWN_DRAIN_MS 0): ${Math.round(performance.now() - signalled)} ms`);
      } finally {
        await locker.end().catch(() => undefined);
        if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      }
    },
  );
});

describe('a slow statement', () => {
  test('is canceled by the pool settings and named a statement timeout', { timeout: 60_000 }, async () => {
    const deadlines = queryDeadlines(databaseDeadlines(300));
    const client = new pg.Client({ connectionString: databaseUrl, ...deadlines });
    await client.connect();
    try {
      const error = (await client.query('SELECT pg_sleep(30)').catch((e: unknown) => e)) as Error;
      assert.equal((error as { code?: string }).code, '57014');
      assert.deepEqual(deadlineCause(error, deadlines)?.code, '57014');
      assert.match(deadlineCause(error, deadlines)?.cause ?? '', /^statement timeout after 300 ms/);
    } finally {
      await client.end();
    }
  });
});

describe('a migration', () => {
  test(
    'is not cut by the pool deadlines: an instance waits for another instance migrating longer than the driver query_timeout',
    { timeout: 60_000 },
    async () => {
      const url = await postgres.createDatabase();
      // Another instance migrating, as far as this one can tell: the migration lock, held 3 s, longer
      // than the driver's query_timeout with a 100 ms statement timeout (2.1 s).
      const other = new pg.Client({ connectionString: url });
      await other.connect();
      await other.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK]);
      const released = new Promise((resolve) => setTimeout(resolve, 3000)).then(() => other.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK]));
      try {
        const store = await openPostgresStore({ url, deadlines: databaseDeadlines(100) });
        await store.close();
      } finally {
        await released;
        await other.end();
      }
    },
  );
});
