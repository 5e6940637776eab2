/**
 * What several instances over one Postgres share beyond rows: leases (who polls a payment or
 * reconciles now, on the database's clock) and the changes other instances announce (LISTEN/NOTIFY
 * on one channel, heard on a connection of its own, reopened when lost). Dialect-specific by nature.
 */
import pg from 'pg';
import type { StoreOutage } from '../outage.ts';
import { postgresConnection } from '../postgres/tls.ts';
import type { PostgresContext, Query } from '../postgres/context.ts';
import type { RecordCache } from '../record-cache.ts';
import type { Cluster, StoreChange } from './types.ts';

/** The channel every instance announces payment changes on. Payload: `<instance> payment <reference>`. */
export const CHANGES_CHANNEL = 'pix_checkout_changes';

/** The database's clock in epoch ms, for leases (the instances' own clocks may differ). */
const DB_NOW = `(extract(epoch from clock_timestamp()) * 1000)::bigint`;

export interface ClusterOptions {
  url: string;
  /** The pg type parsers the pool uses (BIGINT as numbers). */
  types: pg.CustomTypesConfig;
  /** Where the database is, for messages (never the password). */
  where: string;
  cache: RecordCache;
  /** The sweep of run-out leases and the goodbye at close: their failures are nobody's (PostgresStatements.housekeeping). */
  housekeeping: Query;
  onProblem?: ((message: string, error?: unknown) => void) | undefined;
  /** Told when the listening connection is lost or cannot be reopened, and when it is back (instead of onProblem). */
  outage?: StoreOutage | undefined;
}

/** Announces a payment's change in the caller's transaction: delivered to the other instances on commit. */
export const announcer =
  (instanceId: string): PostgresContext['announce'] =>
  (q, reference) =>
    q('SELECT pg_notify($1, $2)', [CHANGES_CHANNEL, `${instanceId} payment ${reference}`]);

export function postgresCluster(
  { query, instanceId }: Pick<PostgresContext, 'query' | 'instanceId'>,
  { url, types, where, cache, housekeeping, onProblem, outage }: ClusterOptions,
): { cluster: Cluster; listen: () => Promise<void>; stop: () => Promise<void> } {
  // Listening: one connection of its own, reopened when lost.
  const listeners = new Set<(change: StoreChange) => void>();
  let listener: pg.Client | null = null;
  let listening = false;
  let closing = false;
  let retry: ReturnType<typeof setTimeout> | undefined;
  let retryDelay = 250;
  const emit = (change: StoreChange) => {
    for (const l of listeners) {
      try {
        l(change);
      } catch (error) {
        onProblem?.('a store change listener failed', error);
      }
    }
  };
  async function listen(): Promise<void> {
    const started = outage?.started();
    const client = new pg.Client({ ...postgresConnection(url), types });
    client.on('notification', (message) => {
      const [from, kind, reference] = (message.payload ?? '').split(' ');
      if (from === instanceId || kind !== 'payment' || !reference) return;
      cache.forget(reference);
      emit({ kind: 'payment', reference });
    });
    const lost = (error?: unknown) => {
      if (listener !== client) return;
      listener = null;
      listening = false;
      // Changes may be missed from now on: nothing cached is trusted until listening again.
      cache.clear();
      client.end().catch(() => undefined);
      if (closing) return;
      if (outage) outage.failed('listen', error ?? new Error('Connection terminated'));
      else onProblem?.(`lost the database connection that hears other instances' changes (${where}); reconnecting`, error);
      reconnect();
    };
    client.on('error', lost);
    client.on('end', () => lost());
    await client.connect();
    await client.query(`LISTEN ${CHANGES_CHANNEL}`);
    listener = client;
    listening = true;
    retryDelay = 250;
    outage?.recovered('listen', started);
    // What changed while not listening is not known: read everything again.
    cache.clear();
    emit({ kind: 'resync' });
  }
  function reconnect(): void {
    clearTimeout(retry);
    retry = setTimeout(() => {
      listen().catch((error: unknown) => {
        if (outage) outage.failed('listen', error);
        else onProblem?.(`cannot listen for other instances' changes (${where}); trying again`, error);
        retryDelay = Math.min(retryDelay * 2, 5000);
        if (!closing) reconnect();
      });
    }, retryDelay);
    retry.unref?.();
  }

  // Run-out leases are swept now and then: one row per payment polled would otherwise stay.
  const sweeper = setInterval(() => {
    housekeeping(`DELETE FROM leases WHERE expires_at < ${DB_NOW} - 60000`).catch(() => undefined);
  }, 60_000);
  sweeper.unref?.();

  const cluster: Cluster = {
    instanceId,
    async lease(name, ttlMs) {
      const { rowCount } = await query(
        `INSERT INTO leases (name, holder, expires_at) VALUES ($1, $2, ${DB_NOW} + $3)
         ON CONFLICT (name) DO UPDATE SET holder = EXCLUDED.holder, expires_at = EXCLUDED.expires_at
         WHERE leases.expires_at <= ${DB_NOW} OR leases.holder = EXCLUDED.holder
         RETURNING 1`,
        [name, instanceId, Math.max(1, Math.round(ttlMs))],
      );
      return rowCount === 1;
    },
    async release(name) {
      await query('DELETE FROM leases WHERE name = $1 AND holder = $2', [name, instanceId]);
    },
    onChange(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    listening: () => listening,
  };

  /** Stops listening and sweeping, and gives up this instance's leases (the others take that work at once). */
  async function stop(): Promise<void> {
    closing = true;
    clearTimeout(retry);
    clearInterval(sweeper);
    await housekeeping('DELETE FROM leases WHERE holder = $1', [instanceId]).catch(() => undefined);
    const client = listener;
    listener = null;
    listening = false;
    await client?.end().catch(() => undefined);
  }
  return { cluster, listen, stop };
}
