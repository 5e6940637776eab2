/**
 * The kill test: a burst of 500 payment outcomes while the proxy (a child process on a
 * fixed store file and port) is killed with SIGKILL at random moments and restarted. The sandbox
 * lives in this process (its state is memory: it outlives the proxy), sends real webhooks to the
 * proxy's endpoint and trusts nothing; the merchant's receiver deduplicates by event id. Every
 * outcome must reach the store and the receiver; duplicates deliveries are allowed (at least once),
 * counted apart.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import Database from 'libsql';
import { createClock } from '../../../server/sandbox/clock.ts';
import { startSandbox, type RunningSandbox } from '../../../server/sandbox/server.ts';
import { verifyWebhookSignature } from '../../../server/domain/signature.ts';
import { DB_FILE_NAME } from '../../../server/store/sqlite/sqlite-store.ts';
import { createPartnerClient } from '../../../server/partner/client.ts';
import { proxyEnv } from '../../support/cluster-harness.ts';
import { freePort } from '../../support/ports.ts';
import { StatusNumbering } from '../../../server/domain/numbering/status-numbering.ts';
import { createLogger } from '../../../server/log.ts';
import { DEFAULT_STATUS_CODES } from '../../../server/partner/status-codes.ts';
import { tokenStoreKey } from '../../../server/partner/token-session.ts';
import { openSqliteStore } from '../../../server/store/sqlite/sqlite-store.ts';

/** The verdicts a proxy that has run for hours keeps: pending, approved and canceled verified, as their own proofs verify them. */
async function seedVerdicts(dataDir: string, scope: string): Promise<void> {
  const store = openSqliteStore({ dataDir, cacheSize: 0 });
  try {
    const numbering = new StatusNumbering(DEFAULT_STATUS_CODES, createLogger({ level: 'silent' }), store.tokens, scope);
    const sent = Date.now() - 24 * 3600_000;
    const at = (reference: string, minutes: number) => ({ reference, createdAt: sent, expiresAt: sent + 3600_000, now: sent + minutes * 60_000 });
    await numbering.observeFresh({ code: 1, word: null }, 'seed-new');
    await numbering.observe({ code: 2, word: null }, at('seed-paid', 5));
    await numbering.observe({ code: 3, word: null }, at('seed-canceled', 3 * 60));
    assert.equal(numbering.report().state, 'verified');
  } finally {
    await store.close();
  }
}

const OUTCOMES = 500;
/**
 * The sandbox's clock runs this far behind the proxy's (real time): the sandbox cancels none of the
 * burst's payments by itself (the test cancels them). The proxy trusts a canceled code only once a
 * read well past a payment's cancellation hour proved it (domain/numbering/status-numbering.ts, counted from
 * its own send time): hours of real time, so the store is seeded with the verdicts of a proxy that
 * has run that long (seedVerdicts) before the proxy starts.
 */
const SANDBOX_LAG_MS = 65 * 60_000;
const SECRET = 'kill-test-merchant-secret-0123456789abcdef';
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

let sandbox: RunningSandbox;
let dir: string;
let receiver: Server;
let child: ChildProcess | null = null;
const unique = new Set<string>();
let duplicates = 0;
let badSignatures = 0;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'pix-kill-'));
  sandbox = await startSandbox({ clock: createClock(() => Date.now() - SANDBOX_LAG_MS), webhooks: { timeoutMs: 2000, retryDelayMs: 100 } });
  writeFileSync(join(dir, 'ca.pem'), sandbox.ca);
  receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      if (!verifyWebhookSignature(raw, req.headers['pix-checkout-signature'] as string, SECRET)) {
        badSignatures++;
        return void res.writeHead(400).end();
      }
      const id = req.headers['pix-checkout-event-id'] as string;
      if (unique.has(id)) duplicates++;
      else unique.add(id);
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
});

after(async () => {
  if (child && child.exitCode === null && child.signalCode === null) {
    const exited = new Promise((resolve) => child!.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;
  }
  await sandbox.close();
  receiver.closeAllConnections();
  await new Promise((resolve) => receiver.close(resolve));
  rmSync(dir, { recursive: true, force: true });
});

test('a burst of 500 outcomes while the proxy is SIGKILLed and restarted: every one stored and passed on, once by event id', async (t) => {
  const port = await freePort();
  const origin = `http://127.0.0.1:${port}`;
  const env = {
    ...proxyEnv(sandbox.url, dir, 'Kill Test (dev@loja.example)', 'kill-test-api-key-0123456789abcdef0123456789'),
    PORT: String(port),
    PIX_OPEN_AMOUNT: 'true',
    PIX_RATE_LIMIT_CREATE: '0',
    PIX_RATE_LIMIT_STATUS: '0',
    PIX_MERCHANT_WEBHOOK_URL: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`,
    PIX_MERCHANT_WEBHOOK_SECRET: SECRET,
    PIX_RECONCILE_TICK_MS: '500',
    PIX_RECONCILE_EVERY_S: '1',
    PIX_RECONCILE_NEAR_S: '1',
    PIX_LOG_LEVEL: 'error',
  };

  const startProxy = async (extra: Record<string, string> = {}) => {
    child = spawn(process.execPath, ['--import', 'tsx', 'server/main.ts'], {
      cwd: process.cwd(),
      env: { ...env, ...extra },
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    const deadline = Date.now() + 30_000;
    for (;;) {
      if (child.exitCode !== null) throw new Error(`the proxy exited with ${child.exitCode}`);
      try {
        if ((await fetch(`${origin}/health`)).ok) return;
      } catch {
        // not listening yet
      }
      if (Date.now() > deadline) throw new Error('the proxy did not start');
      await sleep(25);
    }
  };
  const kill = async () => {
    const running = child!;
    const exited = new Promise((resolve) => running.once('exit', resolve));
    running.kill('SIGKILL');
    await exited;
  };

  // The payments the burst cancels: issued with a 60 s expiry (see SANDBOX_LAG_MS), then the proxy restarts with the default.
  await seedVerdicts(env.PIX_DATA_DIR, tokenStoreKey(env.PIX_BASE_URL, env.PIX_EMAIL));
  await startProxy({ PIX_EXPIRATION_SECONDS: '60' });
  const issue = async (n: number) =>
    Promise.all(
      Array.from({ length: n }, async () => {
        const res = await fetch(`${origin}/api/payments`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ value: 1.5 }),
        });
        assert.equal(res.status, 201, await res.clone().text());
        return (await res.json()).reference as string;
      }),
    );
  const toCancel: string[] = [];
  for (let i = 0; i < Math.floor(OUTCOMES / 3); i += 25) toCancel.push(...(await issue(Math.min(25, Math.floor(OUTCOMES / 3) - i))));
  // The partner cancels only after a code's expiry (spec 3): a canceled code read before it is a
  // contradiction of the setting (domain/numbering/status-numbering.ts), so the burst waits until they expired.
  const expiredAt = Date.now() + 61_000;
  await kill();
  await startProxy();
  const partner = createPartnerClient({
    baseUrl: sandbox.url,
    ca: sandbox.ca,
    userAgent: env.PIX_USER_AGENT,
    credentials: { email: env.PIX_EMAIL, accessKey: env.PIX_ACCESS_KEY },
  });
  await partner.setNotificationUrl({ notification_url: `${origin}/api/webhooks/partner` });

  // 500 payments issued through the proxy (so it knows them), before the burst: the rest, to be paid.
  const toPay: string[] = [];
  for (let i = toCancel.length; i < OUTCOMES; i += 25) toPay.push(...(await issue(Math.min(25, OUTCOMES - i))));
  // One paid first, in time: it proves the approved code (a canceled code is trusted only once it is).
  const first = toPay[0]!;
  assert.ok(sandbox.state.pay(sandbox.state.payments.get(first)!).ok);
  const paidRead = async () => (await (await fetch(`${origin}/api/payments/${first}`)).json()).status === 'paid';
  for (const deadline = Date.now() + 30_000; !(await paidRead()); await sleep(50)) if (Date.now() > deadline) assert.fail('the first payment never read paid');
  // 2 in 3 paid, 1 in 3 canceled, interleaved.
  const refs: string[] = [first];
  for (let k = 1, c = 0, q = 1; refs.length < OUTCOMES; k++) refs.push(k % 3 === 2 && c < toCancel.length ? toCancel[c++]! : (toPay[q++] ?? toCancel[c++]!));
  const canceling = new Set(toCancel);

  await sleep(Math.max(0, expiredAt - Date.now()));
  // The burst: 500 outcomes over a few seconds, 2 in 3 paid, 1 in 3 canceled, while a killer runs.
  let kills = 0;
  let bursting = true;
  const killer = (async () => {
    while (bursting) {
      await sleep(200 + Math.random() * 600);
      await kill();
      kills++;
      await sleep(Math.random() * 200);
      await startProxy();
    }
  })();
  // A killer that fails (a proxy that does not come back) fails the test at once, not by timeout.
  const killerState: { failed: Error | null } = { failed: null };
  killer.catch((error: unknown) => {
    killerState.failed = error instanceof Error ? error : new Error(`the killer failed: ${String(error)}`);
  });
  for (let i = 0; i < refs.length; i += 20) {
    // Paced by the killer, not only by the clock: on a slow or busy machine a restart takes longer,
    // and at least four kills must still fall inside the burst, spread over it.
    while (kills < Math.floor((i / refs.length) * 5)) {
      if (killerState.failed) throw killerState.failed;
      await sleep(20);
    }
    for (const ref of refs.slice(i, i + 20)) {
      if (ref === first) continue;
      const payment = sandbox.state.payments.get(ref)!;
      const outcome = canceling.has(ref) ? sandbox.state.cancelPayment(payment) : sandbox.state.pay(payment);
      assert.ok(outcome.ok);
    }
    await sleep(120);
  }
  bursting = false;
  await killer;
  // One last kill right after the burst, for the events caught in flight.
  await kill();
  kills++;
  await startProxy();

  const db = new Database(join(env.PIX_DATA_DIR, DB_FILE_NAME), { readonly: true });
  try {
    const storedFinal = () => (db.prepare(`SELECT COUNT(*) AS n FROM payments WHERE final = 1`).get() as { n: number }).n;
    const deadline = Date.now() + 90_000;
    while (storedFinal() < OUTCOMES || unique.size < OUTCOMES) {
      if (Date.now() > deadline) break;
      await sleep(50);
    }
    const truth = new Map(refs.map((r) => [r, sandbox.state.payments.get(r)!.status]));
    const rows = db.prepare('SELECT reference, partner_status, final FROM payments').all() as { reference: string; partner_status: number; final: number }[];
    const outbox = (db.prepare('SELECT COUNT(*) AS n FROM outbox').get() as { n: number }).n;
    const counts = { outcomes: OUTCOMES, stored: storedFinal(), outbox_events: outbox, delivered_unique: unique.size, duplicate_deliveries: duplicates, kills };
    t.diagnostic(`kill test: ${JSON.stringify(counts)}`);
    console.log('kill test counts', counts);
    assert.ok(kills >= 3, 'the proxy was killed during the burst');
    assert.equal(counts.stored, OUTCOMES);
    for (const row of rows) assert.equal(row.partner_status, truth.get(row.reference), `${row.reference} in its true state`);
    assert.equal(outbox, OUTCOMES, 'one outbox event per outcome');
    assert.equal(unique.size, OUTCOMES, 'every outcome reached the merchant');
    assert.equal(badSignatures, 0);
  } finally {
    db.close();
  }
});
