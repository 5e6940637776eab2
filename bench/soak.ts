/**
 * A soak of the proxy: mixed traffic on loopback for SOAK_MINUTES (default 10), then it stops by
 * itself. Each minute prints the partner calls the proxy made, its RSS and its open handles; after
 * warm-up all three should stay flat. `npm run bench:soak`.
 *
 * The proxy (the whole dev stack, the sandbox as the partner, with 10% of partner calls slowed by
 * 300 ms and 3% answered 503) runs in a child process; this process is the traffic: every 100 ms a
 * payment created, five reads, one stream opened and dropped after 50-500 ms (often mid-read), two
 * notifications (one copy of a real one, one for a reference nobody issued), and now and then a
 * payment paid at the partner.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';

const minutes = Number(process.env.SOAK_MINUTES ?? 10);

type Sample = { partnerCalls: number; rssMb: number; handles: number };

if (process.argv[2] === '--server') {
  const { startDevStack } = await import('../server/dev-stack.ts');
  const { createLogger } = await import('../server/log.ts');
  const stack = await startDevStack({ logger: createLogger({ level: 'warn' }), watchIntervalMs: 2000 });
  const json = { 'content-type': 'application/json' };
  for (const fault of [
    { kind: 'latency', rate: 0.1, latency_ms: 300 },
    { kind: 'server_error', rate: 0.03, status: 503 },
  ]) {
    await stack.sandbox.publicApp.request('/_sandbox/faults', { method: 'POST', headers: json, body: JSON.stringify(fault) });
  }
  let partnerCalls = 0;
  for (const name of ['getPayment', 'createPayment', 'checkTransfer', 'getTenant'] as const) {
    const call = stack.partner[name].bind(stack.partner) as (...args: unknown[]) => unknown;
    (stack.partner as unknown as Record<string, unknown>)[name] = (...args: unknown[]) => {
      partnerCalls++;
      return call(...args);
    };
  }
  process.on('message', (message: string) => {
    if (message === 'sample') {
      const sample: Sample = { partnerCalls, rssMb: Math.round(process.memoryUsage().rss / 1048576), handles: process.getActiveResourcesInfo().length };
      partnerCalls = 0;
      process.send!(sample);
    } else if (message === 'stop') void stack.close().then(() => process.exit(0));
  });
  process.send!({ url: stack.url, apiUrl: stack.apiUrl });
} else {
  const child: ChildProcess = fork(fileURLToPath(import.meta.url), ['--server'], { execArgv: ['--import', 'tsx'] });
  const next = <T>() => new Promise<T>((resolve) => child.once('message', (m) => resolve(m as T)));
  const { url, apiUrl } = await next<{ url: string; apiUrl: string }>();
  const json = { 'content-type': 'application/json' };
  const references: string[] = [];
  const counts = { creates: 0, reads: 0, streams: 0, notifications: 0, paid: 0, failures: 0 };
  const attempt = async (work: () => Promise<unknown>) => {
    try {
      await work();
    } catch {
      counts.failures++;
    }
  };
  const pick = () => references[Math.floor(Math.random() * references.length)];

  async function tick(): Promise<void> {
    const work: Promise<void>[] = [];
    work.push(
      attempt(async () => {
        const res = await fetch(`${apiUrl}/payments`, { method: 'POST', headers: json, body: JSON.stringify({ value: 1 + Math.floor(Math.random() * 50) }) });
        if (res.status === 201) references.push(((await res.json()) as { reference: string }).reference);
        counts.creates++;
      }),
    );
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
      const notification = (reference: string) =>
        JSON.stringify({ type: 'payment', external_reference: reference, status: 2, value: 1, transaction_id: null, end2end: null, user_id: null });
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
      if (Math.random() < 0.05)
        work.push(
          attempt(async () => void (await (await fetch(`${url}/sandbox/_sandbox/payments/${streamed}/pay`, { method: 'POST' })).text(), counts.paid++)),
        );
    }
    await Promise.all(work);
  }

  console.log(`soak: ${minutes} min of mixed traffic on loopback, ${process.version}; proxy and sandbox in a child process, traffic in this one`);
  console.log('minute | partner calls | RSS MB | open handles | creates reads streams notifications paid failures (this minute)');
  const started = performance.now();
  for (let minute = 1; minute <= minutes; minute++) {
    const before = { ...counts };
    const end = started + minute * 60_000;
    while (performance.now() < end) {
      const at = performance.now();
      await tick();
      await sleep(Math.max(0, 100 - (performance.now() - at)));
    }
    child.send('sample');
    const sample = await next<Sample>();
    const delta = (Object.keys(counts) as (keyof typeof counts)[]).map((key) => counts[key] - before[key]).join(' ');
    console.log(
      `${String(minute).padStart(6)} | ${String(sample.partnerCalls).padStart(13)} | ${String(sample.rssMb).padStart(6)} | ${String(sample.handles).padStart(12)} | ${delta}`,
    );
  }
  child.send('stop');
  await new Promise((resolve) => child.once('exit', resolve));
}
