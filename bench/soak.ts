/**
 * A soak of the proxy: mixed traffic on loopback for SOAK_MINUTES (default 10), then it stops by
 * itself. Each minute prints the partner calls the proxy made (and of them, reads of payments), the
 * pace of those reads (`webhooks`: the partner's notifications arrive, pending payments are asked
 * about at most every 10 s; `polling`: every 2 s), its RSS and its open handles; after warm-up all
 * should stay flat. `npm run bench:soak` (SOAK_MINUTES; PIX_WEBHOOK_READ_INTERVAL_MS=2000 for the pace before
 * partner reads followed the webhooks' health).
 *
 * Three processes, so that RSS and handles are the proxy's alone: the sandbox (the partner, with 10%
 * of its calls slowed by 300 ms and 3% answered 503, sending its webhooks to the proxy), the proxy in
 * production-like settings (credentials, the sandbox's CA file, its webhook URL registered), and
 * this one, the traffic: SOAK_POLLERS (100) pages each polling an open payment every second, and
 * every 100 ms a payment created, five reads, one stream opened and dropped
 * after 50-500 ms (often mid-read), two notifications (a copy of a real one, one for a reference
 * nobody issued); and each payment settled at the partner 30 s after its creation (paid, or one in
 * four canceled), as customers do, so the set of open payments reaches a steady size.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';

const minutes = Number(process.env.SOAK_MINUTES ?? 10);
const pollerCount = Number(process.env.SOAK_POLLERS ?? 100);

type Sample = { partnerCalls: number; partnerReads: number; rssMb: number; handles: number; reads: string };
type Settle = { reference: string; outcome: 'pay' | 'cancel' };

if (process.argv[2] === '--sandbox') {
  const { startSandbox } = await import('../server/sandbox/index.ts');
  const sandbox = await startSandbox();
  sandbox.state.faults.add({ kind: 'latency', rate: 0.1, latency_ms: 300, path_prefix: null, status: null });
  sandbox.state.faults.add({ kind: 'server_error', rate: 0.03, status: 503, path_prefix: null, latency_ms: null });
  process.on('message', (message: Settle | 'stop') => {
    if (message === 'stop') return void sandbox.close().then(() => process.exit(0));
    const payment = sandbox.state.payments.get(message.reference);
    if (payment) void (message.outcome === 'pay' ? sandbox.state.pay(payment) : sandbox.state.cancelPayment(payment));
  });
  process.send!({ url: sandbox.url, ca: sandbox.ca });
} else if (process.argv[2] === '--proxy') {
  const { proxyConfig } = await import('../server/config/index.ts');
  const { createProxy } = await import('../server/proxy.ts');
  const { createNodeServer, nodeListener } = await import('../server/http/node-listener.ts');
  const { createLogger } = await import('../server/log.ts');
  const { SANDBOX_ACCOUNT } = await import('../server/partner/sandbox-account.ts');
  const env = JSON.parse(process.argv[3]!) as Record<string, string>;
  // Logs off: the figures are the proxy's own, not stdout's.
  const proxy = await createProxy(
    proxyConfig({ ...env, PIX_EMAIL: SANDBOX_ACCOUNT.email, PIX_ACCESS_KEY: SANDBOX_ACCOUNT.accessKey }),
    createLogger({ level: 'silent' }),
  );
  let partnerCalls = 0;
  let partnerReads = 0;
  for (const name of ['getPayment', 'createPayment', 'checkTransfer', 'getTenant'] as const) {
    const call = proxy.partner[name].bind(proxy.partner) as (...args: unknown[]) => unknown;
    (proxy.partner as unknown as Record<string, unknown>)[name] = (...args: unknown[]) => {
      partnerCalls++;
      if (name === 'getPayment') partnerReads++;
      return call(...args);
    };
  }
  const server = createNodeServer(nodeListener(proxy.app.fetch));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  await proxy.partner.setNotificationUrl({ notification_url: `${url}/api/webhooks/partner` });
  process.on('message', (message: string) => {
    if (message === 'sample') {
      const sample: Sample = {
        partnerCalls,
        partnerReads,
        rssMb: Math.round(process.memoryUsage().rss / 1048576),
        handles: process.getActiveResourcesInfo().length,
        reads: proxy.app.pix.reads.mode(),
      };
      partnerCalls = 0;
      partnerReads = 0;
      process.send!(sample);
    } else if (message === 'stop') {
      proxy.endStreams();
      server.close();
      void proxy.close().then(() => process.exit(0));
    }
  });
  process.send!({ apiUrl: `${url}/api` });
} else {
  const self = fileURLToPath(import.meta.url);
  const execArgv = ['--import', 'tsx'];
  const next = <T>(child: ChildProcess) => new Promise<T>((resolve) => child.once('message', (m) => resolve(m as T)));
  const sandbox = fork(self, ['--sandbox'], { execArgv });
  const partner = await next<{ url: string; ca: string }>(sandbox);
  const dir = mkdtempSync(join(tmpdir(), 'pix-soak-'));
  writeFileSync(join(dir, 'ca.pem'), partner.ca);
  const env = {
    PIX_BASE_URL: partner.url,
    PIX_CA_FILE: join(dir, 'ca.pem'),
    PIX_USER_AGENT: 'pix-checkout soak (soak@pix-checkout.test)',
    PIX_API_KEY: 'soak-'.repeat(8),
    PIX_OPEN_AMOUNT: 'true',
    PIX_DATA_DIR: join(dir, 'data'),
    PIX_ALLOWED_ORIGINS: 'http://localhost:3000',
    // PIX_WEBHOOK_READ_INTERVAL_MS=2000 in this process's environment measures the old pace (reads every 2 s whatever the webhooks do).
    ...(process.env.PIX_WEBHOOK_READ_INTERVAL_MS ? { PIX_WEBHOOK_READ_INTERVAL_MS: process.env.PIX_WEBHOOK_READ_INTERVAL_MS } : {}),
    PIX_RATE_LIMIT_CREATE: '0',
    PIX_RATE_LIMIT_STATUS: '0',
    PIX_RATE_LIMIT_WEBHOOK: '0',
    // Every simulated customer comes from loopback: no stream caps.
    PIX_STREAMS_PER_CLIENT: '0',
    PIX_STREAMS_PER_PAYMENT: '0',
    PIX_LOG_LEVEL: 'silent',
  };
  const proxy = fork(self, ['--proxy', JSON.stringify(env)], { execArgv });
  const { apiUrl } = await next<{ apiUrl: string }>(proxy);

  const json = { 'content-type': 'application/json' };
  const references: string[] = [];
  const open: { reference: string; at: number }[] = [];
  const counts = { creates: 0, reads: 0, streams: 0, notifications: 0, settled: 0, failures: 0, polls: 0 };
  const attempt = async (work: () => Promise<unknown>) => {
    try {
      await work();
    } catch {
      counts.failures++;
    }
  };
  const pick = () => references[Math.floor(Math.random() * references.length)];
  const notification = (reference: string) =>
    JSON.stringify({ type: 'payment', external_reference: reference, status: 2, value: 1, transaction_id: null, end2end: null, user_id: null });

  async function tick(): Promise<void> {
    const work: Promise<void>[] = [
      attempt(async () => {
        const res = await fetch(`${apiUrl}/payments`, { method: 'POST', headers: json, body: JSON.stringify({ value: 1 + Math.floor(Math.random() * 50) }) });
        const body = (await res.json()) as { reference?: string };
        if (res.status === 201 && body.reference) {
          references.push(body.reference);
          open.push({ reference: body.reference, at: performance.now() });
        }
        counts.creates++;
      }),
    ];
    if (references.length > 2000) references.splice(0, 1000);
    for (let i = 0; i < 5 && references.length > 0; i++)
      work.push(attempt(async () => void (await (await fetch(`${apiUrl}/payments/${pick()}`)).text(), counts.reads++)));
    const streamed = pick();
    if (streamed) {
      work.push(
        attempt(async () => {
          const controller = new AbortController();
          const opened = fetch(`${apiUrl}/payments/${streamed}/events`, { signal: controller.signal }).catch(() => null);
          await sleep(50 + Math.random() * 450);
          controller.abort();
          await opened;
          counts.streams++;
        }),
      );
      for (const reference of [streamed, `nobody-${Math.random().toString(36).slice(2)}`]) {
        work.push(
          attempt(
            async () =>
              void (
                await (await fetch(`${apiUrl}/webhooks/partner`, { method: 'POST', headers: json, body: notification(reference) })).text(),
                counts.notifications++
              ),
          ),
        );
      }
    }
    while (open.length > 0 && performance.now() - open[0]!.at > 30_000) {
      const { reference } = open.shift()!;
      sandbox.send({ reference, outcome: Math.random() < 0.25 ? 'cancel' : 'pay' } satisfies Settle);
      counts.settled++;
    }
    await Promise.all(work);
  }

  console.log(
    `soak: ${minutes} min of mixed traffic on loopback and ${pollerCount} pages polling an open payment every second, ${process.version}; the sandbox, the proxy and the traffic in three processes`,
  );
  console.log(
    'minute | partner calls (payment reads) | reads mode | proxy RSS MB | open handles | open payments | creates reads streams notifications settled failures polls (this minute)',
  );
  // Customers' pages without streams: each poller follows one open payment, reading it every second
  // (as the widget polls), then takes another when it is settled.
  let soaking = true;
  const poller = async () => {
    while (soaking) {
      const followed = open[Math.floor(Math.random() * open.length)];
      if (!followed) {
        await sleep(100);
        continue;
      }
      while (soaking && open.includes(followed)) {
        await attempt(async () => void (await (await fetch(`${apiUrl}/payments/${followed.reference}`)).text(), counts.polls++));
        await sleep(1000);
      }
    }
  };
  const pollers = Array.from({ length: pollerCount }, poller);

  const started = performance.now();
  for (let minute = 1; minute <= minutes; minute++) {
    const before = { ...counts };
    while (performance.now() < started + minute * 60_000) {
      const at = performance.now();
      await tick();
      await sleep(Math.max(0, 100 - (performance.now() - at)));
    }
    proxy.send('sample');
    const sample = await next<Sample>(proxy);
    const delta = (Object.keys(counts) as (keyof typeof counts)[]).map((key) => counts[key] - before[key]).join(' ');
    const calls = `${sample.partnerCalls} (${sample.partnerReads})`;
    console.log(
      `${String(minute).padStart(6)} | ${calls.padStart(29)} | ${sample.reads.padStart(10)} | ${String(sample.rssMb).padStart(12)} | ${String(sample.handles).padStart(12)} | ${String(open.length).padStart(13)} | ${delta}`,
    );
  }
  soaking = false;
  await Promise.all(pollers);
  for (const child of [proxy, sandbox]) {
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.send('stop');
    await exited;
  }
  rmSync(dir, { recursive: true, force: true });
}
