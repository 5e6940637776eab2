/**
 * The cluster test: three proxy instances (child processes) over one real Postgres and
 * one sandbox on loopback, with a small round-robin front in this test as their load balancer. 300
 * checkouts are created and read through the front, then read on every instance; 60 of their
 * payments are watched by status streams held on the three instances; the payments are paid in the
 * sandbox (control API) in batches, with the partner's webhooks landing through the front on any
 * instance, and one instance is SIGKILLed while a batch is under way and started again. Every
 * checkout must read the same everywhere, every stream must see `paid`, and every outcome must reach
 * the merchant's receiver once by event id. A second delivery is allowed (at least once) only for an
 * event first received in the second before the kill (up to the moment its exit is seen: a delivery
 * the dying instance completed may be read here a few ms after the signal): its sender died before
 * recording it, and another instance sent it again once the claim lapsed (PIX_CLAIM_SECONDS).
 *
 * Streams poll the partner once a minute only (PIX_WATCH_INTERVAL_MS): what they see in time comes
 * through the store's change notifications (LISTEN/NOTIFY), whichever instance learned it. A stream
 * on the killed instance is opened again after the server's `retry`, through the front, as a
 * browser's EventSource would.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import pg from 'pg';
import { outcomeEventId } from '../../../server/domain/outcomes.ts';
import { PARTNER_STATUS } from '../../../server/partner/wire.ts';
import { startSandbox, type RunningSandbox } from '../../../server/sandbox/server.ts';
import {
  killAll,
  proxyEnv,
  proxyInstance,
  sandboxControl,
  setSandboxNotificationUrl,
  sleep,
  startFront,
  startMerchantReceiver,
  until,
  watchStatus,
  type Front,
  type MerchantReceiver,
  type ProxyInstance,
  type StatusWatch,
} from '../../support/cluster-harness.ts';
import { startPostgres, type RunningPostgres } from '../../support/postgres.ts';
import { freePort } from '../../support/ports.ts';

const CHECKOUTS = 300;
/** Payments watched by a status stream, spread over the three instances. */
const WATCHED = 60;
/** Payments paid at once in the sandbox, and the pause between batches. */
const BATCH = 30;
const BATCH_PAUSE_MS = 400;
/** The victim is killed 50 to 250 ms into the batch after this many (halfway). */
const KILL_AFTER_BATCHES = 5;
const OUTCOME_WAIT_MS = 90_000;
const API_KEY = 'cluster-test-api-key-0123456789abcdef0123456789';
const MERCHANT_SECRET = 'cluster-test-merchant-secret-0123456789abcdef';
const WEBHOOK_SECRET_PATH = 'cluster-test-secret-path-0123456789';
const USER_AGENT = 'Cluster Test (dev@loja.example)';

let postgres: RunningPostgres | undefined;
let databaseUrl: string;
let sandbox: RunningSandbox | undefined;
let dir: string;
let setupMs = 0;
let receiver: MerchantReceiver | undefined;
let front: Front | undefined;
const instances: ProxyInstance[] = [];
const watches: StatusWatch[] = [];

before(async () => {
  const setupStarted = Date.now();
  dir = mkdtempSync(join(tmpdir(), 'pix-cluster-'));
  [postgres, sandbox, receiver] = await Promise.all([
    startPostgres(),
    startSandbox({ webhooks: { timeoutMs: 2000, retryDelayMs: 100 } }),
    startMerchantReceiver(MERCHANT_SECRET),
  ]);
  databaseUrl = await postgres.createDatabase();
  writeFileSync(join(dir, 'ca.pem'), sandbox.ca);
  const env = {
    ...proxyEnv(sandbox.url, dir, USER_AGENT, API_KEY),
    PIX_DATABASE_URL: databaseUrl,
    PIX_CLAIM_SECONDS: '5',
    PIX_RATE_LIMIT_CREATE: '0',
    PIX_RATE_LIMIT_STATUS: '0',
    PIX_RATE_LIMIT_WEBHOOK: '0',
    // Every stream comes from loopback (60, and again after the kill): no cap per address.
    PIX_STREAMS_PER_CLIENT: '0',
    PIX_WEBHOOK_SECRET_PATH: WEBHOOK_SECRET_PATH,
    PIX_MERCHANT_WEBHOOK_URL: receiver.url,
    PIX_MERCHANT_WEBHOOK_SECRET: MERCHANT_SECRET,
    PIX_RECONCILE_TICK_MS: '500',
    PIX_RECONCILE_EVERY_S: '1',
    PIX_RECONCILE_NEAR_S: '1',
    PIX_WATCH_INTERVAL_MS: '60000',
    PIX_LOG_LEVEL: 'error',
  };
  for (const name of ['A', 'B', 'C']) instances.push(proxyInstance(name, await freePort(), env));
  // The first start migrates the database; the others then find it ready.
  await instances[0]!.start();
  await Promise.all(instances.slice(1).map((instance) => instance.start()));
  front = await startFront(instances);
  await setSandboxNotificationUrl(sandbox, USER_AGENT, `${front.url}/api/webhooks/partner/${WEBHOOK_SECRET_PATH}`);
  setupMs = Date.now() - setupStarted;
});

after(async () => {
  for (const watch of watches) watch.close();
  await Promise.all(watches.map((watch) => watch.done));
  await killAll(instances);
  await front?.close();
  await receiver?.close();
  await sandbox?.close();
  await postgres?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** A JSON call with the merchant's key; the answer's status and body. */
async function merchantCall(origin: string, method: string, path: string, body?: unknown): Promise<{ status: number; json: any }> {
  const res = await fetch(`${origin}/api${path}`, {
    method,
    headers: { authorization: `Bearer ${API_KEY}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = text;
  }
  return { status: res.status, json };
}

/** Runs `work` over `items`, `limit` at a time. */
async function pool<T, R>(items: readonly T[], limit: number, work: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length) {
        const index = next++;
        results[index] = await work(items[index]!, index);
      }
    }),
  );
  return results;
}

const percentile = (values: number[], p: number) => {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
};

test(
  'three instances over one Postgres: 300 checkouts read everywhere, streams see paid, every outcome delivered once while one instance is SIGKILLed and restarted',
  { timeout: 240_000 },
  async (t) => {
    const started = Date.now();
    const frontUrl = front!.url;
    const diagnostic = (label: string, value: unknown) => t.diagnostic(`${label}: ${typeof value === 'string' ? value : JSON.stringify(value)}`);

    // Every instance is on the shared database and hears the others.
    for (const instance of instances) await assertReady(instance);

    // 300 checkouts and their payments, created through the front, each read back through it.
    const checkouts = await pool(
      Array.from({ length: CHECKOUTS }, (_, i) => i),
      12,
      async (i) => {
        const orderId = `cluster-${process.pid}-${i}`;
        const created = await merchantCall(frontUrl, 'POST', '/checkouts', { value: 10 + i / 100, order_id: orderId });
        assert.equal(created.status, 201, `checkout ${i} created: ${JSON.stringify(created.json)}`);
        const id = created.json.checkout_id as string;
        const res = await fetch(`${frontUrl}/api/checkouts/${id}/payment`, { method: 'POST' });
        const payment = (await res.json()) as { reference: string; status: string };
        assert.equal(res.status, 201, `checkout ${i}'s payment issued: ${JSON.stringify(payment)}`);
        const read = await merchantCall(frontUrl, 'GET', `/checkouts/${id}`);
        assert.equal(read.status, 200, `checkout ${i} read through the front: ${JSON.stringify(read.json)}`);
        assert.equal(read.json.payment?.reference, payment.reference, `checkout ${i} read through the front shows its payment`);
        return { id, orderId, reference: payment.reference };
      },
    );
    const createdAt = Date.now();
    assert.equal(new Set(checkouts.map((c) => c.reference)).size, CHECKOUTS, 'one payment per checkout, all different');

    // Each checkout read directly on each instance: the same payment everywhere.
    await pool(checkouts, 12, async (checkout) => {
      for (const instance of instances) {
        const read = await merchantCall(instance.origin, 'GET', `/checkouts/${checkout.id}`);
        assert.equal(read.status, 200, `checkout ${checkout.id} on ${instance.name}: ${JSON.stringify(read.json)}`);
        assert.equal(read.json.order_id, checkout.orderId, `checkout ${checkout.id} on ${instance.name} has its order id`);
        assert.equal(read.json.payment?.reference, checkout.reference, `checkout ${checkout.id} on ${instance.name} shows the same payment`);
        assert.equal(read.json.status, 'pending', `checkout ${checkout.id} on ${instance.name} is pending before it is paid`);
      }
    });
    const readAt = Date.now();

    // Streams on every instance, each opened directly on one (as a balancer would have routed it).
    const victim = instances[2]!;
    for (let i = 0; i < WATCHED; i++) {
      const { reference } = checkouts[i * Math.floor(CHECKOUTS / WATCHED)]!;
      const on = instances[i % instances.length]!;
      watches.push(watchStatus(reference, on.name, `${on.origin}/api/payments/${reference}/events`, `${frontUrl}/api/payments/${reference}/events`));
    }
    const streamsOpen = await until(() => watches.every((watch) => watch.statuses.length > 0), 20_000, 50);
    assert.ok(streamsOpen, `every stream got its first event: ${watches.filter((w) => w.statuses.length === 0).length} did not`);
    for (const watch of watches) assert.deepEqual(watch.statuses, ['pending'], `the stream of ${watch.reference} on ${watch.openedOn} starts pending`);

    // Paid in the sandbox in batches, in an order that mixes watched and unwatched payments; the
    // victim is killed halfway and started again while the payments go on.
    const control = sandboxControl(sandbox!.url, sandbox!.ca);
    const isPaid = (reference: string) => sandbox!.state.payments.get(reference)?.status === PARTNER_STATUS.approved;
    /** Pays in the sandbox (control API); a call cut by a closing connection is sent again only if it did not pay. */
    const pay = async (reference: string) => {
      for (let attempt = 1; ; attempt++) {
        try {
          const res = await control.send(`/payments/${reference}/pay`);
          assert.equal(res.status, 200, `${reference} paid in the sandbox: ${res.text}`);
          return;
        } catch (error) {
          if (isPaid(reference)) return;
          if (attempt >= 3 || error instanceof assert.AssertionError) throw error;
        }
      }
    };
    const order = shuffle(checkouts.map((checkout) => checkout.reference));
    const paidAt = new Map<string, number>();
    let kill: { signalledAt: number; exitedAt: number } | null = null;
    let restart: Promise<void> | null = null;
    let restartedAt = 0;
    try {
      for (let b = 0; b * BATCH < order.length; b++) {
        const paying = Promise.all(
          order.slice(b * BATCH, (b + 1) * BATCH).map(async (reference) => {
            await pay(reference);
            paidAt.set(reference, Date.now());
          }),
        );
        // Awaited below; meanwhile a failure is not an unhandled rejection.
        paying.catch(() => {});
        if (b === KILL_AFTER_BATCHES) {
          // While this batch's webhooks land and its outcomes go out.
          await sleep(50 + Math.random() * 200);
          kill = await victim.kill();
          restart = sleep(500)
            .then(() => victim.start())
            .then(() => {
              restartedAt = Date.now();
            });
          // A failed restart fails the test below, not an unhandled rejection now.
          restart.catch(() => {});
        }
        await paying;
        await sleep(BATCH_PAUSE_MS);
      }
    } finally {
      control.close();
    }
    const lastPaidAt = Math.max(...paidAt.values());
    await restart;
    assert.ok(kill, 'the victim was killed mid-run');
    assert.equal(victim.starts, 2, 'the victim was started again');
    assert.ok(victim.running(), `the victim runs again:\n${victim.stderrTail()}`);
    await assertReady(victim);

    // Every outcome at the merchant's receiver: one payment.paid per payment. Then the store settles:
    // a delivery the killed instance sent but did not record stays claimed for PIX_CLAIM_SECONDS and
    // is then sent again by another instance (a duplicate counted below only once it has come), and
    // a notification it had stored but not processed is taken up the same way.
    const expected = new Map(checkouts.map((checkout) => [outcomeEventId('payment.paid', checkout.reference), checkout.reference]));
    const receipts = receiver!.receipts;
    const allDelivered = await until(() => [...expected.keys()].every((id) => receipts.has(id)), OUTCOME_WAIT_MS);
    const lastOutcomeAt = Math.max(...[...receipts.values()].map((receipt) => receipt.first));
    const missing = [...expected].filter(([id]) => !receipts.has(id)).map(([, reference]) => reference);
    const db = new pg.Client({ connectionString: databaseUrl });
    await db.connect();
    let store: { outbox: Record<string, number>; attempts: number; notifications: Record<string, number>; settledAfterMs: number };
    try {
      const count = async (sql: string) => Number((await db.query<{ n: string }>(sql)).rows[0]!.n);
      const settleStarted = Date.now();
      await until(
        async () =>
          (await count(`SELECT COUNT(*) AS n FROM outbox WHERE state <> 'delivered'`)) === 0 &&
          (await count('SELECT COUNT(*) AS n FROM webhook_events WHERE processed_at IS NULL')) === 0,
        20_000,
      );
      const settledAfterMs = Date.now() - settleStarted;
      const outbox = await db.query<{ state: string; n: string }>('SELECT state, COUNT(*) AS n FROM outbox GROUP BY state');
      const notifications = await db.query<{ result: string | null; n: string }>('SELECT result, COUNT(*) AS n FROM webhook_events GROUP BY result');
      store = {
        outbox: Object.fromEntries(outbox.rows.map((row) => [row.state, Number(row.n)])),
        attempts: await count('SELECT COUNT(*) AS n FROM delivery_attempts'),
        notifications: Object.fromEntries(notifications.rows.map((row) => [row.result ?? 'unprocessed', Number(row.n)])),
        settledAfterMs,
      };
    } finally {
      await db.end();
    }
    const streamsDone = await until(() => watches.every((watch) => watch.finalAt !== null), 20_000);

    // Duplicates: allowed only for an event first received in the second before the kill (its
    // sender died before recording the delivery; another instance took the delivery up).
    const duplicated = [...receipts].filter(([, receipt]) => receipt.count > 1);
    const excused = duplicated.filter(([, receipt]) => receipt.first >= kill.signalledAt - 1000 && receipt.first <= kill.exitedAt);
    const unexcused = duplicated.filter((entry) => !excused.includes(entry));
    const extraDeliveries = duplicated.reduce((sum, [, receipt]) => sum + receipt.count - 1, 0);

    // Figures.
    const outcomeLatency = [...expected].filter(([id]) => receipts.has(id)).map(([id, reference]) => receipts.get(id)!.first - paidAt.get(reference)!);
    const streamLatency = watches.filter((w) => w.finalAt !== null).map((w) => w.finalAt! - paidAt.get(w.reference)!);
    const crossInstance = watches.filter((w) => {
      const target = front!.firstWebhookTarget.get(w.reference);
      return w.openedOn !== victim.name && target !== undefined && target !== w.openedOn;
    }).length;
    diagnostic('instances', instances.map((i) => `${i.name}:${i.port}`).join(' '));
    diagnostic('phases (ms)', {
      setup_postgres_sandbox_3_instances: setupMs,
      create_300: createdAt - started,
      read_900: readAt - createdAt,
      pay: lastPaidAt - Math.min(...paidAt.values()),
      kill_to_restarted: restartedAt - kill.signalledAt,
      last_payment_to_last_outcome: lastOutcomeAt - lastPaidAt,
    });
    diagnostic('front, by instance', Object.fromEntries(front!.counts));
    diagnostic('front, failed mid-request (502) / no instance (503)', `${front!.failed} / ${front!.unavailable}`);
    diagnostic('partner webhooks landing per instance (first per payment)', countBy([...front!.firstWebhookTarget.values()]));
    diagnostic(
      'outcome latency pay→receiver (ms) p50/p95/max',
      `${percentile(outcomeLatency, 50)}/${percentile(outcomeLatency, 95)}/${Math.max(...outcomeLatency)}`,
    );
    diagnostic('stream latency pay→paid (ms) p50/p95/max', `${percentile(streamLatency, 50)}/${percentile(streamLatency, 95)}/${Math.max(...streamLatency)}`);
    diagnostic('streams', {
      watched: watches.length,
      saw_paid: watches.filter((w) => w.statuses.at(-1) === 'paid').length,
      reconnected: watches.filter((w) => w.connections > 1).length,
      on_a_survivor_told_of_a_webhook_that_landed_elsewhere: crossInstance,
      refusals: watches.flatMap((w) => w.refusals).length,
    });
    diagnostic('outcomes', {
      expected: expected.size,
      delivered_unique: [...expected.keys()].filter((id) => receipts.has(id)).length,
      missing: missing.length,
      unexpected: [...receipts.keys()].filter((id) => !expected.has(id)).length,
      duplicated_events: duplicated.length,
      extra_deliveries: extraDeliveries,
      excused_as_first_received_in_the_second_before_the_kill: excused.length,
      bad_signatures: receiver!.badSignatures,
    });
    diagnostic('store: outbox by state', store.outbox);
    diagnostic('store: delivery attempts recorded', store.attempts);
    diagnostic('store: partner notifications by result', store.notifications);
    diagnostic('store: settled (nothing pending) after all outcomes arrived, ms', store.settledAfterMs);
    if (duplicated.length > 0) {
      diagnostic(
        'duplicates (first receipt relative to the kill, ms)',
        duplicated.map(([id, receipt]) => `${id.slice(0, 12)} ×${receipt.count} at ${receipt.first - kill.signalledAt}`).join(', '),
      );
    }
    assert.ok(allDelivered, `every outcome reached the merchant within ${OUTCOME_WAIT_MS / 1000} s; missing: ${missing.join(', ')}`);
    assert.equal(missing.length, 0, 'no outcome missing');
    assert.equal(receiver!.badSignatures, 0, 'every delivery is signed');
    assert.equal(
      unexcused.length,
      0,
      `no duplicate delivery but of an event first received in the second before the kill: ${unexcused.map(([id, r]) => `${id} ×${r.count} first at ${r.first - kill.signalledAt} ms from the kill`).join(', ')}`,
    );
    assert.ok(
      streamsDone,
      `every stream saw a final status: ${watches
        .filter((w) => w.finalAt === null)
        .map((w) => `${w.reference} on ${w.openedOn}: ${w.statuses.join(',')}`)
        .join('; ')}`,
    );
    for (const watch of watches) {
      assert.equal(watch.statuses.at(-1), 'paid', `the stream of ${watch.reference} (opened on ${watch.openedOn}) ends paid: ${watch.statuses.join(',')}`);
    }

    assert.deepEqual(store.outbox, { delivered: CHECKOUTS }, 'one outbox row per outcome, whichever instances learned it, each delivered');
    assert.equal(store.notifications.unprocessed ?? 0, 0, "no partner notification left unprocessed (the killed instance's claims taken up)");

    // Every checkout, read on every instance (the restarted one included), says paid.
    await pool(checkouts, 12, async (checkout) => {
      for (const instance of instances) {
        const read = await merchantCall(instance.origin, 'GET', `/checkouts/${checkout.id}`);
        assert.equal(read.status, 200, `checkout ${checkout.id} on ${instance.name} at the end: ${JSON.stringify(read.json)}`);
        assert.equal(read.json.payment?.reference, checkout.reference, `checkout ${checkout.id} on ${instance.name} keeps its payment`);
        assert.equal(read.json.status, 'paid', `checkout ${checkout.id} on ${instance.name} says paid`);
        assert.equal(read.json.payment?.status, 'paid', `the payment of checkout ${checkout.id} on ${instance.name} says paid`);
      }
    });
    diagnostic('whole test (ms)', Date.now() - started);
  },
);

/** The instance's /ready: ready, on Postgres, hearing the others' changes. */
async function assertReady(instance: ProxyInstance): Promise<void> {
  const ready = await fetch(`${instance.origin}/ready`);
  const report = (await ready.json()) as { ready: boolean; checks: { database: string; store_changes?: string } };
  assert.equal(ready.status, 200, `instance ${instance.name} is ready: ${JSON.stringify(report)}`);
  assert.equal(report.checks.database, 'postgres', `instance ${instance.name} is on Postgres`);
  assert.equal(report.checks.store_changes, 'listening', `instance ${instance.name} hears the others' changes`);
}

function shuffle<T>(items: T[]): T[] {
  for (let i = items.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [items[i], items[j]] = [items[j]!, items[i]!];
  }
  return items;
}

function countBy(values: string[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const value of values) counts[value] = (counts[value] ?? 0) + 1;
  return counts;
}
