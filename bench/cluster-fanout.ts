/**
 * Stream fan-out across instances: two proxy instances, A and B, child processes over one
 * Postgres, and the partner's sandbox in this process. A payment is created on A, one status stream
 * is opened on B, the payment is paid in the sandbox, and the sandbox's webhook goes to A through a
 * small forwarder here that notes when it arrives. B polls the partner only every minute and trusts
 * its stored copy for a minute, so B can only learn of the payment through the store's notification
 * (NOTIFY from A's transaction). Measured with one clock, this process's:
 *   (a) webhook at A (its arrival at the forwarder) -> `paid` on B's stream; goal p50 < 100 ms;
 *   (b) pay in the sandbox -> `paid` on B's stream;
 * and one change reaching BENCH_STREAMS streams of one payment held on B (webhook at A -> the last
 * stream's `paid`). Payments go one at a time, after 10 not counted (warm-up). A LISTEN of this
 * process's own on the store's channel splits (a) in two, roughly: A's part (webhook -> the change
 * announced, i.e. committed) and B's (announced -> `paid` on its stream); roughly, because this
 * process's connection may be told a little later than B's (B's part can come out at 0 or below).
 * `npm run bench:cluster` (BENCH_PAYMENTS, default 200; BENCH_STREAMS, default 1000). Needs
 * `ulimit -n` above twice the streams.
 */
import { execSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { Agent, createServer, request, type ClientRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { WEBHOOK_PATH } from '../server/routes/webhooks.ts';
import { startSandbox, type RunningSandbox } from '../server/sandbox/server.ts';
import { CHANGES_CHANNEL } from '../server/store/postgres/postgres-store.ts';
import { LIMITS_OFF, sandboxPartnerEnv, setSandboxNotificationUrl } from '../test/support/cluster-harness.ts';
import { spawnProxy, untilHealthy } from '../test/support/proxy-process.ts';
import { startPostgres, type RunningPostgres } from '../test/support/postgres.ts';
import { freePort } from '../test/support/ports.ts';

const payments = Number(process.env.BENCH_PAYMENTS ?? 200);
const streams = Number(process.env.BENCH_STREAMS ?? 1000);
const WARM_UP = 10;
/** How long one payment's `pending` or `paid` may take on B before it counts as missed. */
const WAIT_MS = 10_000;
const USER_AGENT = 'Cluster Bench (dev@loja.example)';

const limit = Number(execSync('ulimit -n', { shell: '/bin/bash' }).toString().trim());
if (limit < streams * 2 + 100) {
  console.error(`ulimit -n is ${limit}; ${streams} streams need about ${streams * 2 + 100} (run \`ulimit -n 65536\` first)`);
  process.exit(1);
}

const now = () => performance.now();
const load = () =>
  loadavg()
    .map((n) => n.toFixed(2))
    .join(', ');
const loadAtStart = load();

// --- What is started, and stopped at the end whatever happens ----------------------------------------

const children: ChildProcess[] = [];
const servers: Server[] = [];
const sockets = new Set<ClientRequest>();
let postgres: RunningPostgres | null = null;
let listener: pg.Client | null = null;
let sandbox: RunningSandbox | null = null;
let dir: string | null = null;
const forwardAgent = new Agent({ keepAlive: true });

const alive = (child: ChildProcess) => child.exitCode === null && child.signalCode === null;

let cleaning: Promise<void> | null = null;
function cleanUp(): Promise<void> {
  cleaning ??= (async () => {
    for (const socket of sockets) socket.destroy();
    await Promise.all(
      children.filter(alive).map(async (child) => {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
        await exited;
        clearTimeout(timer);
      }),
    );
    for (const server of servers) {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
    forwardAgent.destroy();
    await listener?.end().catch(() => undefined);
    await sandbox?.close();
    await postgres?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  })();
  return cleaning;
}
// Last resort (an exit without cleanUp): no instance outlives the bench; startPostgres has its own hook.
process.once('exit', () => {
  for (const child of children) if (alive(child)) child.kill('SIGKILL');
});
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => void cleanUp().finally(() => process.exit(130)));
}

// --- Pieces ------------------------------------------------------------------------------------------

interface Instance {
  name: string;
  port: number;
  origin: string;
}

/** `node --import tsx server/main.ts` with `env`, its output prefixed on stderr; resolves when /health answers. */
async function startInstance(name: string, env: Record<string, string | undefined>): Promise<Instance> {
  const port = await freePort();
  const origin = `http://127.0.0.1:${port}`;
  const child = spawnProxy(port, env, (line) => process.stderr.write(`[${name}] ${line}\n`));
  children.push(child);
  await untilHealthy(name, origin, child);
  return { name, port, origin };
}

/** One status stream, read as raw SSE; notes when each status first arrived. */
interface Stream {
  seen: Map<string, number>;
  /** Resolves with the moment `status` first arrived; rejects after `ms`, or when the stream fails first. */
  when(status: string, ms: number): Promise<number>;
  close(): void;
}

function openStream(url: string): Stream {
  const seen = new Map<string, number>();
  const waiting = new Map<string, () => void>();
  let failure: Error | null = null;
  const wakeAll = () => {
    for (const wake of waiting.values()) wake();
  };
  const req = request(url, { agent: false, headers: { accept: 'text/event-stream' } }, (res) => {
    if (res.statusCode !== 200) {
      failure = new Error(`GET ${url}: ${res.statusCode}`);
      res.resume();
      wakeAll();
      return;
    }
    let buffer = '';
    res.setEncoding('utf8');
    res.on('data', (chunk: string) => {
      const at = now();
      buffer += chunk;
      for (let cut = buffer.indexOf('\n\n'); cut >= 0; cut = buffer.indexOf('\n\n')) {
        const block = buffer.slice(0, cut).split('\n');
        buffer = buffer.slice(cut + 2);
        const data = block.find((line) => line.startsWith('data:'));
        if (!block.includes('event: status') || !data) continue;
        const { status } = JSON.parse(data.slice(5)) as { status: string };
        if (!seen.has(status)) {
          seen.set(status, at);
          waiting.get(status)?.();
        }
      }
    });
  });
  req.on('error', (error) => {
    failure ??= error;
    wakeAll();
  });
  req.end();
  sockets.add(req);
  return {
    seen,
    when: (status, ms) =>
      new Promise<number>((resolve, reject) => {
        const check = () => {
          clearTimeout(timer);
          waiting.delete(status);
          const at = seen.get(status);
          if (at !== undefined) resolve(at);
          else reject(failure ?? new Error(`no ${status} within ${ms} ms`));
        };
        const timer = setTimeout(check, ms);
        waiting.set(status, check);
        if (seen.has(status) || failure) check();
      }),
    close() {
      req.destroy();
      sockets.delete(req);
    },
  };
}

/** Nearest-rank percentile of sorted values. */
const percentile = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!;
const summary = (values: number[]) => {
  const sorted = [...values].sort((x, y) => x - y);
  const ms = (n: number) => Number(n.toFixed(1));
  return sorted.length === 0
    ? { n: 0 }
    : {
        n: sorted.length,
        'p50 ms': ms(percentile(sorted, 0.5)),
        'p99 ms': ms(percentile(sorted, 0.99)),
        'min ms': ms(sorted[0]!),
        'max ms': ms(sorted.at(-1)!),
      };
};

// --- The run -----------------------------------------------------------------------------------------

try {
  postgres = await startPostgres();
  const databaseUrl = await postgres.createDatabase();
  // When each payment's change was announced (NOTIFY, delivered on commit), as every instance hears it.
  const announced: { at: number; reference: string }[] = [];
  listener = new pg.Client({ connectionString: databaseUrl });
  await listener.connect();
  listener.on('notification', (message) => {
    const at = now();
    const [, kind, reference] = (message.payload ?? '').split(' ');
    if (kind === 'payment' && reference) announced.push({ at, reference });
  });
  await listener.query(`LISTEN ${CHANGES_CHANNEL}`);
  /** The first announcement of `reference` at or after `since`. */
  const announcedAt = (reference: string, since: number) => announced.find((n) => n.reference === reference && n.at >= since)?.at;
  sandbox = await startSandbox({ webhooks: { timeoutMs: 5000, retryDelayMs: 100 } });
  const running = sandbox;
  dir = mkdtempSync(join(tmpdir(), 'pix-cluster-bench-'));
  writeFileSync(join(dir, 'ca.pem'), sandbox.ca);

  // The forwarder: the partner's webhooks arrive here, are noted, and go on to A as they came.
  const arrivals: { at: number; body: string }[] = [];
  let forwardFailures = 0;
  let refusedByA = 0;
  let a: Instance | null = null;
  const forwarder = createServer((req, res) => {
    const at = now();
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      arrivals.push({ at, body: body.toString('utf8') });
      const upstream = request(
        { host: '127.0.0.1', port: a!.port, method: req.method, path: req.url, headers: { ...req.headers, host: `127.0.0.1:${a!.port}` }, agent: forwardAgent },
        (answer) => {
          if ((answer.statusCode ?? 500) >= 300) refusedByA++;
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        },
      );
      upstream.on('error', () => {
        forwardFailures++;
        if (!res.headersSent) res.writeHead(502).end();
      });
      upstream.end(body);
    });
  });
  servers.push(forwarder);
  await new Promise<void>((resolve) => forwarder.listen(0, '127.0.0.1', resolve));
  const forwarderUrl = `http://127.0.0.1:${(forwarder.address() as AddressInfo).port}`;
  /** When the first webhook naming `reference` arrived at the forwarder. */
  const arrivalOf = (reference: string) => arrivals.find((arrival) => arrival.body.includes(reference))?.at;

  const env = (name: string) => ({
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    ...sandboxPartnerEnv(running.url, join(dir!, 'ca.pem'), USER_AGENT),
    PIX_TOKEN_FILE: join(dir!, `token-${name}.json`),
    PIX_API_KEY: 'cluster-bench-api-key-0123456789abcdef0123456789',
    PIX_DATA_DIR: join(dir!, `data-${name}`),
    PIX_DATABASE_URL: databaseUrl,
    PIX_OPEN_AMOUNT: 'true',
    ...LIMITS_OFF,
    PIX_LOG_LEVEL: 'warn',
  });
  a = await startInstance('A', env('A'));
  // B asks the partner once a minute at most and trusts its stored copy for a minute; its reconciler
  // looks at an open payment once an hour: what B's streams learn within a run, they hear from A.
  const b = await startInstance('B', {
    ...env('B'),
    PIX_WATCH_INTERVAL_MS: '60000',
    PIX_STALE_AFTER_MS: '60000',
    PIX_RECONCILE_EVERY_S: '3600',
  });
  await setSandboxNotificationUrl(running, USER_AGENT, `${forwarderUrl}/api${WEBHOOK_PATH}`);

  const create = async () => {
    const res = await fetch(`${a.origin}/api/payments`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"value":1.5}' });
    if (res.status !== 201) throw new Error(`POST /api/payments on A: ${res.status} ${await res.text()}`);
    return ((await res.json()) as { reference: string }).reference;
  };
  const pay = (reference: string) => {
    const at = now();
    const outcome = running.state.pay(running.state.payments.get(reference)!);
    if (!outcome.ok) throw new Error(`the sandbox would not pay ${reference}`);
    return at;
  };
  const eventsOnB = (reference: string) => `${b.origin}/api/payments/${reference}/events`;

  // One payment at a time: create on A, one stream on B, pay, wait for `paid` on B.
  const webhookToB: number[] = [];
  const payToB: number[] = [];
  const payToWebhook: number[] = [];
  /** Split after the run: this process's LISTEN may hear a NOTIFY after B's stream has already told it. */
  const timings: { reference: string; arrived: number; paidAt: number }[] = [];
  const missed: string[] = [];
  const started = now();
  for (let i = 0; i < WARM_UP + payments; i++) {
    const reference = await create();
    const stream = openStream(eventsOnB(reference));
    try {
      await stream.when('pending', WAIT_MS);
      const paying = pay(reference);
      let paidAt: number;
      try {
        paidAt = await stream.when('paid', WAIT_MS);
      } catch {
        if (i >= WARM_UP) missed.push(reference);
        continue;
      }
      const arrived = arrivalOf(reference);
      if (i < WARM_UP) continue;
      payToB.push(paidAt - paying);
      if (arrived === undefined) missed.push(`${reference} (no webhook seen)`);
      else {
        webhookToB.push(paidAt - arrived);
        payToWebhook.push(arrived - paying);
        timings.push({ reference, arrived, paidAt });
      }
    } finally {
      stream.close();
    }
  }
  const sequentialSeconds = (now() - started) / 1000;

  // Fan-out: BENCH_STREAMS streams of one payment on B, opened in batches as pages arrive, then one change.
  const reference = await create();
  const opening = now();
  const held: Stream[] = [];
  for (let i = 0; i < streams; i += 250) {
    const batch = Array.from({ length: Math.min(250, streams - i) }, () => openStream(eventsOnB(reference)));
    held.push(...batch);
    await Promise.all(batch.map((stream) => stream.when('pending', 30_000)));
  }
  const openSeconds = (now() - opening) / 1000;
  await sleep(1000);
  const paying = pay(reference);
  const paidAts = await Promise.all(held.map((stream) => stream.when('paid', 30_000).catch(() => null)));
  const reached = paidAts.filter((at): at is number => at !== null);
  const arrived = arrivalOf(reference);
  for (const stream of held) stream.close();
  await sleep(500);
  const notified = arrived === undefined ? undefined : announcedAt(reference, arrived);
  const webhookToNotify: number[] = [];
  const notifyToB: number[] = [];
  for (const timing of timings) {
    const at = announcedAt(timing.reference, timing.arrived);
    if (at === undefined) continue;
    webhookToNotify.push(at - timing.arrived);
    notifyToB.push(timing.paidAt - at);
  }
  const loadAtEnd = load();

  const table = (values: number[]) => summary(values);
  console.log(
    `cluster fan-out: 2 proxy instances (A, B, child processes) over one Postgres; sandbox, webhook forwarder and clients in this process; ${process.version}`,
  );
  console.log(`load average at start: ${loadAtStart}`);
  console.log(`${payments} payments one at a time (+${WARM_UP} warm-up not counted) in ${sequentialSeconds.toFixed(1)} s: one stream on B each`);
  console.table({
    '(a) webhook at A -> paid at B': table(webhookToB),
    '(b) pay -> paid at B': table(payToB),
    '    pay -> webhook at A': table(payToWebhook),
    '    webhook at A -> NOTIFY heard here': table(webhookToNotify),
    '    NOTIFY heard here -> paid at B': table(notifyToB),
  });
  const sortedA = [...webhookToB].sort((x, y) => x - y);
  console.log(`(a) p50 ${sortedA.length > 0 ? percentile(sortedA, 0.5).toFixed(1) : '-'} ms (goal < 100 ms)`);
  console.log(
    `missed (no paid on B within ${WAIT_MS / 1000} s, or no webhook seen): ${missed.length}${missed.length > 0 ? ` (${missed.slice(0, 5).join(', ')})` : ''}; webhooks forwarded ${arrivals.length}, answered non-2xx by A ${refusedByA}, forward failures ${forwardFailures}`,
  );
  console.log(`fan-out: ${held.length} streams of one payment held on B (opened in ${openSeconds.toFixed(1)} s)`);
  if (reached.length === 0 || arrived === undefined) {
    console.log(`  the change reached ${reached.length} of them${arrived === undefined ? '; no webhook was seen for it' : ''}`);
  } else {
    const first = Math.min(...reached);
    const last = Math.max(...reached);
    console.log(
      `  webhook at A -> first stream's paid ${(first - arrived).toFixed(0)} ms, -> last (${reached.length} of ${held.length}) ${(last - arrived).toFixed(0)} ms; pay -> last ${(last - paying).toFixed(0)} ms; fan-out on B itself (first -> last) ${(last - first).toFixed(0)} ms`,
    );
    if (notified !== undefined) {
      console.log(
        `  webhook at A -> NOTIFY heard here ${(notified - arrived).toFixed(0)} ms; NOTIFY heard here -> first stream's paid ${(first - notified).toFixed(0)} ms, -> last ${(last - notified).toFixed(0)} ms`,
      );
    }
  }
  console.log(`load average at end: ${loadAtEnd}`);
} finally {
  await cleanUp();
}
