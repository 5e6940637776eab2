/** What every Postgres aggregate (payments/postgres.ts, ...) is built from: the pool's queries and what the instance shares. */
import type pg from 'pg';
import type { RecordCache } from '../record-cache.ts';

export type Query = <R extends pg.QueryResultRow = pg.QueryResultRow>(text: string, values?: unknown[]) => Promise<pg.QueryResult<R>>;

export interface PostgresContext {
  /** One statement on any pooled connection. */
  query: Query;
  /** One transaction; a serialization failure or deadlock is tried again (the work is pure until COMMIT). */
  tx: <T>(work: (q: Query) => Promise<T>) => Promise<T>;
  /** Payment records in front of the database. */
  cache: RecordCache;
  /** How long a claim on a notification or a delivery lasts. */
  claimMs: number;
  /** This instance's name: its claims and leases are held under it. */
  instanceId: string;
  /** Tells the other instances, on commit, that this payment changed (NOTIFY). */
  announce: (q: Query, reference: string) => Promise<unknown>;
}
