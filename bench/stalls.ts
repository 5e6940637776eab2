/**
 * Stalls and outages: two proxy instances, child processes over one throwaway Postgres, the
 * sandbox in this process, a round-robin front (test/support/cluster-harness.ts) that customers and
 * the partner's notifications go through, a customer every 250 ms (a checkout, then its payment, paid
 * at the sandbox half the time), and each instance's `/ready` probed every 100 ms. Through three faults
 * in a row, each after a calm spell:
 *   lock   `LOCK TABLE payments IN ACCESS EXCLUSIVE MODE` held 25 s from another connection;
 *   freeze SIGSTOP of the Postgres server and its backends for 5 s;
 *   stop   `pg_ctl stop` for 10 s, then started again.
 * Printed per fault: the longest a customer request waited, the answers by status, and each instance's
 * `/ready` lag to 503 after the fault's start and to 200 after its end. At the end: payments created at
 * the sandbox, recorded in the store, logged at error by reference (not recorded), and neither.
 * `npm run bench:stalls` (BENCH_LOCK_MS, default 25000).
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { WEBHOOK_PATH } from '../server/routes/webhooks.ts';
import { startSandbox, type RunningSandbox } from '../server/sandbox/server.ts';
import { LIMITS_OFF, proxyEnv, setSandboxNotificationUrl, startFront, type Front, type ProxyInstance } from '../test/support/cluster-harness.ts';
import { spawnProxy, untilHealthy } from '../test/support/proxy-process.ts';
import { startPostgres, type RunningPostgres } from '../test/support/postgres.ts';
import { freePort } from '../test/support/ports.ts';

const LOCK_MS = Number(process.env.BENCH_LOCK_MS ?? 25_000);
const FREEZE_MS = 5000;
const STOP_MS = 10_000;
const CALM_MS = 6000;
const API_KEY = 'stalls-bench-key-0123456789abcdef0123456789';
const USER_AGENT = 'Stalls Bench (dev@loja.example)';
const now = () => performance.now();

interface LogLine {
  level: number;
  msg: string;
  reference?: string;
  transaction_id?: string;
}

const children: ChildProcess[] = [];
let postgres: RunningPostgres | null = null;
let sandbox: RunningSandbox | null = null;
let front: Front | null = null;
let dir: string | null = null;

async function cleanUp(): Promise<void> {
  await Promise.all(
    children
      .filter((c) => c.exitCode === null && c.signalCode === null)
      .map(async (child) => {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 8000);
        await exited;
        clearTimeout(timer);
      }),
  );
  await front?.close();
  await sandbox?.close();
  postgres?.thaw();
  await postgres?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
}

/** One instance: a child process whose JSON log lines are kept. */
async function startInstance(name: string, env: Record<string, string | undefined>) {
  const port = await freePort();
  const lines: LogLine[] = [];
  const child = spawnProxy(port, env, (line) => {
    try {
      lines.push(JSON.parse(line) as LogLine);
    } catch {
      process.stderr.write(`[${name}] ${line}\n`);
    }
  });
  children.push(child);
  const origin = `http://127.0.0.1:${port}`;
  await untilHealthy(name, origin, child);
  return { name, port, origin, lines };
}

/** Each instance's /ready, every 100 ms: the answers with when they came back. */
function probeReady(instances: { name: string; origin: string }[]) {
  const seen = new Map<string, { at: number; status: number }[]>(instances.map((i) => [i.name, []]));
  let stopped = false;
  const loops = instances.map(async (instance) => {
    while (!stopped) {
      let status: number;
      try {
        status = (await fetch(`${instance.origin}/ready`, { signal: AbortSignal.timeout(5000) })).status;
      } catch {
        status = 0;
      }
      seen.get(instance.name)!.push({ at: now(), status });
      await sleep(100);
    }
  });
  return {
    /** The first answer at or after `from` that is `status` (not 200 for 503: any failure), in ms after `from`. */
    lag(name: string, from: number, status: 200 | 503): number | null {
      const hit = seen.get(name)!.find((s) => s.at >= from && (status === 200 ? s.status === 200 : s.status !== 200));
      return hit ? Math.round(hit.at - from) : null;
    },
    async stop() {
      stopped = true;
      await Promise.all(loops);
    },
  };
}

interface RequestResult {
  startedAt: number;
  ms: number;
  status: number;
  kind: 'checkout' | 'payment';
}

async function main(): Promise<void> {
  console.log(
    `load average at start: ${loadavg()
      .map((n) => n.toFixed(2))
      .join(', ')}`,
  );
  [postgres, sandbox] = await Promise.all([startPostgres(), startSandbox()]);
  const databaseUrl = await postgres.createDatabase();
  dir = mkdtempSync(join(tmpdir(), 'pix-stalls-bench-'));
  writeFileSync(join(dir, 'ca.pem'), sandbox.ca);
  const env = {
    ...proxyEnv(sandbox.url, dir, USER_AGENT, API_KEY),
    ...LIMITS_OFF,
    PIX_DATABASE_URL: databaseUrl,
    PIX_LOG_LEVEL: 'info',
    PIX_WEBHOOK_SOURCE_IPS: '127.0.0.1',
  };
  const a = await startInstance('A', env);
  const b = await startInstance('B', env);
  const instances = [a, b];
  front = await startFront([a, b] as unknown as ProxyInstance[]);
  await setSandboxNotificationUrl(sandbox, USER_AGENT, `${front.url}/api${WEBHOOK_PATH}`);

  const probes = probeReady(instances);
  const results: RequestResult[] = [];
  const merchant = { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json' };
  /** One customer request, timed to its whole answer (the body read); the caller reads the body from `json`. */
  const timedFetch = async (url: string, init: RequestInit, kind: RequestResult['kind']): Promise<{ status: number; json: () => Promise<unknown> } | null> => {
    const startedAt = now();
    try {
      const res = await fetch(url, { ...init, signal: AbortSignal.timeout(30_000) });
      const text = await res.text();
      results.push({ startedAt, ms: now() - startedAt, status: res.status, kind });
      return { status: res.status, json: async () => JSON.parse(text) as unknown };
    } catch {
      results.push({ startedAt, ms: now() - startedAt, status: 0, kind });
      return null;
    }
  };
  let customers = 0;
  let running = true;
  const customerLoop = (async () => {
    const inFlight = new Set<Promise<void>>();
    while (running) {
      const n = ++customers;
      const one = (async () => {
        const res0 = await timedFetch(
          `${front.url}/api/checkouts`,
          { method: 'POST', headers: merchant, body: JSON.stringify({ value: 10, order_id: `bench-${n}` }) },
          'checkout',
        );
        const created = res0?.status === 201 ? ((await res0.json()) as { checkout_id: string }).checkout_id : null;
        if (!created) return;
        const res = await timedFetch(`${front.url}/api/checkouts/${created}/payment`, { method: 'POST' }, 'payment');
        if (res?.status === 201 && n % 2 === 0) {
          // Paid half the time, a little later, at the customer's bank.
          const view = (await fetch(`${front.url}/api/checkouts/${created}`, { headers: merchant }).then((r) => r.json())) as {
            payment?: { reference: string };
          };
          if (view.payment)
            await Promise.resolve(sandbox.publicApp.request(`/_sandbox/payments/${view.payment.reference}/pay`, { method: 'POST' })).catch(() => undefined);
        }
      })();
      inFlight.add(one);
      void one.finally(() => inFlight.delete(one));
      await sleep(250);
    }
    await Promise.all(inFlight);
  })();

  const faults: { name: string; start: number; end: number }[] = [];
  const during = async (name: string, begin: () => Promise<void> | void, holdMs: number, end: () => Promise<void> | void) => {
    await sleep(CALM_MS);
    const start = now();
    await begin();
    await sleep(holdMs);
    await end();
    faults.push({ name, start, end: now() });
  };

  const locker = new pg.Client({ connectionString: databaseUrl });
  await locker.connect();
  await during(
    `lock (ACCESS EXCLUSIVE on payments, ${LOCK_MS / 1000} s)`,
    async () => {
      await locker.query('BEGIN');
      await locker.query('LOCK TABLE payments IN ACCESS EXCLUSIVE MODE');
    },
    LOCK_MS,
    async () => void (await locker.query('ROLLBACK')),
  );
  await locker.end();
  await during(
    `freeze (SIGSTOP, ${FREEZE_MS / 1000} s)`,
    () => postgres!.freeze(),
    FREEZE_MS,
    () => postgres!.thaw(),
  );
  await during(
    `stop (pg_ctl stop, ${STOP_MS / 1000} s)`,
    () => postgres!.pause(),
    STOP_MS,
    () => postgres!.resume(),
  );
  await sleep(CALM_MS * 2);
  running = false;
  await customerLoop;
  await probes.stop();
  // Time for the instances' keepers to record what they kept (their retry backs off to 30 s).
  await sleep(2000);

  console.log(
    `\ncustomers: ${customers}, requests: ${results.length}; longest wait outside the faults ${Math.round(Math.max(0, ...results.filter((r) => !faults.some((f) => r.startedAt >= f.start - 500 && r.startedAt <= f.end)).map((r) => r.ms)))} ms`,
  );
  for (const fault of faults) {
    console.log(`\n${fault.name}`);
    for (const kind of ['checkout', 'payment'] as const) {
      const inside = results.filter((r) => r.kind === kind && r.startedAt >= fault.start - 500 && r.startedAt <= fault.end);
      const statuses = new Map<number, number>();
      for (const r of inside) statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
      const longest = Math.max(0, ...inside.map((r) => r.ms));
      console.log(`  ${kind} requests: ${inside.length} (${[...statuses].map(([s, n]) => `${s}: ${n}`).join(', ')}); longest wait ${Math.round(longest)} ms`);
    }
    for (const instance of instances) {
      console.log(
        `  /ready on ${instance.name}: 503 ${probes.lag(instance.name, fault.start, 503) ?? 'never'} ms after the start, 200 ${probes.lag(instance.name, fault.end, 200) ?? 'never'} ms after the end`,
      );
    }
  }

  // Every payment the partner created: in the store, or logged at error by reference (and transaction id), or neither.
  const store = new pg.Client({ connectionString: databaseUrl });
  await store.connect();
  const stored = new Set((await store.query<{ reference: string }>('SELECT reference FROM payments')).rows.map((r) => r.reference));
  const unrecordedIntents = (
    await store.query<{ n: string }>(
      'SELECT count(*) AS n FROM payment_intents i WHERE NOT EXISTS (SELECT 1 FROM payments p WHERE p.transaction_id = i.transaction_id)',
    )
  ).rows[0]!.n;
  await store.end();
  const logged = new Map<string, string | undefined>();
  for (const instance of instances) for (const line of instance.lines) if (line.level >= 50 && line.reference) logged.set(line.reference, line.transaction_id);
  const atPartner = [...sandbox.state.payments.keys()];
  const notStored = atPartner.filter((r) => !stored.has(r));
  const neither = notStored.filter((r) => !logged.has(r));
  console.log(
    `\npayments created at the partner: ${atPartner.length}; in the store: ${atPartner.length - notStored.length}; not in the store: ${notStored.length} (logged at error by reference: ${notStored.length - neither.length}); neither: ${neither.length}`,
  );
  console.log(`kept while the store could not take them, then recorded: ${[...logged.keys()].filter((r) => stored.has(r)).length}`);
  console.log(`intents without a payment (pix-checkout unrecorded would list them; creates that failed at the partner included): ${unrecordedIntents}`);
  const errorLines = instances.map((i) => `${i.name}: ${i.lines.filter((l) => l.level >= 50).length}`).join(', ');
  console.log(`error lines per instance: ${errorLines}`);
  for (const instance of instances) {
    const counts = new Map<string, number>();
    for (const l of instance.lines.filter((line) => line.level >= 50)) counts.set(l.msg.slice(0, 70), (counts.get(l.msg.slice(0, 70)) ?? 0) + 1);
    console.log(`  ${instance.name}: ${[...counts].map(([m, n]) => `${n} × ${m}`).join('\n     ')}`);
  }
  console.log(
    `load average at end: ${loadavg()
      .map((n) => n.toFixed(2))
      .join(', ')}`,
  );
}

try {
  await main();
} finally {
  await cleanUp();
}
