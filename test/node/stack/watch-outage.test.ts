/**
 * A payment watched by a status stream while the Postgres store is stopped (pg_ctl stop): each failed
 * poll is a debug line, counted in the outage's closing line (`payment polls failed`), not a warning
 * per payment per poll (tens of "watching a payment failed" lines per outage).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startDevStack, type DevStack } from '../../../server/dev-stack.ts';
import { createLogger } from '../../../server/log.ts';
import { waitFor } from '../../support/checks.ts';
import { startPostgres, type RunningPostgres } from '../../support/postgres.ts';

interface Line {
  level: number;
  msg: string;
  refused?: Record<string, number>;
}
const WARN = 40;

describe('watched payments during a store outage', () => {
  let postgres: RunningPostgres;
  let stack: DevStack;
  const lines: Line[] = [];
  const log = createLogger({ level: 'debug', destination: { write: (line: string) => void lines.push(JSON.parse(line) as Line) } });
  before(async () => {
    postgres = await startPostgres();
    stack = await startDevStack({ databaseUrl: await postgres.createDatabase(), logger: log, watchIntervalMs: 250, staleAfterMs: 0 });
  });
  after(async () => {
    await stack?.close();
    await postgres?.stop();
  });

  test('its failed polls are counted in the outage line, none at warn', { timeout: 90_000 }, async () => {
    const created = await fetch(`${stack.apiUrl}/payments`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"value":3.5}' });
    assert.equal(created.status, 201);
    const { reference } = (await created.json()) as { reference: string };
    const stream = new AbortController();
    const events = await fetch(`${stack.apiUrl}/payments/${reference}/events`, { signal: stream.signal });
    assert.equal(events.status, 200);
    const reader = events.body!.getReader();
    await reader.read();
    try {
      const from = lines.length;
      const since = () => lines.slice(from);
      await postgres.pause();
      await waitFor('three failed polls', () => since().filter((l) => l.msg === 'watching a payment failed').length >= 3, 30_000);
      await postgres.resume();
      await waitFor('the outage ended', () => since().some((l) => l.msg.startsWith('the store is available again')), 30_000);
      const failedPolls = since().filter((l) => l.msg === 'watching a payment failed');
      assert.deepEqual(
        failedPolls.filter((l) => l.level >= WARN).map((l) => l.msg),
        [],
        'no warning per poll',
      );
      const ended = since().find((l) => l.msg.startsWith('the store is available again'))!;
      assert.ok((ended.refused?.['payment polls failed'] ?? 0) >= 3, JSON.stringify(ended));
    } finally {
      stream.abort();
      await reader.cancel().catch(() => undefined);
    }
  });
});
