/**
 * SIGTERM on a real proxy process (`server/main.ts` against the sandbox over HTTPS, its SQLite file):
 * from the signal on, `/ready` and new work answer 503 shutting_down while reads are still served;
 * the open status stream is ended; a merchant delivery in flight (the receiver holds its answer) is
 * not aborted: it completes, is recorded delivered, and the process exits 0 after it. Asserted on
 * the order of events and on codes, never on durations (the bounds are test timeouts).
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { after, before, describe, test } from 'node:test';
import { CheckoutView, PaymentView } from '../../../src/shared/contract.ts';
import { EVENT_ID_HEADER } from '../../../server/domain/signature.ts';
import { startSandbox, type RunningSandbox } from '../../../server/sandbox/server.ts';
import { openStore } from '../../../server/store/open.ts';
import { proxyEnv, sandboxControl } from '../../support/cluster-harness.ts';
import { spawnProxy } from '../../support/proxy-process.ts';

/** The proxy's errors on this test's stderr; its log lines (stdout) are read by each test. */
const echoErrors = (line: string, from: 'stdout' | 'stderr') => void (from === 'stderr' && process.stderr.write(`${line}\n`));

const API_KEY = 'shutdown-test-key-0123456789abcdef0123456789';
const SECRET = 'shutdown-test-merchant-secret-0123456789abcdef';
const USER_AGENT = 'Loja Teste (dev@loja.example)';

let sandbox: RunningSandbox;
let dir: string;

before(async () => {
  sandbox = await startSandbox();
  dir = mkdtempSync(join(tmpdir(), 'pix-shutdown-'));
  writeFileSync(join(dir, 'ca.pem'), sandbox.ca);
});
after(async () => {
  await sandbox.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Everything that happened, in order: log lines by their message, and the test's own steps. */
const events: string[] = [];

/** A merchant receiver that holds each answer until `release()`: a slow receiver that may accept. */
function holdingReceiver(): Promise<{ url: string; received: Promise<string>; deliveries: string[]; release(): void; server: Server }> {
  const deliveries: string[] = [];
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  let arrived!: (eventId: string) => void;
  const received = new Promise<string>((resolve) => (arrived = resolve));
  const server = createServer((req, res) => {
    req.resume();
    const eventId = String(req.headers[EVENT_ID_HEADER.toLowerCase()] ?? '');
    deliveries.push(eventId);
    arrived(eventId);
    void released.then(() => {
      events.push('receiver answered 200');
      res.writeHead(200).end('ok');
    });
  });
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      resolve({ url: `http://127.0.0.1:${port}/hook`, received, deliveries, release: () => release(), server });
    });
  });
}

/** Reads a stream's SSE text until `match` appears (true) or the stream ends (false). */
async function readUntil(reader: ReadableStreamDefaultReader<Uint8Array>, match: RegExp): Promise<boolean> {
  const decoder = new TextDecoder();
  let text = '';
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return false;
    text += decoder.decode(value, { stream: true });
    if (match.test(text)) return true;
  }
}

describe('SIGTERM: drain, finish what is in flight, exit 0', () => {
  test(
    '/ready and new work 503 shutting_down at once; the stream ends; the held delivery completes and is recorded delivered',
    { timeout: 120_000 },
    async () => {
      const receiver = await holdingReceiver();
      const env = {
        ...proxyEnv(sandbox.url, dir, USER_AGENT, API_KEY),
        PORT: '0',
        PIX_LOG_LEVEL: 'info',
        PIX_MERCHANT_WEBHOOK_URL: receiver.url,
        PIX_MERCHANT_WEBHOOK_SECRET: SECRET,
        PIX_WEBHOOK_SOURCE_IPS: '127.0.0.1',
        // Long enough to look at the drain before the port closes; the grace, to never be reached here.
        PIX_SHUTDOWN_DRAIN_MS: '5000',
        PIX_SHUTDOWN_GRACE_MS: '60000',
      };
      const child = spawnProxy(0, env, echoErrors);
      try {
        // 'close', not 'exit': after the last log line is read.
        const exited = once(child, 'close');
        let url = '';
        let listening!: () => void;
        const ready = new Promise<void>((resolve) => (listening = resolve));
        let draining!: () => void;
        const drainStarted = new Promise<void>((resolve) => (draining = resolve));
        const logLines: { level: number; msg: string; still_running?: string[] }[] = [];
        createInterface({ input: child.stdout! }).on('line', (line) => {
          const entry = JSON.parse(line) as { level: number; msg: string; url?: string };
          logLines.push(entry);
          if (entry.msg !== 'request') events.push(`log: ${entry.msg}`);
          if (entry.msg === 'pix-checkout proxy listening') {
            url = entry.url!;
            listening();
          }
          if (entry.msg.startsWith('shutting down')) draining();
        });
        await ready;

        const merchant = { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json' };
        const newPayment = async (order: string) => {
          const created = await fetch(`${url}/api/checkouts`, { method: 'POST', headers: merchant, body: JSON.stringify({ value: 10, order_id: order }) });
          assert.equal(created.status, 201);
          const checkout = CheckoutView.parse(await created.json());
          const res = await fetch(`${url}/api/checkouts/${checkout.checkout_id}/payment`, { method: 'POST' });
          assert.equal(res.status, 201);
          return PaymentView.parse(await res.json());
        };
        const paid = await newPayment(`shutdown-paid-${process.pid}`);
        const open = await newPayment(`shutdown-open-${process.pid}`);

        // B is paid; its stream sees it, and the outcome's delivery reaches the receiver, which holds it.
        const paidStream = (await fetch(`${url}/api/payments/${paid.reference}/events`)).body!.getReader();
        assert.equal(await readUntil(paidStream, /"status":"pending"/), true);
        const control = sandboxControl(sandbox.url, sandbox.ca);
        assert.equal((await control.send(`/payments/${paid.reference}/pay`)).status, 200);
        control.close();
        assert.equal(await readUntil(paidStream, /"status":"paid"/), true, 'the stream saw the payment');
        const eventId = await receiver.received;
        events.push('delivery in flight');

        // A's stream stays open across the signal.
        const openStream = (await fetch(`${url}/api/payments/${open.reference}/events`)).body!.getReader();
        assert.equal(await readUntil(openStream, /"status":"pending"/), true);

        child.kill('SIGTERM');
        await drainStarted;
        const readyRes = await fetch(`${url}/ready`);
        assert.equal(readyRes.status, 503);
        assert.equal(((await readyRes.json()) as { error: { code: string } }).error.code, 'shutting_down');
        const refused = await fetch(`${url}/api/checkouts`, {
          method: 'POST',
          headers: merchant,
          body: JSON.stringify({ value: 10, order_id: `late-${process.pid}` }),
        });
        assert.equal(refused.status, 503);
        assert.equal(refused.headers.get('retry-after'), '1');
        assert.equal(((await refused.json()) as { error: { code: string } }).error.code, 'shutting_down');
        const refusedStream = await fetch(`${url}/api/payments/${open.reference}/events`);
        assert.equal(refusedStream.status, 503, 'no new stream');
        assert.equal(((await refusedStream.json()) as { error: { code: string } }).error.code, 'shutting_down');
        const read = await fetch(`${url}/api/payments/${open.reference}`);
        assert.equal(read.status, 200, 'reads are still served');
        await read.body?.cancel();
        events.push('drain checked');

        // The open stream ends (EventSource reconnects elsewhere); only then does the receiver answer.
        assert.equal(await readUntil(openStream, /never/), false, 'the stream ended');
        events.push('stream ended');
        receiver.release();

        const [code] = await exited;
        events.push(`exit ${String(code)}`);
        assert.equal(code, 0, JSON.stringify(logLines.filter((l) => l.level >= 40)));
        assert.deepEqual(
          events.filter((e) => ['delivery in flight', 'drain checked', 'stream ended', 'receiver answered 200', 'log: stopped', 'exit 0'].includes(e)),
          ['delivery in flight', 'drain checked', 'stream ended', 'receiver answered 200', 'log: stopped', 'exit 0'],
        );
        assert.equal(
          logLines.some((l) => l.msg.startsWith('shutdown grace period over')),
          false,
        );

        // Recorded delivered, once: nothing is left for another instance to send again.
        assert.deepEqual(receiver.deliveries, [eventId]);
        const store = await openStore({ dataDir: join(dir, 'data'), cacheSize: 0 });
        try {
          const entries = (await store.outbox.list()).filter((entry) => entry.eventId === eventId);
          assert.deepEqual(
            entries.map((entry) => [entry.state, entry.attempts]),
            [['delivered', 1]],
          );
        } finally {
          await store.close();
        }
      } finally {
        if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
        receiver.release();
        receiver.server.closeAllConnections();
        receiver.server.close();
      }
    },
  );

  test('past the grace period: exit 1, the log naming the delivery still awaiting its answer', { timeout: 120_000 }, async () => {
    const receiver = await holdingReceiver();
    const env = {
      ...proxyEnv(sandbox.url, dir, USER_AGENT, API_KEY),
      PORT: '0',
      PIX_LOG_LEVEL: 'info',
      PIX_DATA_DIR: join(dir, 'data-cut'),
      PIX_MERCHANT_WEBHOOK_URL: receiver.url,
      PIX_MERCHANT_WEBHOOK_SECRET: SECRET,
      PIX_WEBHOOK_SOURCE_IPS: '127.0.0.1',
      // Shorter than the delivery's own deadline (10 s), which the receiver never meets.
      PIX_SHUTDOWN_GRACE_MS: '200',
    };
    const child = spawnProxy(0, env, echoErrors);
    try {
      // 'close', not 'exit': after the last log line is read.
      const exited = once(child, 'close');
      const logLines: { level: number; msg: string; url?: string; still_running?: string[] }[] = [];
      let listening!: (url: string) => void;
      const started = new Promise<string>((resolve) => (listening = resolve));
      createInterface({ input: child.stdout! }).on('line', (line) => {
        const entry = JSON.parse(line) as (typeof logLines)[number];
        logLines.push(entry);
        if (entry.msg === 'pix-checkout proxy listening') listening(entry.url!);
      });
      const url = await started;
      const merchant = { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json' };
      const created = await fetch(`${url}/api/checkouts`, {
        method: 'POST',
        headers: merchant,
        body: JSON.stringify({ value: 10, order_id: `cut-${process.pid}` }),
      });
      const checkout = CheckoutView.parse(await created.json());
      const payment = PaymentView.parse(await (await fetch(`${url}/api/checkouts/${checkout.checkout_id}/payment`, { method: 'POST' })).json());
      const control = sandboxControl(sandbox.url, sandbox.ca);
      assert.equal((await control.send(`/payments/${payment.reference}/pay`)).status, 200);
      control.close();
      // The stream's watch records the outcome; its delivery reaches the receiver, which holds it.
      const stream = (await fetch(`${url}/api/payments/${payment.reference}/events`)).body!.getReader();
      assert.equal(await readUntil(stream, /"status":"paid"/), true);
      await receiver.received;

      child.kill('SIGTERM');
      const [code] = await exited;
      assert.equal(code, 1);
      const cut = logLines.find((l) => l.msg.startsWith('shutdown grace period over'));
      assert.ok(cut, JSON.stringify(logLines.slice(-5)));
      assert.equal(cut.level, 50);
      assert.ok(
        cut.still_running?.some((what) => /1 merchant delivery awaiting/.test(what)),
        JSON.stringify(cut.still_running),
      );
      assert.equal(
        logLines.some((l) => l.msg === 'stopped'),
        false,
      );
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      receiver.release();
      receiver.server.closeAllConnections();
      receiver.server.close();
    }
  });
});
