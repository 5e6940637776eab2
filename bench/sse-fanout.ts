/**
 * 5,000 concurrent status streams (SSE) of one payment, held on loopback: the proxy's memory (RSS)
 * per client, and the time for one status change to reach all of them. The proxy runs in a child
 * process so its RSS is its own; the clients are raw sockets in this one.
 * `npm run bench:sse` (BENCH_CLIENTS, default 5000; BENCH_ROUNDS, default 3, each a new payment and
 * new clients, and the median, min and max; BENCH_STORE=postgres keeps the store in a
 * throwaway Postgres started by the proxy's process, instead of SQLite). Needs `ulimit -n` above
 * twice the clients. BENCH_PROFILE=dir writes a CPU profile of the proxy's process there.
 * BENCH_HEAP=dir writes heap snapshots of the proxy there, before the first round's clients and while
 * they are held, and prints what one client's stream added to the heap, by kind and its arrays by
 * holder (bench/heap-diff.ts).
 */
import { fork, type ChildProcess } from 'node:child_process';
import { execSync } from 'node:child_process';
import { connect } from 'node:net';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { arrayGrowth, heapGrowth } from './heap-diff.ts';
import { pinApart } from './pin.ts';

const clients = Number(process.env.BENCH_CLIENTS ?? 5000);
const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
const WATCH_INTERVAL_MS = 250;
const storeKind = process.env.BENCH_STORE ?? 'sqlite';
if (storeKind !== 'sqlite' && storeKind !== 'postgres') {
  console.error(`BENCH_STORE must be sqlite or postgres, not ${storeKind}`);
  process.exit(2);
}

if (process.argv[2] === '--server') {
  // The child: the whole stack, answering RSS questions over IPC.
  const { startDevStack } = await import('../server/dev-stack.ts');
  const { createLogger } = await import('../server/log.ts');
  // BENCH_STORE=postgres: a throwaway Postgres in this process's care, stopped on exit (startPostgres's own hook too).
  const postgres = storeKind === 'postgres' ? await (await import('../test/support/postgres.ts')).startPostgres() : null;
  const databaseUrl = postgres ? await postgres.createDatabase() : undefined;
  // Every client is on loopback and watches one payment: no stream caps.
  const stack = await startDevStack({
    databaseUrl,
    watchIntervalMs: WATCH_INTERVAL_MS,
    streamsPerClient: 0,
    streamsPerPayment: 0,
    logger: createLogger({ level: 'warn' }),
  });
  // A payment per round, paid when the parent says so.
  let reference = '';
  // When the proxy recorded the change: its outcome event is emitted just after every stream of the
  // payment was handed the new view, before any of them wrote it.
  let recordedAt = NaN;
  const newPayment = async () => {
    const created = await fetch(`${stack.apiUrl}/payments`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"value":25}' });
    reference = ((await created.json()) as { reference: string }).reference;
    recordedAt = NaN;
    stack.app.pix.events.once('outcome', () => {
      recordedAt = performance.timeOrigin + performance.now();
    });
    return `${stack.apiUrl}/payments/${reference}/events`;
  };
  process.on(
    'message',
    (message: string) =>
      void (async () => {
        if (message === 'new') {
          process.send!({ url: await newPayment() });
        } else if (message === 'rss') {
          globalThis.gc?.();
          process.send!({ rss: process.memoryUsage().rss });
        } else if (message.startsWith('heap ')) {
          globalThis.gc?.();
          const { writeHeapSnapshot } = await import('node:v8');
          process.send!({ file: writeHeapSnapshot(message.slice('heap '.length)) });
        } else if (message === 'pay') {
          process.send!({ paying: performance.timeOrigin + performance.now() });
          stack.sandbox.state.pay(stack.sandbox.state.payments.get(reference)!);
        } else if (message === 'seen') {
          process.send!({ seen: recordedAt });
        } else if (message === 'stop') {
          await stack.close();
          await postgres?.stop();
          process.exit(0);
        }
      })(),
  );
  // The parent gone (it failed): no orphaned server, no orphaned Postgres.
  process.on('disconnect', () => void stack.close().finally(() => void postgres?.stop().finally(() => process.exit(1))));
  process.send!({ ready: true });
} else {
  const limit = Number(execSync('ulimit -n', { shell: '/bin/bash' }).toString().trim());
  if (limit < clients * 2 + 100) {
    console.error(`ulimit -n is ${limit}; ${clients} clients need about ${clients * 2 + 100} (run \`ulimit -n 65536\` first)`);
    process.exit(1);
  }
  const profileDir = process.env.BENCH_PROFILE;
  const child: ChildProcess = fork(fileURLToPath(import.meta.url), ['--server'], {
    execArgv: ['--import', 'tsx', '--expose-gc', ...(profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : [])],
  });
  const next = <T>() => new Promise<T>((resolve) => child.once('message', (m) => resolve(m as T)));
  const ask = <T>(message: string) => {
    const answer = next<T>();
    child.send(message);
    return answer;
  };
  await next<{ ready: true }>();
  // The clients here and the proxy there, a core each (bench/pin.ts): the time measured is the proxy's.
  const pinned = pinApart(child.pid!);

  /** One round: `clients` streams of a new payment opened, the payment paid, the streams closed. */
  const round = async () => {
    const { url } = await ask<{ url: string }>('new');
    const heapDir = process.env.BENCH_HEAP;
    const firstRound = heapBefore === undefined;
    if (heapDir && firstRound) heapBefore = (await ask<{ file: string }>(`heap ${join(heapDir, 'sse-before.heapsnapshot')}`)).file;
    const before = (await ask<{ rss: number }>('rss')).rss;
    const paidAt: number[] = [];
    const sockets: { destroy(): void }[] = [];
    // Raw sockets speaking HTTP/1.1 by hand: the clients' own cost (an HTTP parser and a response
    // object per stream) would otherwise be most of what is measured.
    const target = new URL(url);
    const greeting = `GET ${target.pathname} HTTP/1.1\r\nHost: ${target.host}\r\nAccept: text/event-stream\r\n\r\n`;
    const openOne = () =>
      new Promise<void>((resolve, reject) => {
        const socket = connect(Number(target.port), target.hostname, () => socket.write(greeting));
        let firstSeen = false;
        socket.setEncoding('utf8');
        socket.on('data', (chunk: string) => {
          if (!firstSeen && chunk.includes('"pending"')) {
            firstSeen = true;
            resolve();
          }
          if (chunk.includes('"paid"')) paidAt.push(performance.timeOrigin + performance.now());
        });
        socket.on('error', reject);
        sockets.push(socket);
      });
    const started = performance.now();
    // Open in batches, as pages arrive; all at once would only measure the accept queue.
    for (let i = 0; i < clients; i += 250) await Promise.all(Array.from({ length: Math.min(250, clients - i) }, openOne));
    const openSeconds = (performance.now() - started) / 1000;
    await new Promise((r) => setTimeout(r, 1000));
    const held = (await ask<{ rss: number }>('rss')).rss;
    if (heapDir && firstRound) heapHeld = (await ask<{ file: string }>(`heap ${join(heapDir, 'sse-held.heapsnapshot')}`)).file;

    const { paying } = await ask<{ paying: number }>('pay');
    while (paidAt.length < clients) await new Promise((r) => setTimeout(r, 10));
    const { seen } = await ask<{ seen: number }>('seen');
    const first = Math.min(...paidAt);
    const last = Math.max(...paidAt);
    for (const socket of sockets) socket.destroy();
    // The proxy's side of the closed streams gone before the next round measures its memory.
    await new Promise((r) => setTimeout(r, 1000));
    return {
      openSeconds,
      perClientKb: (held - before) / clients / 1024,
      firstMs: first - paying,
      lastMs: last - paying,
      recordedMs: seen - paying,
      fanOutMs: last - seen,
      spreadMs: last - first,
    };
  };

  let heapBefore: string | undefined;
  let heapHeld: string | undefined;
  const results = [];
  for (let i = 0; i < rounds; i++) results.push(await round());
  console.log(
    `${clients} SSE clients of one payment held on loopback, ${rounds} rounds (a new payment and new clients each), store ${storeKind === 'postgres' ? 'Postgres' : 'SQLite'}, ${process.version}${pinned ? ', clients and proxy pinned to a core each' : ''}`,
  );
  console.table(
    Object.fromEntries(
      results.map((r, i) => [
        `round ${i + 1}`,
        {
          'opened in s': Number(r.openSeconds.toFixed(1)),
          'recorded ms': Math.round(r.recordedMs),
          'first client ms': Math.round(r.firstMs),
          'last client ms': Math.round(r.lastMs),
          'fan-out ms': Math.round(r.fanOutMs),
        },
      ]),
    ),
  );
  const sorted = (xs: number[]) => [...xs].sort((a, b) => a - b);
  const summary = (xs: number[], digits = 0) => {
    const s = sorted(xs);
    return `median ${s[Math.floor(s.length / 2)]!.toFixed(digits)} (min ${s[0]!.toFixed(digits)}, max ${s.at(-1)!.toFixed(digits)})`;
  };
  // Memory from the first round only: the process's RSS does not shrink back after a round.
  console.log(`proxy memory (RSS) per client held, first round: ${results[0]!.perClientKb.toFixed(1)} KB (goal < 50 KB)`);
  console.log(`one change (paid) -> all ${clients} clients: ${summary(results.map((r) => r.lastMs))} ms (goal < 1 s);`);
  console.log(
    `  that includes up to one poll interval (${WATCH_INTERVAL_MS} ms) before the proxy sees the change: it recorded it after ${summary(results.map((r) => r.recordedMs))} ms`,
  );
  console.log(
    `fan-out, from the proxy recording the change to the last client reading it: ${summary(results.map((r) => r.fanOutMs))} ms (goal < 250 ms); first to last client: ${summary(results.map((r) => r.spreadMs))} ms`,
  );
  if (heapBefore && heapHeld) {
    for (const line of heapGrowth(heapBefore, heapHeld, clients)) console.log(line);
    // A row `ServerResponse.properties` here is a response holding its fields in a hash table (server/http/response-layout.ts).
    console.log('arrays per client, by what holds them:');
    for (const line of arrayGrowth(heapBefore, heapHeld, clients)) console.log(line);
  }
  // The child answers 'stop' by exiting, not by a message.
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.send('stop');
  await exited;
}
