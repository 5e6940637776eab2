/**
 * The merchant endpoint over days, on an injected clock: a receiver's Retry-After honoured, an
 * endpoint that fails for a whole day disabled (an error line, a /ready warning, a metric), nothing
 * sent while it is, and `pix-checkout deliveries resume` sending what waited. Real store file, real
 * receiver socket; nothing waits on real time.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { after, before, beforeEach, describe, test } from 'node:test';
import { main } from '../../../server/cli/index.ts';
import { DEFAULTS } from '../../../server/config/index.ts';
import { ENDPOINT_STATE_KEY, retryAfterMs } from '../../../server/domain/endpoint-state.ts';
import { createApp } from '../../../server/app.ts';
import { MerchantNotifier, nextAttemptAt } from '../../../server/domain/merchant-notify.ts';
import { paymentOutcome } from '../../../server/domain/outcomes.ts';
import { createLogger } from '../../../server/log.ts';
import { Metrics } from '../../../server/observability/metrics.ts';
import { openSqliteStore } from '../../../server/store/sqlite/sqlite-store.ts';
import type { Store } from '../../../server/store/store.ts';
import { memoryPartner } from '../../support/memory-partner.ts';
import { paymentRecord } from '../../support/records.ts';

const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const H = 3_600_000;

describe('the retry schedule', () => {
  const policy = DEFAULTS.merchantWebhook;
  const entry = (attempts: number) => ({ createdAt: 0, attempts });
  test('30 s, 2 min, 10 min, 1 h, then every 6 h, jittered by at most 10%; the last attempt at three days', () => {
    assert.deepEqual(
      [1, 2, 3, 4, 5, 6, 9].map((n) => nextAttemptAt(policy, entry(n), 1000, 0.5)! - 1000),
      [30_000, 120_000, 600_000, H, 6 * H, 6 * H, 6 * H],
    );
    assert.equal(nextAttemptAt(policy, entry(1), 1000, 0)! - 1000, 27_000);
    assert.equal(nextAttemptAt(policy, entry(1), 1000, 0.999_999)! - 1000, 33_000);
    assert.equal(nextAttemptAt(policy, entry(9), 70 * H, 0.5), 72 * H, 'never past the window: the last attempt at its end');
    assert.equal(nextAttemptAt(policy, entry(10), 72 * H, 0.5), null, 'that one failed: given up');
  });
  test("a receiver's Retry-After, when later than the schedule, decides; never past a day", () => {
    assert.equal(nextAttemptAt(policy, entry(1), 0, 0.5, 2 * H), 2 * H);
    assert.equal(nextAttemptAt(policy, entry(1), 0, 0.5, 1000), 30_000, 'earlier: the schedule');
    assert.equal(nextAttemptAt(policy, entry(1), 0, 0.5, 40 * 24 * H), 24 * H);
    const now = Date.UTC(2030, 0, 1);
    assert.equal(retryAfterMs('120', now), 120_000);
    assert.equal(retryAfterMs(new Date(now + 90_000).toUTCString(), now), 90_000);
    assert.equal(retryAfterMs('Tue, 01 Jan 2019 00:00:00 GMT', now), 0);
    for (const bad of [null, '', 'soon', '-5', '1.5']) assert.equal(retryAfterMs(bad, now), null, String(bad));
  });
});

describe('an endpoint failing for days', () => {
  let dir: string;
  let store: Store;
  let server: Server;
  let url: string;
  let answer: { status: number; headers?: Record<string, string> } = { status: 500 };
  const received: string[] = [];
  let clock = Date.UTC(2030, 0, 1);
  const lines: Record<string, unknown>[] = [];
  const log = createLogger({
    level: 'info',
    destination: new Writable({
      write(chunk: Buffer, _enc, done) {
        for (const line of chunk.toString().split('\n')) if (line) lines.push(JSON.parse(line) as Record<string, unknown>);
        done();
      },
    }),
  });
  const notifier = () => new MerchantNotifier({ ...DEFAULTS.merchantWebhook, store, url, secret: SECRET, now: () => clock, log, random: () => 0.5 });
  let reference = 0;
  const outcome = async () => {
    const ref = `ep-${++reference}`;
    await store.payments.insert(paymentRecord(ref, clock));
    await store.payments.updateStatus(ref, 2, true, clock, paymentOutcome);
    return (await store.outbox.list()).find((e) => e.reference === ref)!;
  };

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'pix-endpoint-'));
    store = openSqliteStore({ dataDir: dir });
    server = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        received.push(req.headers['webhook-id'] as string);
        res.writeHead(answer.status, answer.headers).end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  });
  beforeEach(() => {
    received.length = 0;
    lines.length = 0;
  });
  after(async () => {
    await store.close();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    rmSync(dir, { recursive: true, force: true });
  });

  test('Retry-After on a 503 puts the next attempt off as the receiver asked', async () => {
    const entry = await outcome();
    answer = { status: 503, headers: { 'retry-after': '7200' } };
    await notifier().runOnce();
    const after = (await store.outbox.get(entry.id))!;
    assert.equal(after.state, 'pending');
    assert.equal(after.nextAttemptAt - clock, 2 * H, "two hours, not the schedule's 30 s");
    assert.equal(lines.at(-1)?.retry_after_s, 7200);
    // A success clears the failing time: this endpoint is healthy again.
    answer = { status: 204 };
    clock = after.nextAttemptAt;
    await notifier().runOnce();
    assert.equal((await store.outbox.get(entry.id))!.state, 'delivered');
  });

  test('a whole day of failures disables it (error line, /ready warning, metric); nothing is sent then; resume sends what waited', async () => {
    answer = { status: 500 };
    const first = await outcome();
    const start = clock;
    const sender = notifier();
    const metrics = new Metrics();
    metrics.watch({ deliveryEndpointDisabled: () => sender.endpoint.disabled });
    const gauge = async () => /^pix_checkout_merchant_webhook_endpoint_disabled (\d)$/m.exec((await metrics.scrape()).text)?.[1];
    // Attempt on the schedule until the endpoint has failed for a day.
    while (!sender.endpoint.disabled) {
      assert.ok(clock - start < 30 * H, 'disabled within a day and one retry');
      await sender.runOnce();
      clock = (await store.outbox.get(first.id))!.nextAttemptAt;
    }
    assert.ok(clock - start >= 24 * H);
    const disabledLine = lines.find((l) => typeof l.msg === 'string' && l.msg.startsWith('merchant webhook endpoint disabled'));
    assert.equal(disabledLine?.level, 50, 'an error line');
    assert.match(sender.disabledWarning() ?? '', /disabled since .*pix-checkout deliveries resume/);
    assert.equal(await gauge(), '1');

    // Disabled: nothing more is sent, whatever is due, even by another instance (it reads the store), even days later.
    const sent = received.length;
    const second = await outcome();
    clock += 4 * 24 * H;
    assert.equal(await sender.runOnce(), 0);
    assert.equal(await notifier().runOnce(), 0);
    assert.equal(received.length, sent);
    assert.deepEqual([(await store.outbox.get(first.id))!.state, (await store.outbox.get(second.id))!.state], ['pending', 'pending']);

    // The operator fixes the receiver and resumes: both are sent now, each in a new window.
    answer = { status: 200 };
    const out: string[] = [];
    const io = { out: (s: string) => out.push(s), err: (s: string) => out.push(s), env: { PIX_DATA_DIR: dir } };
    assert.equal(await main(['deliveries', 'resume'], io), 0);
    assert.match(out.join('\n'), /enabled again; 2 pending deliveries due now/);
    clock = Date.now();
    assert.equal(await sender.runOnce(), 2);
    assert.deepEqual([(await store.outbox.get(first.id))!.state, (await store.outbox.get(second.id))!.state], ['delivered', 'delivered']);
    assert.equal(sender.disabledWarning(), null);
    assert.equal(await gauge(), '0');
  });

  test("the app's /ready warns while the endpoint is disabled (still 200), and its /metrics says so", async () => {
    // Disabled as a day of failures leaves it (another instance's record, in the shared store).
    await store.tokens.save(ENDPOINT_STATE_KEY, JSON.stringify({ url, failing_since: clock - 25 * H, disabled_at: clock - H, last_error: 'HTTP 500' }));
    const token = 'm'.repeat(32);
    const app = createApp({ partner: memoryPartner(), store, merchantWebhook: { url, secret: SECRET }, metricsToken: token, readinessCacheMs: 0, logger: log });
    assert.equal(await app.pix.notifier!.runOnce(), 0, 'nothing sent while disabled');
    const ready = await app.request('/ready');
    const body = (await ready.json()) as { warnings?: string[] };
    assert.equal(ready.status, 200);
    assert.ok(
      body.warnings?.some((w) => /merchant webhook .* is disabled since .*HTTP 500.*deliveries resume/.test(w)),
      JSON.stringify(body.warnings),
    );
    const metrics = await (await app.request('/metrics', { headers: { authorization: `Bearer ${token}` } })).text();
    assert.match(metrics, /^pix_checkout_merchant_webhook_endpoint_disabled 1$/m);
    await store.tokens.clear(ENDPOINT_STATE_KEY);
  });
});
