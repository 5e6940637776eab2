/** The live status stream (Server-Sent Events) over a real socket, against the sandbox. */
import assert from 'node:assert/strict';
import { connect, type AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { PaymentView } from '../../../src/shared/contract.ts';
import { STATUS_STREAM } from '../../../src/shared/wire.ts';
import { ErrorBody } from '../../../src/shared/errors.ts';
import { startDevStack, type DevStack } from '../../../server/dev-stack.ts';
import { DEFAULTS } from '../../../server/config/index.ts';
import { createNodeServer, nodeListener } from '../../../server/http/node-listener.ts';
import { waitFor } from '../../support/checks.ts';

let stack: DevStack;
before(async () => {
  // Pollers at 50 ms whatever the webhooks' health (domain/webhooks/health.ts is tested on its own).
  stack = await startDevStack({ watchIntervalMs: 50, webhookReadIntervalMs: 50 });
});
after(async () => {
  await stack.close();
});

async function createPayment(on: DevStack = stack): Promise<PaymentView> {
  const res = await fetch(`${on.apiUrl}/payments`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"value":7.5}' });
  assert.equal(res.status, 201);
  return PaymentView.parse(await res.json());
}

/** Reads SSE events until the server ends the stream. */
async function* events(res: Response): AsyncGenerator<{ event: string; data: string; retry?: string }> {
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return;
    buffer += value;
    let end: number;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const fields: Record<string, string> = {};
      for (const line of block.split('\n')) {
        if (line.startsWith(':')) continue;
        const colon = line.indexOf(':');
        fields[line.slice(0, colon)] = line.slice(colon + 1).trimStart();
      }
      if (fields.data !== undefined) yield { event: fields.event ?? 'message', data: fields.data, retry: fields.retry };
    }
  }
}

describe('live status stream', () => {
  test('sends the current status at once, then paid, then ends', async () => {
    const payment = await createPayment();
    const res = await fetch(`${stack.apiUrl}/payments/${payment.reference}/events`);
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^text\/event-stream/);
    const stream = events(res);

    const first = await stream.next();
    assert.equal(first.value?.event, STATUS_STREAM.event);
    assert.equal(first.value?.retry, String(STATUS_STREAM.retryMs));
    assert.equal(PaymentView.parse(JSON.parse(first.value!.data)).status, 'pending');

    const pay = await fetch(`${stack.url}/sandbox/_sandbox/payments/${payment.reference}/pay`, { method: 'POST' });
    assert.equal(pay.status, 200);
    const second = await stream.next();
    const paid = PaymentView.parse(JSON.parse(second.value!.data));
    assert.equal(paid.status, 'paid');
    assert.equal(paid.reference, payment.reference);
    assert.equal((await stream.next()).done, true, 'the server ends the stream after a final status');
  });

  test('reports expiry as it happens', async () => {
    const payment = await createPayment();
    const res = await fetch(`${stack.apiUrl}/payments/${payment.reference}/events`);
    const stream = events(res);
    assert.equal(JSON.parse((await stream.next()).value!.data).status, 'pending');
    stack.sandbox.state.clock.advance(3600 * 1000);
    assert.equal(JSON.parse((await stream.next()).value!.data).status, 'expired');
    assert.equal((await stream.next()).done, true);
  });

  test('a paid payment gets one event and an ended stream', async () => {
    const payment = await createPayment();
    await fetch(`${stack.url}/sandbox/_sandbox/payments/${payment.reference}/pay`, { method: 'POST' });
    stack.sandbox.state.clock.advance(DEFAULTS.staleAfterMs);
    const stream = events(await fetch(`${stack.apiUrl}/payments/${payment.reference}/events`));
    assert.equal(JSON.parse((await stream.next()).value!.data).status, 'paid');
    assert.equal((await stream.next()).done, true);
  });

  test('an unknown reference is a 404 before any stream opens', async () => {
    const res = await fetch(`${stack.apiUrl}/payments/unknownref/events`);
    assert.equal(res.status, 404);
    assert.equal(ErrorBody.parse(await res.json()).error.code, 'not_found');
  });

  test('a malformed reference is a 400', async () => {
    const res = await fetch(`${stack.apiUrl}/payments/bad%0Aref/events`);
    assert.equal(res.status, 400);
    assert.equal(ErrorBody.parse(await res.json()).error.code, 'invalid_reference');
  });

  test('many streams of one payment share one upstream poller', async () => {
    const payment = await createPayment();
    const original = stack.partner.getPayment.bind(stack.partner);
    const calls: number[] = [];
    stack.partner.getPayment = (ref) => {
      calls.push(performance.now());
      return original(ref);
    };
    try {
      const controllers = Array.from({ length: 20 }, () => new AbortController());
      const streams = await Promise.all(
        controllers.map(async (ctl) => events(await fetch(`${stack.apiUrl}/payments/${payment.reference}/events`, { signal: ctl.signal }))),
      );
      await Promise.all(streams.map((s) => s.next()));
      const afterOpen = calls.length;
      // Wait for a few polls (the guard only bounds a broken run; nothing here measures time).
      for (let i = 0; i < 400 && calls.length < afterOpen + 6; i++) await new Promise((resolve) => setTimeout(resolve, 25));
      const polls = calls.slice(afterOpen);
      assert.ok(polls.length >= 6, `upstream polls while 20 streams were open: ${polls.length}`);
      // One poller waits a whole interval (50 ms) after each answer before asking again, and timers
      // never fire early; twenty pollers would ask in bursts, with gaps near zero.
      const gaps = polls.slice(1).map((t, i) => t - polls[i]!);
      assert.ok(Math.min(...gaps) >= 40, `gaps between upstream polls (ms): ${gaps.map(Math.round).join(', ')}`);
      for (const ctl of controllers) ctl.abort();
    } finally {
      stack.partner.getPayment = original;
    }
  });
});

describe('written to Node directly, and through web streams where there is no Node response', () => {
  test('the same status, headers and events; the stream ends after the final one; a client leaving releases the watch', async () => {
    const origin = 'https://shop.example';
    const served = await startDevStack({ watchIntervalMs: 50, webhookReadIntervalMs: 50, allowedOrigins: [origin] });
    try {
      const payment = await createPayment(served);
      const path = `/api/payments/${payment.reference}/events`;
      // Over the socket: written to Node's response. In process (app.request): hono's streamSSE.
      const direct = await fetch(`${served.url}${path}`, { headers: { origin } });
      const general = await served.app.request(path, { headers: { origin } });
      const headers = (res: Response) =>
        Object.fromEntries([...res.headers].filter(([name]) => !['date', 'transfer-encoding', 'connection', 'keep-alive', 'x-request-id'].includes(name)));
      assert.equal(direct.status, general.status, 'status');
      // Each its own request id (the log line's req_id), in the stream's head too.
      assert.notEqual(direct.headers.get('x-request-id'), general.headers.get('x-request-id'));
      assert.ok(direct.headers.get('x-request-id') && general.headers.get('x-request-id'), 'x-request-id');
      assert.deepEqual(headers(direct), headers(general), 'headers');
      assert.equal(direct.headers.get('access-control-allow-origin'), origin, 'CORS');
      assert.equal(direct.headers.get('x-content-type-options'), 'nosniff', 'security headers');
      assert.equal(direct.headers.get('cache-control'), 'no-cache', 'cache-control');

      const a = events(direct);
      const b = events(general);
      const strip = (data: string) => ({ ...(JSON.parse(data) as Record<string, unknown>), server_time: 'T' });
      const [a1, b1] = [(await a.next()).value!, (await b.next()).value!];
      assert.deepEqual([a1.event, a1.retry, strip(a1.data)], [b1.event, b1.retry, strip(b1.data)], 'the first event');
      served.sandbox.state.pay(served.sandbox.state.payments.get(payment.reference)!);
      const [a2, b2] = [(await a.next()).value!, (await b.next()).value!];
      assert.equal(JSON.parse(a2.data).status, 'paid', 'paid, directly');
      assert.deepEqual([a2.event, strip(a2.data)], [b2.event, strip(b2.data)], 'the paid event');
      assert.equal((await a.next()).done, true, 'the direct stream ended');
      assert.equal((await b.next()).done, true, 'the web stream ended');

      // A client that leaves a pending payment's stream: its watch is released (no poller left).
      const other = await createPayment(served);
      const controller = new AbortController();
      const leaving = await fetch(`${served.url}/api/payments/${other.reference}/events`, { signal: controller.signal });
      await events(leaving).next();
      assert.equal(served.app.pix.payments.watches.watching(other.reference), 1, 'watched while open');
      controller.abort();
      await waitFor('the watch released after the client left', () => served.app.pix.payments.watches.watching(other.reference) === 0, 5000);
    } finally {
      await served.close();
    }
  });
});

/**
 * Reads HTTP/1.1 answers off a raw socket, strictly: a status line, headers, and a body in chunked
 * coding (hex size, CRLF, bytes, CRLF, ... a zero-size chunk) or of a Content-Length. Anything else
 * throws.
 */
function parseAnswers(wire: Buffer): { status: number; headers: Record<string, string>; body: string }[] {
  const answers: { status: number; headers: Record<string, string>; body: string }[] = [];
  let at = 0;
  const line = () => {
    const end = wire.indexOf('\r\n', at, 'latin1');
    if (end < 0) throw new Error(`no CRLF after byte ${at}`);
    const text = wire.subarray(at, end).toString('latin1');
    at = end + 2;
    return text;
  };
  while (at < wire.length) {
    const status = /^HTTP\/1\.1 (\d{3}) /.exec(line());
    if (!status) throw new Error(`no status line at byte ${at}`);
    const headers: Record<string, string> = {};
    for (let header = line(); header !== ''; header = line()) {
      const colon = header.indexOf(':');
      headers[header.slice(0, colon).toLowerCase()] = header.slice(colon + 1).trim();
    }
    if (headers['content-length'] !== undefined) {
      const length = Number(headers['content-length']);
      answers.push({ status: Number(status[1]), headers, body: wire.subarray(at, at + length).toString('utf8') });
      at += length;
      continue;
    }
    assert.equal(headers['transfer-encoding'], 'chunked', 'a chunked answer');
    const parts: Buffer[] = [];
    for (;;) {
      const sizeLine = line();
      if (!/^[0-9a-f]+$/.test(sizeLine)) throw new Error(`bad chunk size ${JSON.stringify(sizeLine)}`);
      const size = parseInt(sizeLine, 16);
      if (size === 0) {
        if (line() !== '') throw new Error('no CRLF after the last chunk');
        break;
      }
      parts.push(wire.subarray(at, at + size));
      at += size;
      if (wire.subarray(at, at + 2).toString('latin1') !== '\r\n') throw new Error(`no CRLF after a chunk of ${size}`);
      at += 2;
    }
    answers.push({ status: Number(status[1]), headers, body: Buffer.concat(parts).toString('utf8') });
  }
  return answers;
}

describe('on the wire', () => {
  test('two streams pipelined on one connection: each a well-formed chunked answer, in order, whether its frames went to the socket as one chunk or through the response', async () => {
    const payment = await createPayment();
    const url = new URL(`${stack.apiUrl}/payments/${payment.reference}/events`);
    const socket = connect(Number(url.port), url.hostname);
    const received: Buffer[] = [];
    socket.on('data', (data: Buffer) => received.push(data));
    const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    await new Promise<void>((resolve) => socket.once('connect', resolve));
    // The second answer waits in its response behind the first (Node answers a connection's requests
    // in order): its frames take the response's own path. A third request closes the connection.
    const get = (path: string, close = false) => `GET ${path} HTTP/1.1\r\nHost: ${url.host}\r\n${close ? 'Connection: close\r\n' : ''}\r\n`;
    socket.write(get(url.pathname) + get(url.pathname) + get(`${url.pathname.slice(0, -'/events'.length)}`, true));
    await waitFor('the first stream open', () => Buffer.concat(received).includes('"pending"'), 5000);
    stack.sandbox.state.pay(stack.sandbox.state.payments.get(payment.reference)!);
    await closed;

    const [first, second, read] = parseAnswers(Buffer.concat(received));
    for (const [name, answer] of [
      ['first', first],
      ['second', second],
    ] as const) {
      assert.equal(answer?.status, 200, `${name} stream's status`);
      const statuses = [...answer.body.matchAll(/^data: (.*)$/gm)].map((m) => (JSON.parse(m[1]!) as PaymentView).status);
      assert.equal(statuses.at(-1), 'paid', `${name} stream ends on paid`);
      assert.ok(
        statuses.every((s) => s === 'pending' || s === 'paid'),
        `${name} stream's statuses: ${statuses.join(', ')}`,
      );
    }
    assert.equal(read?.status, 200, 'the read after them');
    // Node runs a pipelined request's handler on arrival and holds its answer: read before the payment was paid.
    assert.equal(PaymentView.parse(JSON.parse(read.body)).reference, payment.reference);
  });
});

describe('what an open stream holds', () => {
  test("on node:http, no web Request: the adapter's lazy request is never built (its headers, URL and abort controller)", async () => {
    const requests: Request[] = [];
    const server = createNodeServer(
      nodeListener((request, env) => {
        requests.push(request);
        return stack.app.fetch(request, env);
      }),
    );
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const controller = new AbortController();
    try {
      const payment = await createPayment();
      const res = await fetch(`http://127.0.0.1:${port}${new URL(stack.apiUrl).pathname}/payments/${payment.reference}/events`, { signal: controller.signal });
      assert.equal(JSON.parse((await events(res).next()).value!.data).status, 'pending', 'the stream is open');
      // What @hono/node-server keeps on its request once something reads a part only a real Request has.
      const built = (request: Request) =>
        Object.getOwnPropertySymbols(request)
          .map((symbol) => symbol.description)
          .filter((name) => name === 'requestCache' || name === 'abortControllerKey')
          .sort();
      assert.equal(requests.length, 1);
      assert.deepEqual(built(requests[0]!), [], 'nothing built while the stream is open');
      // The check sees one when it is built: reading the signal builds it.
      void requests[0]!.signal;
      assert.deepEqual(built(requests[0]!), ['abortControllerKey', 'requestCache']);
    } finally {
      controller.abort();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

describe('streams turned off', () => {
  test('the events path answers 404 not_found, so the widget polls', async () => {
    const off = await startDevStack({ streams: false });
    try {
      const payment = await createPayment(off);
      const res = await fetch(`${off.apiUrl}/payments/${payment.reference}/events`);
      assert.equal(res.status, 404);
      assert.equal(ErrorBody.parse(await res.json()).error.code, 'not_found');
    } finally {
      await off.close();
    }
  });
});
