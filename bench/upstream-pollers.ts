/**
 * 1,000 browsers polling one pending payment (each every second, jittered, keep-alive): how many
 * status calls reach the partner service per second. `npm run bench:upstream` (BENCH_SECONDS, default
 * 15; BENCH_POLLERS, default 1000).
 */
import { Agent, get } from 'node:http';
import { startDevStack } from '../server/dev-stack.ts';
import { createLogger } from '../server/log.ts';

const seconds = Number(process.env.BENCH_SECONDS ?? 15);
const pollers = Number(process.env.BENCH_POLLERS ?? 1000);

const stack = await startDevStack({ logger: createLogger({ level: 'warn' }) });
const created = await fetch(`${stack.apiUrl}/payments`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"value":25}' });
const { reference } = (await created.json()) as { reference: string };

const calls: number[] = [];
const getPayment = stack.partner.getPayment.bind(stack.partner);
stack.partner.getPayment = (ref) => {
  calls.push(performance.now());
  return getPayment(ref);
};

const agent = new Agent({ keepAlive: true, maxSockets: pollers });
const url = `${stack.apiUrl}/payments/${reference}`;
let reads = 0;
let failures = 0;
const started = performance.now();
const until = started + seconds * 1000;

function poll(): Promise<void> {
  return new Promise((resolve) => {
    get(url, { agent }, (res) => {
      res.resume();
      res.on('end', () => {
        if (res.statusCode === 200) reads++;
        else failures++;
        resolve();
      });
    }).on('error', () => {
      failures++;
      resolve();
    });
  });
}

async function browser(): Promise<void> {
  await new Promise((r) => setTimeout(r, Math.random() * 1000));
  while (performance.now() < until) {
    await poll();
    await new Promise((r) => setTimeout(r, 900 + Math.random() * 200));
  }
}

await Promise.all(Array.from({ length: pollers }, browser));
const elapsed = (performance.now() - started) / 1000;
const perSecond = new Map<number, number>();
for (const at of calls) {
  const second = Math.floor((at - started) / 1000);
  perSecond.set(second, (perSecond.get(second) ?? 0) + 1);
}
const maxInASecond = Math.max(0, ...perSecond.values());

console.log(`${pollers} pollers of one pending payment for ${elapsed.toFixed(1)} s, loopback`);
console.log(`browser reads answered: ${reads} (${(reads / elapsed).toFixed(0)}/s), failures: ${failures}`);
console.log(`upstream status calls: ${calls.length} = ${(calls.length / elapsed).toFixed(2)}/s; most in any one second: ${maxInASecond} (goal <= 1/s)`);

agent.destroy();
await stack.close();
