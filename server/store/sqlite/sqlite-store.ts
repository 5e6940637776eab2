/**
 * The Store on SQLite through libsql (a better-sqlite3-compatible binding that installs prebuilt on
 * this platform; better-sqlite3 builds from source here). One file, created on first start, schema
 * kept by numbered migrations. Synchronous calls behind the async interface: each is a few
 * microseconds on one local file, cheaper than a thread hop. Suits one proxy instance.
 */
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import Database from 'libsql';
import { migrate } from './migrations.ts';
import type { TokenStore } from '../../partner/token-store.ts';
import { sqliteCheckouts } from '../checkouts/sqlite.ts';
import { countingErrors, storeErrors } from '../errors.ts';
import { sqliteDisputes } from '../disputes/sqlite.ts';
import { sqliteIntents } from '../intents/sqlite.ts';
import { sqliteWebhookEvents } from '../notifications/sqlite.ts';
import { sqliteOutbox, sqliteOutboxWriter } from '../outbox/sqlite.ts';
import { sqlitePayments } from '../payments/sqlite.ts';
import { sqlitePayoutsAndTransfers } from '../payouts/sqlite.ts';
import { sqlitePersonalData } from '../personal-data/sqlite.ts';
import { storeTimeLeft } from '../deadline.ts';
import { RecordCache } from '../record-cache.ts';
import type { Store } from '../store.ts';
import { StoreError } from '../store.ts';
import { sqliteDatabase, type SqliteContext, type SqliteGuard } from './context.ts';
import { sqliteReports } from '../reports/sqlite.ts';
import { sqliteWidgetFiles } from '../widget-files/sqlite.ts';

/** The database file inside PIX_DATA_DIR. */
export const DB_FILE_NAME = 'pix-checkout.db';

export interface SqliteStoreOptions {
  /** The directory of the database file (created if missing), or `:memory:`. */
  dataDir: string;
  /** Payment records kept in memory in front of the file (default 10,000; 0 for none). */
  cacheSize?: number;
  /** How long a claim on a notification or a delivery lasts (default 30 s). */
  claimMs?: number;
}

/** SQLite's answer in words an operator can act on; any other error is passed on as it is. */
function storeError(error: unknown, file: string): Error {
  if (!(error instanceof Error)) return new Error(String(error));
  const code = (error as { code?: unknown }).code;
  if (typeof code !== 'string') return error;
  if (code === 'SQLITE_CORRUPT' || code === 'SQLITE_NOTADB') return new StoreError(`the database ${file} is damaged; restore it from a backup`, code);
  if (code === 'SQLITE_READONLY' || code === 'SQLITE_CANTOPEN' || code === 'EACCES' || code === 'EROFS' || code === 'EPERM') {
    return new StoreError(`the database ${file} cannot be written: check that the proxy's user may write to its directory (PIX_DATA_DIR)`, code);
  }
  if (code === 'SQLITE_FULL' || code === 'ENOSPC') return new StoreError(`the disk holding ${file} is full`, code);
  if (code.startsWith('SQLITE_')) return new StoreError(`the database ${file} failed (${code})`, code);
  return error;
}

/**
 * Opens (creating if needed) the database under `dataDir`, checks that it is whole (SQLite's quick
 * check: a damaged file is refused at start rather than served wrong), and brings its schema up to
 * date. Throws a StoreError naming what to do when it cannot.
 */
export function openSqliteStore({ dataDir, cacheSize = 10_000, claimMs = 30_000 }: SqliteStoreOptions): Store {
  const file = dataDir === ':memory:' ? ':memory:' : join(dataDir, DB_FILE_NAME);
  let db: Database.Database;
  try {
    if (dataDir !== ':memory:') mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    db = new Database(file);
    // WAL lets reads go on during a write; NORMAL sync is durable across a process crash in WAL mode.
    db.exec(`PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA busy_timeout = ${BUSY_TIMEOUT_MS}; PRAGMA foreign_keys = ON;`);
  } catch (error) {
    throw storeError(error, file);
  }
  try {
    const problems = (db.prepare('PRAGMA quick_check(5)').all() as { quick_check: string }[]).map((row) => row.quick_check).filter((text) => text !== 'ok');
    if (problems.length > 0) throw new StoreError(`the database ${file} is damaged (${problems.join('; ')}); restore it from a backup`, 'SQLITE_CORRUPT');
    migrate(db);
  } catch (error) {
    db.close();
    throw storeError(error, file);
  }
  const writes = file === ':memory:' ? { count: 0 } : sharedWrites(resolve(file));
  const errors = storeErrors((error) => storeError(error, file));
  return countingErrors(openedStore(db, cacheSize, claimMs, { errors, writes, before: busyWithinBudget(db) }), errors);
}

/** How long SQLite waits for another connection's lock outside a request (busy_timeout). */
export const BUSY_TIMEOUT_MS = 5000;

/**
 * Before each statement or transaction (sqlite/context.ts): SQLite waits for a lock (busy_timeout)
 * no longer than what is left of the request's store budget (store/deadline.ts), and BUSY_TIMEOUT_MS
 * outside a request. The wait blocks the process (the driver is synchronous), so this bounds the
 * whole process's stall as well.
 */
function busyWithinBudget(db: Database.Database): () => void {
  let set = BUSY_TIMEOUT_MS;
  return () => {
    const left = storeTimeLeft();
    // In steps of 50 ms (down), so consecutive calls rarely need the pragma again.
    const wanted = left === undefined ? BUSY_TIMEOUT_MS : Math.max(1, Math.min(BUSY_TIMEOUT_MS, Math.floor(left / 50) * 50));
    if (wanted === set) return;
    db.exec(`PRAGMA busy_timeout = ${wanted}`);
    set = wanted;
  };
}

/**
 * Writes made through the store objects of this process, per database file (each statement that
 * writes counts itself, sqlite/context.ts): another store object on the same file then checks for
 * them at its next read, at once. Writes by other processes are looked
 * for at most every OTHER_PROCESS_CHECK_MS.
 */
const processWrites = new Map<string, { count: number }>();
function sharedWrites(file: string): { count: number } {
  let writes = processWrites.get(file);
  if (!writes) processWrites.set(file, (writes = { count: 0 }));
  return writes;
}

/** How stale a cached record may be after another process (a command line) changed it: a millisecond. */
const OTHER_PROCESS_CHECK_MS = 1;

function openedStore(raw: Database.Database, cacheSize: number, claimMs: number, guard: SqliteGuard): Store {
  const { errors, writes } = guard;
  const db = sqliteDatabase(raw, guard);
  const cache = new RecordCache(cacheSize);
  // Another connection to this file (a command line run beside the proxy, another store object)
  // may change a cached record: SQLite's data_version moves when one commits, never for this
  // connection's own writes; any change evicts all, as a Postgres instance forgets whatever another
  // one announces. The pragma costs a few microseconds, as much as the hot status read itself: it is
  // asked after a write through any store object of this process on the file, and otherwise at most
  // every OTHER_PROCESS_CHECK_MS.
  const dataVersion = cacheSize > 0 ? raw.prepare('PRAGMA data_version').raw(true) : null;
  // Asked before reads from memory too, which never wait (no deadline entered): its errors are the store's all the same.
  const readVersion = (): number => {
    try {
      return (dataVersion!.get() as [number])[0];
    } catch (error) {
      throw errors.convert(error);
    }
  };
  let seenVersion = dataVersion ? readVersion() : 0;
  let seenWrites = writes.count;
  let checkedAt = performance.now();
  const noticeOtherWriters = (): void => {
    if (!dataVersion) return;
    const now = performance.now();
    if (writes.count === seenWrites && now - checkedAt < OTHER_PROCESS_CHECK_MS) return;
    seenWrites = writes.count;
    checkedAt = now;
    const version = readVersion();
    if (version !== seenVersion) {
      seenVersion = version;
      cache.clear();
    }
  };

  const context: SqliteContext = { db, cache, claimMs, noticeOtherWriters };
  const outbox = sqliteOutboxWriter(db);
  const sql = {
    loadToken: db.prepare('SELECT token FROM partner_tokens WHERE key = ?'),
    saveToken: db.prepare(
      'INSERT INTO partner_tokens (key, token, saved_at) VALUES (?, ?, ?) ON CONFLICT(key) DO UPDATE SET token = excluded.token, saved_at = excluded.saved_at',
    ),
    clearToken: db.prepare('DELETE FROM partner_tokens WHERE key = ?'),
    // Readiness reads real rows, so damaged pages show there rather than in a customer's request.
    pingPayments: db.prepare('SELECT reference, partner_status FROM payments ORDER BY rowid DESC LIMIT 20'),
    pingCheckouts: db.prepare('SELECT id, order_id FROM checkouts ORDER BY rowid DESC LIMIT 20'),
    pingOutbox: db.prepare('SELECT id, state FROM outbox ORDER BY id DESC LIMIT 20'),
  };
  const tokens: TokenStore = {
    load: async (key) => (sql.loadToken.get(key) as { token: string } | undefined)?.token ?? null,
    save: async (key, token) => void sql.saveToken.run(key, token, Date.now()),
    clear: async (key) => void sql.clearToken.run(key),
  };

  return {
    kind: 'sqlite',
    payments: sqlitePayments(context, outbox),
    checkouts: sqliteCheckouts(context, outbox),
    tokens,
    webhookEvents: sqliteWebhookEvents(context),
    disputes: sqliteDisputes(context, outbox),
    intents: sqliteIntents(context),
    ...sqlitePayoutsAndTransfers(context, outbox),
    outbox: sqliteOutbox(context),
    personalData: sqlitePersonalData(context),
    reports: sqliteReports(context),
    widgetFiles: sqliteWidgetFiles(context),
    async ping() {
      db.operation(() => {
        if (!raw.open) throw new StoreError('the store is closed');
        sql.pingPayments.all();
        sql.pingCheckouts.all();
        sql.pingOutbox.all();
      });
    },
    async close() {
      if (raw.open) raw.close();
    },
  };
}
