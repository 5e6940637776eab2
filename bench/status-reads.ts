/**
 * Status reads served from the store, under autocannon on loopback, next to a bare node:http server
 * answering the same JSON in the same run. Prints requests per second, p99 and the ratio.
 * `npm run bench:status` (BENCH_SECONDS, default 10; BENCH_CONNECTIONS, default 100; BENCH_PROFILE=dir
 * writes a CPU profile of the server process there, `node --cpu-prof`; BENCH_STORE=postgres keeps the
 * store in a throwaway Postgres started by the server process, instead of SQLite; BENCH_LOG_LEVEL,
 * default info as in production, with the proxy's log lines going to /dev/null).
 *
 * Fair on a small machine: both servers live in one child process (the proxy with its whole dev stack,
 * and the bare server next to it, idle while the other is measured), and the load generator runs in
 * this process, on its own core. Both are measured the same way, one after the other.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';

const seconds = Number(process.env.BENCH_SECONDS ?? 10);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 100);
const storeKind = process.env.BENCH_STORE ?? 'sqlite';
if (storeKind !== 'sqlite' && storeKind !== 'postgres') {
  console.error(`BENCH_STORE must be sqlite or postgres, not ${storeKind}`);
  process.exit(2);
}

const logLevel = (process.env.BENCH_LOG_LEVEL ?? 'info') as 'info' | 'warn' | 'silent';

type FromServer = { bareUrl: string; statusUrl: string } | { upstreamCalls: number };

if (process.argv[2] === '--server') {
  const { startDevStack } = await import('../server/dev-stack.ts');
  const { createLogger } = await import('../server/log.ts');
  // BENCH_STORE=postgres: a throwaway Postgres in this process's care, stopped on exit (startPostgres's own hook too).
  const postgres = storeKind === 'postgres' ? await (await import('../test/support/postgres.ts')).startPostgres() : null;
  const databaseUrl = postgres ? await postgres.createDatabase() : undefined;
  // Logging as in production (BENCH_LOG_LEVEL, default info: one line per request), to this
  // process's stdout, which the parent sends to /dev/null as a log pipe would take it.
  const stack = await startDevStack({ databaseUrl, logger: createLogger({ level: logLevel }) });
  const created = await fetch(`${stack.apiUrl}/payments`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"value":25}' });
  const view = (await created.json()) as { reference: string };
  const statusUrl = `${stack.apiUrl}/payments/${view.reference}`;
  const sample = await (await fetch(statusUrl)).text();

  // The baseline: the same bytes, no routing, no store, no validation.
  const bare = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'no-store' });
    res.end(sample);
  });
  await new Promise<void>((resolve) => bare.listen(0, '127.0.0.1', resolve));
  const bareUrl = `http://127.0.0.1:${(bare.address() as AddressInfo).port}/`;

  let upstreamCalls = 0;
  const getPayment = stack.partner.getPayment.bind(stack.partner);
  stack.partner.getPayment = (reference) => {
    upstreamCalls++;
    return getPayment(reference);
  };
  process.on(
    'message',
    (message: string) =>
      void (async () => {
        if (message === 'reset') {
          upstreamCalls = 0;
          process.send!({ upstreamCalls });
        } else if (message === 'calls') {
          process.send!({ upstreamCalls });
        } else if (message === 'stop') {
          bare.close();
          await stack.close();
          await postgres?.stop();
          process.exit(0);
        }
      })(),
  );
  // The parent gone (it failed): no orphaned server, no orphaned Postgres.
  process.on('disconnect', () => void stack.close().finally(() => void postgres?.stop().finally(() => process.exit(1))));
  process.send!({ bareUrl, statusUrl } satisfies FromServer);
} else {
  const profileDir = process.env.BENCH_PROFILE;
  const execArgv = ['--import', 'tsx', ...(profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : [])];
  const child: ChildProcess = fork(fileURLToPath(import.meta.url), ['--server'], { execArgv, stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
  const next = () => new Promise<FromServer>((resolve) => child.once('message', (m) => resolve(m as FromServer)));
  const ask = (message: string) => {
    const answer = next();
    child.send(message);
    return answer;
  };
  const { bareUrl, statusUrl } = (await next()) as { bareUrl: string; statusUrl: string };

  async function run(url: string) {
    const result = await autocannon({ url, connections, duration: seconds, pipelining: 1 });
    if (result.non2xx > 0 || result.errors > 0) throw new Error(`${url}: ${result.non2xx} non-2xx, ${result.errors} errors`);
    return { rps: result.requests.average, p50: result.latency.p50, p99: result.latency.p99, total: result.requests.total };
  }

  // Warm both up, then measure the bare server and the proxy in turn, under the same conditions.
  await autocannon({ url: bareUrl, connections, duration: 2 });
  await autocannon({ url: statusUrl, connections, duration: 2 });
  const baseline = await run(bareUrl);
  await ask('reset');
  const proxy = await run(statusUrl);
  const { upstreamCalls } = (await ask('calls')) as { upstreamCalls: number };

  console.log(
    `status reads, store ${storeKind === 'postgres' ? 'Postgres' : 'SQLite'}, ${connections} connections, ${seconds} s each, loopback, ${process.version}; servers in one child process, autocannon in another`,
  );
  console.table({
    'bare node:http': { 'req/s': Math.round(baseline.rps), 'p50 ms': baseline.p50, 'p99 ms': baseline.p99, requests: baseline.total },
    'proxy (store)': { 'req/s': Math.round(proxy.rps), 'p50 ms': proxy.p50, 'p99 ms': proxy.p99, requests: proxy.total },
  });
  console.log(
    `ratio proxy/bare: ${(proxy.rps / baseline.rps).toFixed(2)} (goal >= 0.7); proxy p99 ${proxy.p99} ms = ${(proxy.p99 / baseline.p99).toFixed(2)}x the bare server's (goal <= 1.5x); proxy logging at ${logLevel}`,
  );
  console.log(
    `upstream status calls during the proxy run: ${upstreamCalls} (${(upstreamCalls / seconds).toFixed(2)}/s; a read is refreshed when older than 2 s)`,
  );

  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.send('stop');
  await exited;
}
