/**
 * A store outage is logged once when it starts, once a minute while it lasts and once when it ends
 * (server/store/outage.ts): first with a fake clock, then with a real Postgres stopped under a
 * running instance, its log lines counted by event (never timed).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { TUNABLES } from '../../../server/config/index.ts';
import { startDevStack, type DevStack } from '../../../server/dev-stack.ts';
import { createLogger } from '../../../server/log.ts';
import { StoreOutage, outageCause } from '../../../server/store/outage.ts';
import { StoreError } from '../../../server/store/store.ts';
import { waitFor } from '../../support/checks.ts';
import { startPostgres, type RunningPostgres } from '../../support/postgres.ts';

interface Line {
  level: number;
  msg: string;
  outage?: string;
  cause?: string;
  last_cause?: string;
  down_ms?: number;
  failures?: number;
  sources?: string[];
  component?: string;
}
const ERROR = 50;
const WARN = 40;

function capture(level: 'debug' | 'info' = 'info') {
  const lines: Line[] = [];
  const log = createLogger({ level, destination: { write: (line: string) => void lines.push(JSON.parse(line) as Line) } });
  return { lines, log };
}

describe('the store outage reporter (a fake clock)', () => {
  test('a success of an operation that began before the first failure does not end the outage', () => {
    const { lines, log } = capture();
    let now = 5_000;
    const outage = new StoreOutage({ log, now: () => now });
    const before = outage.started();
    now += 10;
    outage.failed('merchant-deliveries', new StoreError('the server shut down', '57P01'));
    now += 10;
    // The reconciler's pass, under way since before the outage, finishes well: the store is still down.
    outage.recovered('reconciler', before);
    assert.equal(outage.down, true);
    outage.failed('reconciler', new StoreError('the server shut down', '57P01'));
    const after = outage.started();
    now += 10;
    outage.recovered('reconciler', after);
    assert.equal(outage.down, false);
    assert.deepEqual(
      lines.map((l) => [l.level, l.msg]),
      [
        [ERROR, 'the store is unavailable (the server shut down (57P01)); logged again once a minute while it lasts'],
        [WARN, 'the store is available again after 0.0 s (the server shut down (57P01))'],
      ],
    );
  });

  test('once at the start, once a minute while it lasts, once at the end with how long and why', () => {
    const { lines, log } = capture();
    let now = 1_000_000;
    const outage = new StoreOutage({ log, now: () => now });
    outage.recovered('reconciler');
    assert.equal(lines.length, 0, 'nothing to end');
    const refused = new StoreError('the database at db:5432/pix cannot be reached (ECONNREFUSED): check PIX_DATABASE_URL', 'ECONNREFUSED');
    // 150 s of failures, one a second from each of three loops: 450 failures.
    for (let second = 0; second < 150; second++, now += 1000)
      for (const source of ['reconciler', 'merchant-deliveries', 'listen']) outage.failed(source, refused);
    assert.equal(outage.down, true);
    assert.deepEqual(
      lines.map((l) => [l.level, l.msg]),
      [
        [ERROR, 'the store is unavailable (ECONNREFUSED); logged again once a minute while it lasts'],
        [ERROR, 'the store is still unavailable (ECONNREFUSED), for 60 s'],
        [ERROR, 'the store is still unavailable (ECONNREFUSED), for 120 s'],
      ],
    );
    assert.equal(lines[1]!.failures, 180, 'the failures since the last line');
    assert.deepEqual(lines[1]!.sources?.sort(), ['listen', 'merchant-deliveries', 'reconciler']);
    outage.failed('reconciler', Object.assign(new Error('canceling statement due to statement timeout'), { code: '57014' }));
    outage.recovered('reconciler');
    outage.recovered('listen');
    assert.equal(outage.down, false);
    assert.equal(lines.length, 4, 'one line for the end');
    const end = lines[3]!;
    assert.equal(end.level, WARN);
    assert.equal(end.msg, 'the store is available again after 150 s (ECONNREFUSED)');
    assert.equal(end.down_ms, 150_000);
    assert.equal(end.failures, 451);
    assert.equal(end.cause, 'ECONNREFUSED');
    assert.equal(end.last_cause, 'statement timeout (57014)');
    // A new outage is a new start line.
    outage.failed('pool', new Error('Connection terminated unexpectedly'));
    assert.equal(lines.length, 5);
    assert.equal(lines[4]!.cause, 'Connection terminated unexpectedly');
  });

  test('names the real cause: the driver code, else the message', () => {
    assert.equal(outageCause(new StoreError('cannot be reached (ECONNREFUSED)', 'ECONNREFUSED')), 'ECONNREFUSED');
    assert.equal(outageCause(Object.assign(new Error('x'), { code: '57014' })), 'statement timeout (57014)');
    assert.equal(outageCause(Object.assign(new Error('x'), { code: '57P01' })), 'the server shut down (57P01)');
    assert.equal(outageCause(new Error('connect ECONNREFUSED 127.0.0.1:5432')), 'ECONNREFUSED');
    assert.equal(
      outageCause(new StoreError('the database at h cannot be reached: Connection terminated unexpectedly', 'connection')),
      'Connection terminated unexpectedly',
    );
    assert.equal(outageCause('plain words'), 'plain words');
  });
});

describe('a Postgres outage under a running instance', () => {
  let postgres: RunningPostgres;
  let stack: DevStack;
  const { lines, log } = capture('debug');
  before(async () => {
    postgres = await startPostgres();
    const databaseUrl = await postgres.createDatabase();
    // Its loops as busy as they get: the reconciler 10 times a second, deliveries polled every second.
    stack = await startDevStack({
      databaseUrl,
      logger: log,
      reconcile: { tickMs: 100 },
      merchantWebhook: { path: '/merchant-hook', secret: 'merchant-secret-merchant-secret-0123' },
      mount: (app) => app.post('/merchant-hook', (c) => c.body(null, 204)),
    });
  });
  after(async () => {
    await stack?.close();
    await postgres?.stop();
  });

  test('logs one line when it starts and one when it ends, with how long and the cause, however many passes fail', async () => {
    await waitFor('the instance ready', async () => (await fetch(`${stack.url}/ready`)).status === 200);
    const from = lines.length;
    const since = () => lines.slice(from);
    const failures = () => since().filter((l) => l.msg === 'store operation failed during an outage');
    await postgres.pause();
    // Counted by event: at least 20 failed store operations (passes, the listening connection's tries).
    await waitFor('20 failures', () => failures().length >= 20, 60_000);
    // Requests that need the store answer 503, each with its request line, and no error line each.
    const statuses = await Promise.all(
      Array.from({ length: 10 }, () =>
        fetch(`${stack.apiUrl}/checkouts/co_${'A'.repeat(24)}`, { headers: { authorization: `Bearer ${TUNABLES.sandboxApiKey}` } }).then((r) => r.status),
      ),
    );
    assert.deepEqual(new Set(statuses), new Set([503]));
    const during = since();
    // Each request keeps its own line (`request`, status 503); nothing else per failure.
    const errors = during.filter((l) => l.level >= ERROR && l.msg !== 'request');
    assert.deepEqual(
      errors.map((l) => l.msg),
      ['the store is unavailable (' + errors[0]?.cause + '); logged again once a minute while it lasts'],
      `one error line for ${failures().length} failures: ${JSON.stringify(errors.map((l) => l.msg))}`,
    );
    assert.match(errors[0]!.cause!, /ECONNREFUSED|Connection terminated|shut down/);
    assert.ok(new Set(failures().map((l) => (l as { source?: string }).source)).size >= 3, 'several loops and the requests told it');

    await postgres.resume();
    await waitFor('the end of the outage', () => since().some((l) => l.msg.startsWith('the store is available again')), 60_000);
    const ended = since().filter((l) => l.msg.startsWith('the store is available again'));
    assert.equal(ended.length, 1);
    assert.equal(ended[0]!.level, WARN);
    assert.ok(ended[0]!.down_ms! > 0);
    assert.ok(ended[0]!.failures! >= 20);
    assert.match(ended[0]!.cause!, /ECONNREFUSED|Connection terminated|shut down/);
    assert.equal(since().filter((l) => l.level >= ERROR && l.msg !== 'request').length, 1, 'still one error line in all');
  });
});
