/**
 * Two proxy instances in this process over one real Postgres and one sandbox (real HTTPS): what makes
 * them one proxy, each rule checked where a second instance could break it. The partner's webhooks
 * go to A only; B learns through the shared store. The three-instance kill run is stack/cluster.test.ts.
 */
import assert from 'node:assert/strict';
import pg from 'pg';
import { after, before, describe, test } from 'node:test';
import { startDevStack, startSandbox, type DevStack, type RunningSandbox } from '../../../server/dev-stack.ts';
import { countReads, waitFor } from '../../support/checks.ts';
import { firstPayment } from '../../support/first-payment.ts';
import { startPostgres, type RunningPostgres } from '../../support/postgres.ts';
import { databaseDeadlines } from '../../../server/config/database.ts';

let postgres: RunningPostgres;
let sandbox: RunningSandbox;
const stacks: DevStack[] = [];

before(async () => {
  [postgres, sandbox] = await Promise.all([startPostgres(), startSandbox()]);
});
after(async () => {
  for (const stack of stacks) await stack.close();
  await sandbox?.close();
  await postgres?.stop();
});

/** A and B on a fresh database; the sandbox notifies A. */
/** The database of the last pair, for a test that writes past both instances. */
let pairDatabaseUrl = '';

async function pair(options: Parameters<typeof startDevStack>[0] = {}, forB: Parameters<typeof startDevStack>[0] = {}): Promise<[DevStack, DevStack]> {
  const databaseUrl = await postgres.createDatabase();
  pairDatabaseUrl = databaseUrl;
  const a = await startDevStack({ sandbox, databaseUrl, background: false, ...options });
  stacks.push(a);
  const b = await startDevStack({ sandbox, databaseUrl, background: false, registerWebhook: false, ...options, ...forB });
  stacks.push(b);
  return [a, b];
}

async function merchant(on: DevStack, method: string, path: string, body?: unknown): Promise<{ status: number; json: any }> {
  const res = await fetch(`${on.apiUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${on.apiKey}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: res.status, json: await res.json() };
}

async function browserPayment(on: DevStack, checkoutId: string): Promise<{ status: number; json: any }> {
  const res = await fetch(`${on.apiUrl}/checkouts/${checkoutId}/payment`, { method: 'POST' });
  return { status: res.status, json: await res.json() };
}

let orders = 0;
const newOrder = () => `order-${process.pid}-${++orders}`;

/** Waits for `check` (a guard against hanging, not a timing). */
async function until(check: () => boolean | Promise<boolean>, what: string, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('two instances over one Postgres', () => {
  test('a checkout made on A is served by B; concurrent first asks on both issue one payment, shown by both', async () => {
    const [a, b] = await pair();
    const created = await merchant(a, 'POST', '/checkouts', { value: 12.34, order_id: newOrder() });
    assert.equal(created.status, 201, JSON.stringify(created.json));
    const id = created.json.checkout_id as string;
    const seen = await merchant(b, 'GET', `/checkouts/${id}`);
    assert.deepEqual([seen.status, seen.json.status, seen.json.value], [200, 'open', 12.34]);
    // The same order on B answers A's checkout.
    const again = await merchant(b, 'POST', '/checkouts', { value: 12.34, order_id: created.json.order_id });
    assert.deepEqual([again.status, again.json.checkout_id], [200, id]);

    const answers = await Promise.all([a, b, a, b, a, b].map((on) => browserPayment(on, id)));
    for (const answer of answers) assert.ok([200, 201].includes(answer.status), JSON.stringify(answer.json));
    assert.equal(answers.filter((answer) => answer.status === 201).length, 1, 'one of them issued it');
    const references = new Set(answers.map((answer) => answer.json.reference as string));
    assert.equal(references.size, 1, `one code for the customer, whichever instance answered: ${[...references].join(', ')}`);
    const [reference] = references;
    assert.equal((await a.store.checkouts.get(id))?.paymentReference, reference);
    for (const on of [a, b]) assert.equal((await merchant(on, 'GET', `/checkouts/${id}`)).json.payment.reference, reference);
  });

  test("a webhook received by A reaches a stream held on B at once, not at B's next poll", async () => {
    // B would not poll for a minute: only the store's notification can tell its stream.
    const [a, b] = await pair({}, { watchIntervalMs: 60_000, staleAfterMs: 60_000 });
    const created = await fetch(`${a.apiUrl}/payments`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"value":5}' });
    const { reference } = (await created.json()) as { reference: string };
    const stream = await fetch(`${b.apiUrl}/payments/${reference}/events`);
    assert.equal(stream.status, 200);
    const statuses: string[] = [];
    const reading = (async () => {
      const decoder = new TextDecoder();
      const reader = stream.body!.getReader();
      let buffer = '';
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        buffer += decoder.decode(value, { stream: true });
        for (let cut = buffer.indexOf('\n\n'); cut >= 0; cut = buffer.indexOf('\n\n')) {
          const data = buffer
            .slice(0, cut)
            .split('\n')
            .find((line) => line.startsWith('data:'));
          buffer = buffer.slice(cut + 2);
          if (data) statuses.push((JSON.parse(data.slice(5)) as { status: string }).status);
        }
      }
    })();
    await until(() => statuses.length === 1, 'the first event');
    assert.deepEqual(statuses, ['pending']);
    const paidAt = Date.now();
    assert.equal(sandbox.state.pay(sandbox.state.payments.get(reference)!).ok, true);
    await until(() => statuses.includes('paid'), "B's stream to say paid", 20_000);
    await reading;
    assert.deepEqual(statuses, ['pending', 'paid'], 'the stream ends on its final state');
    assert.ok(Date.now() - paidAt < 20_000, 'well before B would have polled (60 s)');
    assert.equal((await b.store.payments.get(reference))?.final, true, "B's own reads say paid too");
  });

  test('one instance asks the partner about a payment at a time: the other serves the store', async () => {
    // Every read is stale, so each would ask the partner if it could (also once the partner's
    // notification of the payment reaches A: else A's webhooks' health would serve its stored status).
    const [a, b] = await pair({ staleAfterMs: 0, webhookReadIntervalMs: 0 });
    const readsA = countReads(a);
    const readsB = countReads(b);
    const created = await fetch(`${a.apiUrl}/payments`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"value":6}' });
    const { reference } = (await created.json()) as { reference: string };
    const read = async (on: DevStack) => {
      const res = await fetch(`${on.apiUrl}/payments/${reference}`);
      assert.equal(res.status, 200);
      return ((await res.json()) as { status: string }).status;
    };
    const before = [readsA.calls(), readsB.calls()];
    for (let i = 0; i < 5; i++) {
      assert.equal(await read(a), 'pending');
      assert.equal(await read(b), 'pending');
    }
    assert.deepEqual(
      [readsA.calls() - before[0]!, readsB.calls() - before[1]!],
      [5, 0],
      'A holds the poll lease (renewed by each of its reads); B asks no one',
    );
    // Concurrent reads on the holder (started in one tick) share one lease decision and one call, round after round.
    for (let round = 0; round < 3; round++) {
      const was = readsA.calls();
      await Promise.all(Array.from({ length: 50 }, () => a.pix.payments.read(reference)));
      assert.equal(readsA.calls() - was, 1, `round ${round}: 50 concurrent reads, one partner call`);
    }
    // A forced ask (before a new code is issued, a webhook's confirmation) is never left to another instance.
    await b.pix.payments.reads.confirm(reference);
    assert.equal(readsB.calls() - before[1]!, 1, 'a confirmation asks the partner whoever polls');
    // Paid: B, which never asked, answers paid once A's read records it. The partner's notification of the
    // payment may reach B first, which then records it (confirmed with the partner) while A's read is under
    // way: A answers from its record, fresh once the store's change notification arrives, so A is asked until paid.
    assert.equal(sandbox.state.pay(sandbox.state.payments.get(reference)!).ok, true);
    await waitFor('A answers paid', async () => (await read(a)) === 'paid', 5_000);
    assert.equal(await read(b), 'paid');
  });

  test("a read of a payment another instance polls serves the database's row, not this instance's copy", async () => {
    const [a, b] = await pair({ staleAfterMs: 0, webhookReadIntervalMs: 0 });
    const created = await fetch(`${a.apiUrl}/payments`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"value":7}' });
    const { reference } = (await created.json()) as { reference: string };
    // A asks the partner, so it holds the payment's poll lease; B then serves the store, and keeps a copy.
    await a.pix.payments.read(reference);
    assert.equal((await b.pix.payments.reads.record(reference)).final, false);
    // A change another instance made, whose notification has not reached B: written past both stores.
    const db = new pg.Client({ connectionString: pairDatabaseUrl });
    await db.connect();
    try {
      await db.query('UPDATE payments SET final = true, updated_at = updated_at + 1 WHERE reference = $1', [reference]);
    } finally {
      await db.end();
    }
    assert.equal((await b.pix.payments.reads.record(reference)).final, true, "B answers the database's row, not the copy it kept");
  });

  test('the reconciler on both instances asks about each due payment once, together', async () => {
    const [a, b] = await pair({ reconcile: { everyMs: 1000, tickMs: 60_000, nearMs: 1000 } });
    const readsA = countReads(a);
    const readsB = countReads(b);
    const references: string[] = [];
    for (let i = 0; i < 12; i++) {
      const created = await fetch(`${a.apiUrl}/payments`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"value":1}' });
      references.push(((await created.json()) as { reference: string }).reference);
    }
    // Due: their last confirmation is older than everyMs on the proxy's clock.
    sandbox.state.clock.advance(2000);
    const before = readsA.calls() + readsB.calls();
    const [ra, rb] = await Promise.all([a.pix.reconciler.runOnce(), b.pix.reconciler.runOnce()]);
    const asked = readsA.calls() + readsB.calls() - before;
    assert.equal(asked, references.length, `each due payment asked about once across both (A checked ${ra.checked}, B ${rb.checked})`);
  });

  test('both delivery workers over one outbox: every outcome reaches the merchant once', async () => {
    const received: string[] = [];
    const { createServer } = await import('node:http');
    const receiver = createServer((req, res) => {
      received.push(req.headers['pix-checkout-event-id'] as string);
      req.resume();
      req.on('end', () => res.writeHead(204).end());
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    try {
      const port = (receiver.address() as { port: number }).port;
      const merchantWebhook = { url: `http://127.0.0.1:${port}/hooks`, secret: 'instances-test-merchant-secret-0123456789' };
      const [a, b] = await pair({ merchantWebhook, background: true });
      const references: string[] = [];
      for (let i = 0; i < 20; i++) {
        const created = await fetch(`${(i % 2 ? a : b).apiUrl}/payments`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: '{"value":2}',
        });
        references.push(((await created.json()) as { reference: string }).reference);
      }
      for (const reference of references) sandbox.state.pay(sandbox.state.payments.get(reference)!);
      // Outcomes are recorded by A (its webhooks); B's worker finds them in the shared outbox too.
      await until(() => new Set(received).size === references.length, 'every outcome at the receiver', 30_000);
      // Both workers keep polling a while: nothing is sent twice.
      await new Promise((resolve) => setTimeout(resolve, 1500));
      assert.equal(received.length, references.length, `each once: ${received.length} deliveries of ${new Set(received).size} events`);
    } finally {
      receiver.closeAllConnections();
      await new Promise((resolve) => receiver.close(resolve));
    }
  });

  test('the status numbering is one verdict: verified by one instance, proven wrong by another, for both', async () => {
    const [a, b] = await pair();
    // B verifies the pending code with its own new payment, and approved with a payment paid in time.
    await fetch(`${b.apiUrl}/payments`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"value":3}' });
    assert.equal(b.pix.numbering.report().codes.pending, 'verified');
    const now = Date.now();
    await b.pix.numbering.observe({ code: 2, word: null }, { reference: 'paid-in-time', expiresAt: now + 3600_000, now });
    assert.equal(b.pix.numbering.report().codes.approved, 'verified');
    // A reads the kept verdicts again every 2 s (real time): then those codes decide on A too.
    await until(
      async () => {
        await a.pix.numbering.load();
        return a.pix.numbering.report().codes.approved === 'verified';
      },
      "A to learn B's verdicts",
      10_000,
    );
    assert.equal(a.pix.numbering.meaning({ code: 2, word: null }), 'approved');
    // A proves it wrong later (a new payment showing 2: it is pending, not approved).
    await a.pix.numbering.observeFresh({ code: 2, word: null }, 'some-new-payment');
    assert.equal(a.pix.numbering.report().state, 'mismatch');
    // B reads the kept verdicts again every 2 s (real time): then code 2 decides nothing on B either.
    await until(
      async () => {
        await b.pix.numbering.load();
        return b.pix.numbering.report().state === 'mismatch';
      },
      "B to learn A's verdict",
      10_000,
    );
    assert.equal(b.pix.numbering.meaning({ code: 2, word: null }), null, 'a code decides nothing on B now');
  });

  test("the first payment of a new database, verified at B and notified at A within the same second, reaches B's stream within a second and the merchant within 2 s", async () => {
    // A has just read the shared verdicts (none yet) when B's new payment verifies the numbering:
    // A's confirmation reads the verdict again at once instead of dropping the outcome.
    for (let run = 1; run <= 3; run++) {
      const times = await firstPayment(sandbox, await postgres.createDatabase());
      assert.ok(times.streamMs !== null && times.streamMs < 1000, `run ${run}: B's stream said paid after ${times.streamMs} ms`);
      assert.ok(times.merchantMs !== null && times.merchantMs < 2000, `run ${run}: the merchant was told after ${times.merchantMs} ms`);
    }
  });

  test('a database that cannot be used is a sentence to act on, naming the host, never the password', async () => {
    const { openStore } = await import('../../../server/store/open.ts');
    const { StoreError } = await import('../../../server/store/store.ts');
    const { createServer } = await import('node:net');
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const port = (probe.address() as { port: number }).port;
    await new Promise((resolve) => probe.close(resolve));
    const cases = [
      { url: `postgres://pix:s3cret-pw@127.0.0.1:${port}/pix`, says: /cannot be reached.*check PIX_DATABASE_URL/ },
      { url: postgres.url('no_such_database').replace('postgres@', 'postgres:s3cret-pw@'), says: /does not exist/ },
    ];
    for (const { url, says } of cases) {
      const error = await openStore({ dataDir: '', databaseUrl: url, deadlines: databaseDeadlines() }).then(
        () => null,
        (e: unknown) => e,
      );
      assert.ok(error instanceof StoreError, `a StoreError for ${says}: ${String(error)}`);
      assert.match(error.message, says);
      assert.match(error.message, /127\.0\.0\.1:\d+\//, 'names where');
      assert.ok(!error.message.includes('s3cret-pw'), 'never the password');
    }
  });

  test('/ready names the database and that the instance hears the others; close releases its leases', async () => {
    const [a, b] = await pair();
    const ready = (await (await fetch(`${a.url}/ready`)).json()) as { checks: Record<string, string> };
    assert.deepEqual([ready.checks.store, ready.checks.database, ready.checks.store_changes], ['ok', 'postgres', 'listening']);
    assert.equal(await a.store.cluster!.lease('poll:some-payment', 60_000), true);
    assert.equal(await b.store.cluster!.lease('poll:some-payment', 60_000), false, 'held by A');
    await a.close();
    stacks.splice(stacks.indexOf(a), 1);
    assert.equal(await b.store.cluster!.lease('poll:some-payment', 60_000), true, 'released by A on close, not when it ran out');
  });
});
