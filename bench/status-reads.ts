/**
 * Status reads served from the store, under autocannon on loopback, next to a bare node:http server
 * answering the same JSON in the same run. Prints requests per second, p99 and the ratio.
 * `npm run bench:status` (BENCH_SECONDS, default 10; BENCH_CONNECTIONS, default 100).
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import autocannon from 'autocannon';
import { startDevStack } from '../server/dev.ts';
import { createLogger } from '../server/log.ts';

const seconds = Number(process.env.BENCH_SECONDS ?? 10);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 100);

// Request lines off (level warn): the figure is the proxy's own cost, not stdout's.
const stack = await startDevStack({ logger: createLogger({ level: 'warn' }) });
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
const getPayment = stack.partner.getPayment;
stack.partner.getPayment = (reference) => {
  upstreamCalls++;
  return getPayment(reference);
};

async function run(url: string) {
  // The load generator in a worker thread: on 2 cores, one for it and one for the server.
  const result = await autocannon({ url, connections, duration: seconds, pipelining: 1, workers: 1 });
  if (result.non2xx > 0 || result.errors > 0) throw new Error(`${url}: ${result.non2xx} non-2xx, ${result.errors} errors`);
  return { rps: result.requests.average, p50: result.latency.p50, p99: result.latency.p99, total: result.requests.total };
}

// Warm both up, then measure the bare server and the proxy in turn.
await autocannon({ url: bareUrl, connections, duration: 2, workers: 1 });
await autocannon({ url: statusUrl, connections, duration: 2, workers: 1 });
const baseline = await run(bareUrl);
upstreamCalls = 0;
const proxy = await run(statusUrl);

console.log(`status reads, ${connections} connections, ${seconds} s each, loopback, ${process.version}`);
console.table({
  'bare node:http': { 'req/s': Math.round(baseline.rps), 'p50 ms': baseline.p50, 'p99 ms': baseline.p99, requests: baseline.total },
  'proxy (store)': { 'req/s': Math.round(proxy.rps), 'p50 ms': proxy.p50, 'p99 ms': proxy.p99, requests: proxy.total },
});
console.log(`ratio proxy/bare: ${(proxy.rps / baseline.rps).toFixed(2)} (goal >= 0.5); proxy p99 ${proxy.p99} ms (goal < 10 ms)`);
console.log(`upstream status calls during the proxy run: ${upstreamCalls} (${(upstreamCalls / seconds).toFixed(2)}/s; a read is refreshed when older than 2 s)`);

bare.close();
await stack.close();
