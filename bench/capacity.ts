/**
 * Capacity: what 1, 2 and 3 proxy instances hold over one Postgres on this machine, and which
 * process is the limit. Each instance is a real child process (`node --import tsx server/main.ts`,
 * its own event loop), as in the cluster test; the partner's sandbox is a child process of its own;
 * Postgres is a throwaway cluster (test/support/postgres.ts). The load generator (autocannon, and the
 * status streams as raw sockets) runs in this process, pinned to CPU 0, and every server (instances,
 * sandbox, Postgres) to the other CPUs (bench/pin.ts's reason: unpinned, the same run varies twofold).
 * On a 2-core machine the servers therefore share one core: the figures say what one core of servers
 * holds, and how it is shared when more instances run on it.
 *
 * For each instance count (instances are added one by one, over the same database):
 *   creates  POST /api/payments for BENCH_SECONDS, connections spread over the instances: each one a
 *            partner call to the sandbox (HTTPS) and an insert;
 *   reads    GET /api/payments/:reference of 50 pending payments, spread likewise;
 *   streams  BENCH_STREAMS status streams per instance, each of its own payment (as customers hold
 *            them: one page, one payment), held BENCH_HOLD_SECONDS (the cost of holding them: every
 *            watched payment is polled), then BENCH_PAYS of them paid in the sandbox one at a time:
 *            the partner's webhooks are spread over the instances (a forwarder here, round-robin, as a
 *            balancer would), and the change reaches a stream on another instance through the
 *            store's NOTIFY; pay -> `paid` on its stream is the latency. Before holding, payments are
 *            paid until every instance has received a notification, so each reads the partner at
 *            the pace of healthy webhooks (/ready's `reads.mode`, printed), as behind a balancer.
 * CPU of every process is read from /proc during each phase, so the table says which one saturated.
 * Postgres connections: the most client backends seen in pg_stat_activity during the instance count's
 * phases (this bench's own sampling connection left out).
 *
 * `npm run bench:capacity` (about 4 minutes), `npm run bench:capacity -- --quick` (about 1 minute).
 * Env: BENCH_INSTANCES (default 1,2,3), BENCH_SECONDS (per load phase; 10, quick 3), BENCH_STREAMS
 * (per instance; 1000, quick 200), BENCH_HOLD_SECONDS (5, quick 2), BENCH_PAYS (30, quick 10),
 * BENCH_CREATE_CONNECTIONS (24), BENCH_READ_CONNECTIONS (96), BENCH_POOL_SIZE (PIX_DATABASE_POOL_SIZE
 * of each instance; its default otherwise), BENCH_PIN=0 (no pinning). Needs `ulimit -n` above about
 * 2 x streams per instance x instances + 500; fewer streams are opened otherwise (and said so).
 * Loopback only; every process and port it starts is stopped at the end, on failure and on Ctrl-C too.
 */
import { execSync, fork, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { Agent, createServer, request, type Server } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { availableParallelism, cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import pg from 'pg';
import { SETTINGS } from '../server/config/settings.ts';
import { WEBHOOK_PATH } from '../server/routes/webhooks.ts';
import { LIMITS_OFF, proxyEnv, setSandboxNotificationUrl } from '../test/support/cluster-harness.ts';
import { freePort } from '../test/support/ports.ts';
import { startPostgres, type RunningPostgres } from '../test/support/postgres.ts';
import { childrenOf, cpuTicks, parentOf, pinTo, rssBytes, treeCpuSeconds } from './processes.ts';

const USER_AGENT = 'Capacity Bench (dev@loja.example)';

type ToSandbox = { pay: string } | 'stop';
type FromSandbox = { url: string; ca: string } | { paid: string; ok: boolean };

if (process.argv[2] === '--sandbox') {
  // The partner's sandbox, in a process of its own so its CPU is its own.
  const { startSandbox } = await import('../server/sandbox/server.ts');
  const sandbox = await startSandbox({ webhooks: { timeoutMs: 5000, retryDelayMs: 100 } });
  process.on(
    'message',
    (message: ToSandbox) =>
      void (async () => {
        if (message === 'stop') {
          await sandbox.close();
          process.exit(0);
        }
        const payment = sandbox.state.payments.get(message.pay);
        const ok = payment !== undefined && sandbox.state.pay(payment).ok;
        process.send!({ paid: message.pay, ok } satisfies FromSandbox);
      })(),
  );
  process.on('disconnect', () => void sandbox.close().finally(() => process.exit(1)));
  process.send!({ url: sandbox.url, ca: sandbox.ca } satisfies FromSandbox);
} else {
  await main();
}

async function main(): Promise<void> {
  const quick = process.argv.includes('--quick');
  const num = (name: string, fallback: number) => {
    const value = Number(process.env[name] ?? fallback);
    if (!Number.isFinite(value) || value < 0) {
      console.error(`${name} must be a number, not ${process.env[name]}`);
      process.exit(2);
    }
    return value;
  };
  const instanceCounts = (process.env.BENCH_INSTANCES ?? '1,2,3').split(',').map(Number);
  if (instanceCounts.some((n, i) => !Number.isInteger(n) || n < 1 || (i > 0 && n <= instanceCounts[i - 1]!))) {
    console.error('BENCH_INSTANCES must be increasing whole numbers, such as 1,2,3');
    process.exit(2);
  }
  const seconds = num('BENCH_SECONDS', quick ? 3 : 10);
  const holdSeconds = num('BENCH_HOLD_SECONDS', quick ? 2 : 5);
  const pays = num('BENCH_PAYS', quick ? 10 : 30);
  const createConnections = num('BENCH_CREATE_CONNECTIONS', 24);
  const readConnections = num('BENCH_READ_CONNECTIONS', 96);
  const poolSize = process.env.BENCH_POOL_SIZE ? num('BENCH_POOL_SIZE', 10) : SETTINGS.PIX_DATABASE_POOL_SIZE.default;
  const maxInstances = instanceCounts.at(-1)!;
  const fdLimit = Number(execSync('ulimit -n', { shell: '/bin/bash' }).toString().trim());
  const wantedStreams = num('BENCH_STREAMS', quick ? 200 : 1000);
  // Each stream is a socket here and one in its instance (same limit, inherited); room for the rest.
  const streamsPerInstance = Math.max(0, Math.min(wantedStreams, Math.floor((fdLimit - 500) / (2 * maxInstances))));
  const READ_PAYMENTS = 50;

  // --- What is started, and stopped at the end whatever happens --------------------------------------

  const instances: { name: string; origin: string; child: ChildProcess }[] = [];
  let sandboxChild: ChildProcess | null = null;
  let postgres: RunningPostgres | null = null;
  let sampler: pg.Client | null = null;
  let dir: string | null = null;
  let forwarder: Server | null = null;
  const forwardAgent = new Agent({ keepAlive: true });
  const sockets = new Set<Socket>();
  const alive = (child: ChildProcess) => child.exitCode === null && child.signalCode === null;
  const stopChild = async (child: ChildProcess, message?: ToSandbox) => {
    if (!alive(child)) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    if (message && child.connected) child.send(message);
    else child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
    await exited;
    clearTimeout(timer);
  };
  let cleaning: Promise<void> | null = null;
  const cleanUp = () =>
    (cleaning ??= (async () => {
      for (const socket of sockets) socket.destroy();
      if (forwarder) {
        forwarder.closeAllConnections();
        await new Promise((resolve) => forwarder!.close(resolve));
      }
      forwardAgent.destroy();
      await Promise.all(instances.map(({ child }) => stopChild(child)));
      if (sandboxChild) await stopChild(sandboxChild, 'stop');
      await sampler?.end().catch(() => undefined);
      await postgres?.stop();
      if (dir) rmSync(dir, { recursive: true, force: true });
    })());
  process.once('exit', () => {
    for (const child of [...instances.map((i) => i.child), ...(sandboxChild ? [sandboxChild] : [])]) if (alive(child)) child.kill('SIGKILL');
  });
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => void cleanUp().finally(() => process.exit(130)));

  // --- Pinning: the load generator on CPU 0, the servers on the others -------------------------------

  const cores = availableParallelism();
  const pinning = process.env.BENCH_PIN !== '0' && cores >= 2;
  const serverCpus = cores > 2 ? `1-${cores - 1}` : '1';
  const serverCores = pinning ? cores - 1 : cores;
  let pinned = pinning && pinTo(process.pid, '0');
  const pinServer = (pid: number) => {
    if (pinned) pinned = pinTo(pid, serverCpus);
  };

  try {
    postgres = await startPostgres();
    const databaseUrl = await postgres.createDatabase();
    sampler = new pg.Client({ connectionString: databaseUrl });
    await sampler.connect();
    // The postmaster: the parent of this connection's backend. Pinned with its children; backends forked later inherit it.
    const backend = (await sampler.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
    const postmaster = parentOf(backend);
    const maxConnections = (await sampler.query<{ max_connections: string }>('SHOW max_connections')).rows[0]!.max_connections;
    pinServer(postmaster);
    for (const pid of childrenOf(postmaster)) pinServer(pid);

    sandboxChild = fork(fileURLToPath(import.meta.url), ['--sandbox'], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
    const sandboxProcess = sandboxChild;
    const fromSandbox = new Promise<{ url: string; ca: string }>((resolve, reject) => {
      sandboxProcess.once('message', (m) => resolve(m as { url: string; ca: string }));
      sandboxProcess.once('exit', (code) => reject(new Error(`the sandbox exited (${code}) while starting`)));
    });
    const sandbox = await fromSandbox;
    pinServer(sandboxProcess.pid!);
    for (const pid of childrenOf(sandboxProcess.pid!)) pinServer(pid);
    const paidWaiters = new Map<string, (ok: boolean) => void>();
    sandboxProcess.on('message', (m: FromSandbox) => {
      if ('paid' in m) paidWaiters.get(m.paid)?.(m.ok);
    });
    const pay = (reference: string) =>
      new Promise<boolean>((resolve) => {
        paidWaiters.set(reference, (ok) => {
          paidWaiters.delete(reference);
          resolve(ok);
        });
        sandboxProcess.send({ pay: reference } satisfies ToSandbox);
      });

    dir = mkdtempSync(join(tmpdir(), 'pix-capacity-bench-'));
    writeFileSync(join(dir, 'ca.pem'), sandbox.ca);
    const workDir = dir;

    const startInstance = async (index: number) => {
      const name = `instance ${index + 1}`;
      const port = await freePort();
      const origin = `http://127.0.0.1:${port}`;
      const env = {
        ...proxyEnv(sandbox.url, workDir, USER_AGENT, 'capacity-bench-api-key-0123456789abcdef0123456789'),
        PIX_TOKEN_FILE: join(workDir, `token-${index + 1}.json`),
        PIX_DATA_DIR: join(workDir, `data-${index + 1}`),
        PIX_DATABASE_URL: databaseUrl,
        PIX_DATABASE_POOL_SIZE: String(poolSize),
        PIX_OPEN_AMOUNT: 'true',
        ...LIMITS_OFF,
        // The open payments this bench piles up are not asked about by the reconciler within the run
        // (in production each costs a partner call a minute): the phases measure the request paths.
        PIX_RECONCILE_EVERY_S: '3600',
        PIX_LOG_LEVEL: 'warn',
        PORT: String(port),
      };
      const child = spawn(process.execPath, ['--import', 'tsx', 'server/main.ts'], { cwd: process.cwd(), env, stdio: ['ignore', 'pipe', 'pipe'] });
      instances.push({ name, origin, child });
      for (const output of [child.stdout, child.stderr]) {
        let partial = '';
        output.setEncoding('utf8');
        output.on('data', (chunk: string) => {
          const lines = (partial + chunk).split('\n');
          partial = lines.pop()!;
          for (const line of lines) process.stderr.write(`[${name}] ${line.slice(0, 500)}\n`);
        });
      }
      const deadline = Date.now() + 30_000;
      for (;;) {
        if (!alive(child)) throw new Error(`${name} exited (${child.exitCode ?? child.signalCode}) while starting`);
        try {
          if ((await fetch(`${origin}/health`)).ok) break;
        } catch {
          // not listening yet
        }
        if (Date.now() > deadline) throw new Error(`${name} did not answer /health within 30 s`);
        await sleep(50);
      }
      pinServer(child.pid!);
      for (const pid of childrenOf(child.pid!)) pinServer(pid);
    };

    // --- Readings --------------------------------------------------------------------------------------

    type Cpu = { processes: Map<string, number>; ticks: ReturnType<typeof cpuTicks>; at: number };
    /** CPU seconds so far of every process that matters here, by name, and of every CPU. */
    const cpuNow = (): Cpu => {
      const own = process.cpuUsage();
      const readings: [string, number][] = [
        // With their children (tsx's esbuild service): a process's own CPU and theirs.
        ...instances.map(({ name, child }): [string, number] => [name, treeCpuSeconds(child.pid!)]),
        ['sandbox', treeCpuSeconds(sandboxProcess.pid!)],
        ['Postgres', treeCpuSeconds(postmaster)],
        ['load generator', (own.user + own.system) / 1e6],
      ];
      return { processes: new Map(readings), ticks: cpuTicks(), at: performance.now() };
    };
    /** The servers' CPUs (all of them when not pinned). */
    const serverCpuList = pinned ? Array.from({ length: cores - 1 }, (_, i) => i + 1) : Array.from({ length: cores }, (_, i) => i);
    interface Share {
      /** Percent of one core each process used. */
      processes: Map<string, number>;
      /** How busy the servers' CPUs were, whoever used them (other processes on the machine too), in percent of them all. */
      serverCpusBusy: number;
    }
    const cpuShare = (before: Cpu, after: Cpu): Share => {
      const wallSeconds = (after.at - before.at) / 1000;
      let busy = 0;
      let total = 0;
      for (const cpu of serverCpuList) {
        const [b, a] = [before.ticks.get(cpu), after.ticks.get(cpu)];
        if (!a || !b) continue;
        busy += a.busy - b.busy;
        total += a.total - b.total;
      }
      return {
        processes: new Map([...after.processes].map(([name, s]) => [name, Math.round((100 * (s - (before.processes.get(name) ?? 0))) / wallSeconds)])),
        serverCpusBusy: total > 0 ? Math.round((100 * busy) / total) : NaN,
      };
    };
    /**
     * What limited a phase: the servers' CPUs full (and who took most: ours, or other processes on
     * the machine), one process at a core (its event loop), the load generator, or nothing (then
     * latency x connections set the rate).
     */
    const limitOf = ({ processes, serverCpusBusy }: Share): { short: string; long: string } => {
      const servers = [...processes].filter(([name]) => name !== 'load generator').sort((a, b) => b[1] - a[1]);
      const ours = servers.reduce((sum, [, pct]) => sum + pct, 0);
      const top = servers
        .slice(0, 2)
        .map(([name, pct]) => `${name} ${pct}%`)
        .join(', ');
      const cpusNamed = `server CPU${serverCpuList.length > 1 ? 's' : ''}`;
      if (serverCpusBusy >= 90) {
        const others = Math.max(0, Math.round(serverCpusBusy - ours / serverCpuList.length));
        return others >= 15
          ? {
              short: 'noisy (CPU used by others)',
              long: `${cpusNamed} full (${serverCpusBusy}% busy), ${others}% of it other processes on the machine: a noisy run`,
            }
          : { short: `${cpusNamed} (most: ${servers[0]![0]})`, long: `${cpusNamed} full (${serverCpusBusy}% busy; ${top})` };
      }
      const single = servers.find(([, pct]) => pct >= 90);
      if (single) return { short: `${single[0]} (a full core)`, long: `${single[0]} at a full core (${single[1]}%): its event loop` };
      const loadgen = processes.get('load generator') ?? 0;
      if (loadgen >= 90) return { short: 'load generator', long: `the load generator (${loadgen}%)` };
      return { short: 'latency', long: `no CPU full (${cpusNamed} ${serverCpusBusy}% busy; ${top}): latency x connections` };
    };
    let peakConnections = 0;
    let peakAll = 0;
    const sampling = setInterval(() => {
      sampler!
        .query<{ clients: number; total: number }>(
          "SELECT count(*) FILTER (WHERE backend_type = 'client backend' AND pid <> pg_backend_pid())::int AS clients, count(*)::int AS total FROM pg_stat_activity",
        )
        .then(({ rows }) => {
          peakConnections = Math.max(peakConnections, rows[0]!.clients);
          peakAll = Math.max(peakAll, rows[0]!.total - 1);
        })
        .catch(() => undefined);
    }, 250);
    sampling.unref();

    const check = (what: string, result: autocannon.Result) => {
      const failures = result.non2xx + result.errors + result.timeouts;
      if (failures > 0) console.error(`${what}: ${result.non2xx} non-2xx, ${result.errors} errors, ${result.timeouts} timeouts of ${result.requests.total}`);
    };
    /** Every instance's origin: autocannon spreads its connections over several URLs (its README), though its types say one. */
    const origins = () => instances.map((i) => i.origin) as unknown as string;
    /** Pending payments this bench created and has not paid: read and streamed. */
    const pending: string[] = [];
    const created = (status: number, body: string) => {
      if (status !== 201) return;
      try {
        pending.push((JSON.parse(body) as { reference: string }).reference);
      } catch {
        // counted as a failure by autocannon's status anyway
      }
    };
    /** Payments created one by one, 16 at once, when the phases need more than were made. */
    const createMore = async (count: number) => {
      let left = count;
      const worker = async (origin: string) => {
        while (left-- > 0) {
          const res = await fetch(`${origin}/api/payments`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"value":1.5}' });
          created(res.status, await res.text());
        }
      };
      await Promise.all(Array.from({ length: 16 }, (_, i) => worker(instances[i % instances.length]!.origin)));
    };
    const creates = (duration: number) =>
      autocannon({
        url: origins(),
        connections: createConnections,
        duration,
        requests: [{ method: 'POST', path: '/api/payments', headers: { 'content-type': 'application/json' }, body: '{"value":1.5}', onResponse: created }],
      });

    // The partner's notifications reach the instances in turn, through this forwarder, as a balancer
    // would spread them: each instance judges the webhooks' health from those it receives.
    /** Notifications forwarded to each instance (by index). */
    const heard: number[] = [];
    let turn = 0;
    const spreader = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const index = turn++ % instances.length;
        heard[index] = (heard[index] ?? 0) + 1;
        const port = Number(new URL(instances[index]!.origin).port);
        const headers = { ...req.headers, host: `127.0.0.1:${port}` };
        const upstream = request({ host: '127.0.0.1', port, method: req.method, path: req.url, headers, agent: forwardAgent }, (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        });
        upstream.on('error', () => {
          if (!res.headersSent) res.writeHead(502).end();
        });
        upstream.end(Buffer.concat(chunks));
      });
    });
    forwarder = spreader;
    await new Promise<void>((resolve) => spreader.listen(0, '127.0.0.1', resolve));
    const forwarderUrl = `http://127.0.0.1:${(spreader.address() as AddressInfo).port}`;
    const setNotificationUrl = async () => {
      await setSandboxNotificationUrl(sandbox, USER_AGENT, `${forwarderUrl}/api${WEBHOOK_PATH}`);
    };

    /** One status stream as a raw socket (an HTTP parser per stream here would cost more than the server's side). */
    const openStream = (origin: string, reference: string) => {
      const target = new URL(origin);
      let pendingSeen: () => void = () => {};
      let failed: (error: Error) => void = () => {};
      const stream = {
        paidAt: NaN,
        paid: null as null | (() => void),
        ready: new Promise<void>((resolve, reject) => {
          pendingSeen = resolve;
          failed = reject;
        }),
        socket: connect(Number(target.port), target.hostname),
      };
      const { socket } = stream;
      socket.on('connect', () => socket.write(`GET /api/payments/${reference}/events HTTP/1.1\r\nHost: ${target.host}\r\nAccept: text/event-stream\r\n\r\n`));
      socket.setEncoding('utf8');
      let head = '';
      socket.on('data', (chunk: string) => {
        if (head.length < 4096) {
          head += chunk;
          if (head.length >= 12 && !head.startsWith('HTTP/1.1 200')) return failed(new Error(`stream of ${reference}: ${head.split('\r\n')[0]}`));
          if (head.includes('"pending"')) pendingSeen();
        }
        if (Number.isNaN(stream.paidAt) && chunk.includes('"paid"')) {
          stream.paidAt = performance.now();
          stream.paid?.();
        }
      });
      socket.on('error', (error) => failed(error));
      sockets.add(socket);
      return stream;
    };

    const mb = (bytes: number) => Math.round(bytes / 1024 / 1024);
    const percentile = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!;

    interface Row {
      instances: number;
      creates: autocannon.Result;
      createsCpu: Share;
      reads: autocannon.Result;
      readsCpu: Share;
      streams: number;
      streamKb: number;
      holdCpu: Share;
      payToStream: number[];
      missed: number;
      pgClients: number;
      pgAll: number;
      rssIdle: number[];
      rssHeld: number[];
      /** Each instance's partner read pace while the streams were held (/ready's `reads.mode`). */
      paces: string[];
    }
    const rows: Row[] = [];
    const loadAtStart = loadavg().map((n) => n.toFixed(2));
    const startedAt = performance.now();

    for (const count of instanceCounts) {
      while (instances.length < count) await startInstance(instances.length);
      if (count === instanceCounts[0]) await setNotificationUrl();
      peakConnections = 0;
      peakAll = 0;
      process.stderr.write(`capacity: ${count} instance(s): creates...\n`);
      // Warm-up (not counted): JIT, pools opened, partner tokens fetched on every instance.
      await creates(Math.min(2, seconds));
      const rssIdle = instances.map(({ child }) => rssBytes(child.pid!));

      let before = cpuNow();
      const createResult = await creates(seconds);
      const createsCpu = cpuShare(before, cpuNow());
      check(`creates with ${count} instance(s)`, createResult);

      process.stderr.write(`capacity: ${count} instance(s): reads...\n`);
      if (pending.length < READ_PAYMENTS) await createMore(READ_PAYMENTS - pending.length);
      const readPaths = pending.slice(-READ_PAYMENTS).map((reference) => ({ method: 'GET' as const, path: `/api/payments/${reference}` }));
      await autocannon({ url: origins(), connections: readConnections, duration: Math.min(2, seconds), requests: readPaths });
      before = cpuNow();
      const readResult = await autocannon({ url: origins(), connections: readConnections, duration: seconds, requests: readPaths });
      const readsCpu = cpuShare(before, cpuNow());
      check(`reads with ${count} instance(s)`, readResult);

      // Streams: one per payment, spread over the instances, opened in batches as pages arrive.
      const wanted = streamsPerInstance * count;
      process.stderr.write(`capacity: ${count} instance(s): ${wanted} streams...\n`);
      // A few more than streamed: paid first, so that every instance hears a notification.
      if (pending.length < wanted + 3 * count) await createMore(wanted + 3 * count - pending.length);
      const references = pending.slice(-wanted);
      for (let tries = 0; tries < 3 * count && instances.some((_, i) => !heard[i]); tries++) {
        const reference = pending.shift()!;
        const forwarded = () => heard.reduce((sum, n) => sum + (n ?? 0), 0);
        const sent = forwarded();
        if (!(await pay(reference))) throw new Error(`the sandbox would not pay ${reference}`);
        for (let waited = 0; waited < 40 && forwarded() === sent; waited++) await sleep(50);
      }
      const rssBefore = instances.map(({ child }) => rssBytes(child.pid!));
      const streams: ReturnType<typeof openStream>[] = [];
      for (let i = 0; i < references.length; i += 250) {
        const batch = references.slice(i, i + 250).map((reference, j) => openStream(instances[(i + j) % count]!.origin, reference));
        streams.push(...batch);
        await Promise.all(batch.map((stream) => stream.ready));
      }
      before = cpuNow();
      await sleep(holdSeconds * 1000);
      const holdCpu = cpuShare(before, cpuNow());
      const rssHeld = instances.map(({ child }) => rssBytes(child.pid!));
      const paces = await Promise.all(
        instances.map(async ({ origin }) => {
          try {
            return ((await (await fetch(`${origin}/ready`)).json()) as { reads?: { mode?: string } }).reads?.mode ?? '?';
          } catch {
            return '?';
          }
        }),
      );
      const perStreamKb = streams.length === 0 ? NaN : rssHeld.reduce((sum, rss, i) => sum + (rss - rssBefore[i]!), 0) / streams.length / 1024;
      // Paid one at a time, spread over the instances the streams are on: pay -> `paid` on its stream.
      const payToStream: number[] = [];
      let missed = 0;
      const sample = Math.min(pays, streams.length);
      for (let k = 0; k < sample; k++) {
        const index = Math.floor((k * streams.length) / sample);
        const stream = streams[index]!;
        const reference = references[index]!;
        const arrived = new Promise<boolean>((resolve) => {
          const timer = setTimeout(() => resolve(false), 10_000);
          stream.paid = () => {
            clearTimeout(timer);
            resolve(true);
          };
        });
        const paying = performance.now();
        if (!(await pay(reference))) throw new Error(`the sandbox would not pay ${reference}`);
        if (await arrived) payToStream.push(stream.paidAt - paying);
        else missed++;
        pending.splice(pending.indexOf(reference), 1);
      }
      for (const stream of streams) {
        stream.socket.destroy();
        sockets.delete(stream.socket);
      }
      // The instances' side of the closed streams gone before the next count starts.
      await sleep(1000);
      rows.push({
        instances: count,
        creates: createResult,
        createsCpu,
        reads: readResult,
        readsCpu,
        streams: streams.length,
        streamKb: perStreamKb,
        holdCpu,
        payToStream: payToStream.sort((a, b) => a - b),
        missed,
        pgClients: peakConnections,
        pgAll: peakAll,
        rssIdle,
        rssHeld,
        paces,
      });
    }
    clearInterval(sampling);
    const totalSeconds = (performance.now() - startedAt) / 1000;

    // --- The report ------------------------------------------------------------------------------------

    const cpu = cpus()[0]?.model.trim() ?? 'unknown CPU';
    console.log(
      `\ncapacity over one Postgres, ${process.version}, ${cores} CPUs (${cpu}), ${mb(totalmem())} MB RAM, load average at start ${loadAtStart.join(', ')}`,
    );
    console.log(
      pinned
        ? `load generator (autocannon, streams) pinned to CPU 0; instances, sandbox and Postgres share CPU${serverCores > 1 ? 's' : ''} ${serverCpus}`
        : 'not pinned to CPUs (BENCH_PIN=0, fewer than 2 CPUs, or no taskset): every process shares every core',
    );
    console.log(
      `pool: PIX_DATABASE_POOL_SIZE=${poolSize} per instance (+1 listening connection each); Postgres max_connections=${maxConnections}; ` +
        `creates ${createConnections} connections, reads ${readConnections} connections over ${READ_PAYMENTS} pending payments, ${seconds} s each; ` +
        `streams one per payment, ${streamsPerInstance} per instance${streamsPerInstance < wantedStreams ? ` (not ${wantedStreams}: ulimit -n is ${fdLimit})` : ''}, held ${holdSeconds} s, ${pays} paid one at a time`,
    );
    const ms = (n: number | undefined) => (n === undefined || Number.isNaN(n) ? '-' : n < 10 ? n.toFixed(1) : Math.round(n).toString());
    console.table(
      rows.map((r) => ({
        instances: r.instances,
        'creates/s': Math.round(r.creates.requests.average),
        'create p50/p99 ms': `${ms(r.creates.latency.p50)}/${ms(r.creates.latency.p99)}`,
        'reads/s': Math.round(r.reads.requests.average),
        'read p50/p99 ms': `${ms(r.reads.latency.p50)}/${ms(r.reads.latency.p99)}`,
        'streams held': r.streams,
        'KB/stream': ms(r.streamKb),
        'pay->stream p50/p99 ms':
          r.payToStream.length === 0
            ? '-'
            : `${ms(percentile(r.payToStream, 0.5))}/${ms(percentile(r.payToStream, 0.99))}${r.missed ? ` (${r.missed} missed)` : ''}`,
        'PG conns': `${r.pgClients} (${r.pgAll} all)`,
        'RSS/instance MB': r.rssHeld.map(mb).join('/'),
        'read pace': r.paces.join('/'),
        'creates limit': limitOf(r.createsCpu).short,
        'reads limit': limitOf(r.readsCpu).short,
      })),
    );
    console.log("PG conns: most client backends seen in pg_stat_activity (all: every row, background processes included), this bench's own left out.");
    console.log(
      `read pace: each instance's partner reads while the streams were held (/ready's reads.mode): webhooks, a watched payment asked about every 10 s; polling, every 2 s. Each instance judges the notifications it receives; the partner's are spread over the instances in turn here, and before holding, payments were paid until each had heard one (notifications per instance over the run: ${heard.map((n) => n ?? 0).join('/')}).`,
    );
    console.log("limits: the CPU table below says why (a noisy run when other processes took the servers' CPU).");
    console.log('RSS/instance: with the streams held (idle after warm-up: ' + rows.map((r) => r.rssIdle.map(mb).join('/')).join('; ') + ' MB).');
    console.log(
      `\nCPU per phase, % of one core for each process; "server CPUs" is how busy CPU${serverCpuList.length > 1 ? 's' : ''} ${serverCpuList.join(',')} were, whoever used them:`,
    );
    const names = [...instances.map((i) => i.name), 'sandbox', 'Postgres', 'load generator'];
    console.table(
      rows.flatMap((r) =>
        (
          [
            ['creates', r.createsCpu],
            ['reads', r.readsCpu],
            ['streams held', r.holdCpu],
          ] as const
        ).map(([phase, share]) => ({
          instances: r.instances,
          phase,
          ...Object.fromEntries(
            names.map((name) => [name.replace('instance ', 'inst ').replace('load generator', 'loadgen'), share.processes.get(name) ?? '']),
          ),
          'server CPUs %': share.serverCpusBusy,
          limit: limitOf(share).long,
        })),
      ),
    );
    const failures = rows.reduce((n, r) => n + r.creates.non2xx + r.creates.errors + r.reads.non2xx + r.reads.errors, 0);
    console.log(
      `failed requests (non-2xx or errors) over every phase: ${failures}; run took ${totalSeconds.toFixed(0)} s; load average at end ${loadavg()
        .map((n) => n.toFixed(2))
        .join(', ')}`,
    );
  } finally {
    await cleanUp();
  }
}
