/**
 * The merchant webhook: signature, backoff for hours on an injected clock, giving up after 24 h,
 * every attempt recorded, and the deliveries commands that list and replay. Real store file, real
 * receiver socket; time is injected, nothing waits.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { main } from '../../../server/cli/index.ts';
import { createLogger } from '../../../server/log.ts';
import { MerchantNotifier } from '../../../server/domain/merchant-notify.ts';
import { signWebhook, verifyWebhookSignature } from '../../../server/domain/signature.ts';
import { openSqliteStore } from '../../../server/store/sqlite/sqlite-store.ts';
import type { Store } from '../../../server/store/store.ts';
import { DEFAULTS } from '../../../server/config/index.ts';
import { paymentOutcome } from '../../../server/domain/outcomes.ts';
import { paymentRecord } from '../../support/records.ts';
import { waitFor } from '../../support/checks.ts';

const SECRET = 'delivery-test-secret-0123456789abcdef0123';
const H = 3600_000;

describe('verifyWebhookSignature', () => {
  const body = '{"id":"evt_1","type":"payment.paid"}';
  const now = Date.UTC(2030, 0, 1);
  test('accepts its own signature, refuses anything else', () => {
    const header = signWebhook(body, SECRET, now);
    assert.match(header, /^t=\d+,v1=[0-9a-f]{64}$/);
    assert.equal(verifyWebhookSignature(body, header, SECRET, { now }), true);
    assert.equal(verifyWebhookSignature(Buffer.from(body), header, SECRET, { now: now + 299_000 }), true);
    assert.equal(verifyWebhookSignature(body, header, SECRET, { now: now + 301_000 }), false, 'too old');
    assert.equal(verifyWebhookSignature(body + ' ', header, SECRET, { now }), false, 'body changed');
    assert.equal(verifyWebhookSignature(body, header, 'another-secret', { now }), false);
    assert.equal(verifyWebhookSignature(body, header.replace(/t=\d+/, `t=${now / 1000 + 1}`), SECRET, { now }), false, 'timestamp changed');
    for (const bad of [undefined, '', 'garbage', 't=1', 'v1=abc', 't=x,v1=y']) assert.equal(verifyWebhookSignature(body, bad, SECRET, { now }), false);
  });
});

describe('delivering outcomes to the merchant', () => {
  let dir: string;
  let store: Store;
  let server: Server;
  let url: string;
  let answer = 500;
  const received: { id: string; signature: string; body: string }[] = [];
  let clock = Date.UTC(2030, 0, 1);

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'pix-deliveries-'));
    store = openSqliteStore({ dataDir: dir });
    server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        received.push({
          id: req.headers['pix-checkout-event-id'] as string,
          signature: req.headers['pix-checkout-signature'] as string,
          body: Buffer.concat(chunks).toString(),
        });
        res.writeHead(answer).end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  });
  after(async () => {
    await store.close();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    rmSync(dir, { recursive: true, force: true });
  });

  const payment = (reference: string) => paymentRecord(reference, clock);

  test('a final status writes one outbox event, in the same transaction, never twice', async () => {
    await store.payments.insert(payment('ref-a'));
    const first = await store.payments.updateStatus('ref-a', 2, true, clock, paymentOutcome);
    assert.equal(first.changed, true);
    assert.equal(first.outcome?.type, 'payment.paid');
    assert.equal((await store.payments.updateStatus('ref-a', 2, true, clock + 1, paymentOutcome)).changed, false);
    assert.equal((await store.payments.updateStatus('ref-a', 3, true, clock + 2, paymentOutcome)).changed, false, 'never downgraded');
    const rows = await store.outbox.list();
    assert.equal(rows.length, 1);
    assert.equal(rows[0]!.type, 'payment.paid');
    assert.equal(JSON.parse(rows[0]!.body).data.value, 9.9);
  });

  test('retried on the schedule (30 s, 2 min, 10 min, 1 h, then every 6 h) for three days, then given up; every attempt recorded; replay delivers it', async () => {
    const notifier = new MerchantNotifier({
      ...DEFAULTS.merchantWebhook,
      // The endpoint is never disabled here (its own test below): one event's schedule, whole.
      disableAfterMs: Number.POSITIVE_INFINITY,
      store,
      url,
      secret: SECRET,
      now: () => clock,
      log: createLogger({ level: 'silent' }),
      random: () => 0.5,
    });
    const [entry] = await store.outbox.list();
    const created = entry!.createdAt;
    const gaps: number[] = [];
    let last = clock;
    for (let i = 0; i < 100; i++) {
      await notifier.runOnce();
      const now = (await store.outbox.get(entry!.id))!;
      if (now.state !== 'pending') break;
      gaps.push(now.nextAttemptAt - last);
      last = clock = now.nextAttemptAt;
    }
    const final = (await store.outbox.get(entry!.id))!;
    assert.equal(final.state, 'failed');
    const attempts = await store.outbox.attempts(entry!.id);
    assert.equal(attempts.length, final.attempts);
    assert.ok(attempts.every((a) => a.status === 500 && a.error === 'HTTP 500'));
    const M = 60_000;
    // random 0.5: no jitter. 11 gaps of 6 h after the first four, then the last attempt at exactly 3 days.
    assert.deepEqual(gaps.slice(0, 5), [30_000, 2 * M, 10 * M, 60 * M, 6 * H]);
    assert.ok(gaps.slice(4, -1).every((g) => g === 6 * H));
    assert.equal(clock - created, 72 * H, 'the last attempt three days after the outcome');
    assert.equal(attempts.length, 17, `${attempts.length} attempts`);
    assert.equal(received.length, attempts.length);
    assert.ok(received.every((r) => r.id === entry!.eventId && verifyWebhookSignature(r.body, r.signature, SECRET)));

    // The commands, on the store file as PIX_DATA_DIR.
    const out: string[] = [];
    const io = { out: (s: string) => out.push(s), err: (s: string) => out.push(s), env: { PIX_DATA_DIR: dir } };
    assert.equal(await main(['deliveries', 'list', '--failed', '--json'], io), 0);
    const listed = JSON.parse(out.pop()!);
    assert.deepEqual(
      listed.map((d: any) => [d.id, d.state, d.event_id]),
      [[entry!.id, 'failed', entry!.eventId]],
    );
    assert.equal(await main(['deliveries', 'replay'], io), 2);
    assert.equal(await main(['deliveries', 'replay', '999'], io), 1);
    assert.equal(await main(['deliveries', 'replay', String(entry!.id)], io), 0);

    answer = 204;
    clock += 1000;
    await notifier.runOnce();
    const delivered = (await store.outbox.get(entry!.id))!;
    assert.equal(delivered.state, 'delivered');
    assert.equal(received.at(-1)!.id, entry!.eventId, 'the same event id');
    out.length = 0;
    assert.equal(await main(['deliveries', 'list', '--failed'], io), 0);
    assert.equal(out[0], 'No failed deliveries.');
    assert.equal(await main(['deliveries', 'replay', '--all'], io), 0);
    assert.match(out.at(-1)!, /^0 deliveries/);
  });
});

describe('delivering outcomes from two instances on one store', () => {
  let dir: string;
  let server: Server;
  let url: string;
  /** Requests the receiver holds until the test answers them. */
  const held: { id: string; answer: (status: number) => void }[] = [];
  const received: string[] = [];
  let holdNext = 0;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'pix-deliveries-two-'));
    server = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        const id = req.headers['pix-checkout-event-id'] as string;
        received.push(id);
        if (holdNext > 0) {
          holdNext--;
          held.push({ id, answer: (status) => res.writeHead(status).end() });
        } else res.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  });
  after(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    rmSync(dir, { recursive: true, force: true });
  });

  test("one instance's late failure never undoes the other's delivery, and a row whose claim ran out while it waited is not sent again", async () => {
    let clock = Date.UTC(2030, 0, 2);
    // Two store objects on one file: two instances (SQLite has one claim holder, but each claim its own token).
    const first = openSqliteStore({ dataDir: dir, claimMs: 1_000 });
    const second = openSqliteStore({ dataDir: dir, claimMs: 1_000 });
    try {
      for (const reference of ['two-1', 'two-2']) {
        await first.payments.insert(paymentRecord(reference, clock));
        assert.ok((await first.payments.updateStatus(reference, 2, true, clock, paymentOutcome)).outcome, `an outcome for ${reference}`);
      }
      const [one, two] = await first.outbox.list();
      assert.ok(one && two, 'two deliveries');
      const log = createLogger({ level: 'silent' });
      const notifier = (store: Store) =>
        new MerchantNotifier({
          ...DEFAULTS.merchantWebhook,
          store,
          url,
          secret: SECRET,
          now: () => clock,
          log,
          concurrency: 1,
          timeoutMs: 60_000,
          random: () => 0.5,
        });

      // The first instance claims both and sends the first; the receiver is slow to answer it.
      holdNext = 1;
      const slow = notifier(first).runOnce();
      await waitFor('the first delivery held by the receiver', () => held.length === 1);
      // Its claims run out meanwhile: the second instance takes both up and delivers them.
      clock += 2_000;
      assert.equal(await notifier(second).runOnce(), 2);
      assert.deepEqual(
        (await second.outbox.list()).map((e) => e.state),
        ['delivered', 'delivered'],
      );
      const deliveredAt = (await second.outbox.get(one.id))?.deliveredAt;
      // The first instance's answer comes at last: a failure, which undoes nothing.
      held[0]!.answer(500);
      await slow;
      const after = await second.outbox.get(one.id);
      assert.deepEqual([after?.state, after?.deliveredAt], ['delivered', deliveredAt]);
      assert.equal((await second.outbox.attempts(one.id)).length, 2, 'both attempts are kept');
      // The second row, claimed by the first instance but not sent before its claim ran out, was sent once: by the second.
      assert.deepEqual(
        received.filter((id) => id === two.eventId),
        [two.eventId],
      );
      assert.equal((await second.outbox.get(two.id))?.state, 'delivered');
    } finally {
      await first.close();
      await second.close();
    }
  });
});
