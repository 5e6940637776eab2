/**
 * Status reads served from the store, under autocannon on loopback, next to a bare node:http server
 * answering the same bytes (the proxy's headers and JSON) in the same run. Prints requests per second, p99 and the ratio
 * for each round, and their median, min and max.
 * `npm run bench:status` (BENCH_ROUNDS, default 5, each measuring the bare server then the proxy for
 * BENCH_SECONDS, default 4; BENCH_CONNECTIONS, default 100; BENCH_PROFILE=dir
 * writes a CPU profile of the server process there, `node --cpu-prof`; BENCH_STORE=postgres keeps the
 * store in a throwaway Postgres started by the server process, instead of SQLite; BENCH_LOG_LEVEL,
 * default info as in production, with the proxy's log lines going to /dev/null; BENCH_BARE=minimal
 * gives the bare server two headers instead of the proxy's answer headers, as the first figures had).
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
import { pinApart } from './pin.ts';

const seconds = Number(process.env.BENCH_SECONDS ?? 4);
const roundCount = Number(process.env.BENCH_ROUNDS ?? 5);
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
  const answer = await fetch(statusUrl);
  const sample = await answer.text();
  // The proxy's answer headers (security set, CORS, no-store), but for the ones Node writes itself.
  const perConnection = new Set(['date', 'connection', 'keep-alive', 'content-length', 'transfer-encoding']);
  const sameHeaders = Object.fromEntries([...answer.headers].filter(([name]) => !perConnection.has(name)));
  // BENCH_BARE=minimal: the earlier baseline, two headers only (content-type and cache-control).
  const bareHeaders = process.env.BENCH_BARE === 'minimal' ? { 'content-type': 'application/json', 'cache-control': 'no-store' } : sameHeaders;

  // The baseline: the same bytes (status line, headers and body), no routing, no store, no
  // validation, no log line. The first figures used a bare server with two headers; the
  // proxy's fourteen others are part of its answer, so they are part of the baseline's too.
  const bare = createServer((_req, res) => {
    res.writeHead(200, bareHeaders);
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
  // A core each: see bench/pin.ts.
  const pinned = pinApart(child.pid!);

  async function run(url: string) {
    const result = await autocannon({ url, connections, duration: seconds, pipelining: 1 });
    if (result.non2xx > 0 || result.errors > 0) throw new Error(`${url}: ${result.non2xx} non-2xx, ${result.errors} errors`);
    return { rps: result.requests.average, p50: result.latency.p50, p99: result.latency.p99, total: result.requests.total };
  }

  // Warm both up, then measure the bare server and the proxy in turn, ROUNDS times, under the same
  // conditions: each round's ratio compares two runs seconds apart, and the spread shows the noise.
  await autocannon({ url: bareUrl, connections, duration: 2 });
  await autocannon({ url: statusUrl, connections, duration: 2 });
  const rounds: { bare: Awaited<ReturnType<typeof run>>; proxy: Awaited<ReturnType<typeof run>>; calls: number }[] = [];
  for (let round = 0; round < roundCount; round++) {
    const bare = await run(bareUrl);
    await ask('reset');
    const proxy = await run(statusUrl);
    const { upstreamCalls } = (await ask('calls')) as { upstreamCalls: number };
    rounds.push({ bare, proxy, calls: upstreamCalls });
  }

  console.log(
    `status reads, store ${storeKind === 'postgres' ? 'Postgres' : 'SQLite'}, ${connections} connections, ${roundCount} rounds of ${seconds} s each, loopback, ${process.version}; bare server sending ${process.env.BENCH_BARE === 'minimal' ? 'two headers' : "the proxy's headers"}; servers in one child process, autocannon in another${pinned ? ', each pinned to a core of its own' : ', not pinned to cores'}; proxy logging at ${logLevel}`,
  );
  console.table(
    Object.fromEntries(
      rounds.map(({ bare, proxy }, i) => [
        `round ${i + 1}`,
        {
          'bare req/s': Math.round(bare.rps),
          'bare p99 ms': bare.p99,
          'proxy req/s': Math.round(proxy.rps),
          'proxy p50 ms': proxy.p50,
          'proxy p99 ms': proxy.p99,
          ratio: Number((proxy.rps / bare.rps).toFixed(2)),
          'p99 x bare': Number((proxy.p99 / bare.p99).toFixed(2)),
        },
      ]),
    ),
  );
  const spread = (xs: number[], digits = 0) => {
    const sorted = [...xs].sort((a, b) => a - b);
    const f = (x: number) => x.toFixed(digits);
    return `median ${f(sorted[Math.floor(sorted.length / 2)]!)} (min ${f(sorted[0]!)}, max ${f(sorted.at(-1)!)})`;
  };
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  const ratios = rounds.map((r) => r.proxy.rps / r.bare.rps);
  const p99s = rounds.map((r) => r.proxy.p99 / r.bare.p99);
  console.log(`bare req/s  ${spread(rounds.map((r) => r.bare.rps))}`);
  console.log(`proxy req/s ${spread(rounds.map((r) => r.proxy.rps))}`);
  console.log(`ratio proxy/bare: ${spread(ratios, 2)}; goal >= 0.7: ${median(ratios) >= 0.7 ? 'met' : 'not met'}`);
  console.log(`proxy p99 / bare p99: ${spread(p99s, 2)}; goal <= 1.5x: ${median(p99s) <= 1.5 ? 'met' : 'not met'}`);
  const calls = rounds.reduce((sum, r) => sum + r.calls, 0);
  console.log(
    `upstream status calls during the proxy runs: ${calls} in ${roundCount * seconds} s (${(calls / (roundCount * seconds)).toFixed(2)}/s; the one payment is pending, and its stored status is served while fresh)`,
  );

  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.send('stop');
  await exited;
}
