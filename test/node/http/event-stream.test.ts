/**
 * The Node internals the status stream's chunked fast path relies on (server/http/event-stream.ts):
 * `ServerResponse.chunkedEncoding` (undocumented) is true for a chunked answer, and Node frames a
 * written chunk exactly as `chunked()` does, so a pre-framed chunk written to the socket gives the
 * bytes Node's own write would. If a Node release changes either, this test fails (and the stream
 * falls back to Node's documented write at startup: checkChunkedInternals). And the stream's signal
 * of the client leaving on node:http (clientGoneSignal), taken from Node's response.
 */
import assert from 'node:assert/strict';
import { createServer, type ServerResponse } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { describe, it } from 'node:test';
import { Hono } from 'hono';
import { checkChunkedInternals, chunked, chunkedInternalsChecked, clientGoneSignal, usesChunkedFastPath } from '../../../server/http/event-stream.ts';
import { createNodeServer, nodeListener } from '../../../server/http/node-listener.ts';
import { alreadySent, nodeResponse } from '../../../server/http/response-headers.ts';

/** Serves one GET with `handle`, asks for it over a raw socket, and returns every byte of the answer. */
async function rawExchange(handle: (res: ServerResponse) => Promise<void> | void): Promise<Buffer> {
  const server = createServer((_req, res) => void handle(res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  try {
    return await new Promise<Buffer>((resolve, reject) => {
      const received: Buffer[] = [];
      const socket = connect(port, '127.0.0.1', () => socket.write('GET /events HTTP/1.1\r\nhost: localhost\r\nconnection: close\r\n\r\n'));
      socket.on('data', (chunk: Buffer) => received.push(chunk));
      socket.on('end', () => resolve(Buffer.concat(received)));
      socket.on('error', reject);
    });
  } finally {
    await new Promise((resolve) => server.close(resolve));
  }
}

const bodyOf = (answer: Buffer) => answer.subarray(answer.indexOf('\r\n\r\n') + 4);

describe('the Node internals of the chunked status stream', () => {
  it('the startup check passes on this Node, so the fast path is on', async () => {
    assert.equal(await checkChunkedInternals(), true);
    assert.equal(await chunkedInternalsChecked, true);
    assert.equal(usesChunkedFastPath(), true);
  });

  it('a flushed HTTP/1.1 answer with no length says chunkedEncoding, with nothing waiting in the response', async () => {
    const seen: { chunked?: unknown; waiting?: number } = {};
    await rawExchange((res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.flushHeaders();
      seen.chunked = (res as { chunkedEncoding?: unknown }).chunkedEncoding;
      seen.waiting = res.writableLength;
      res.end();
    });
    assert.equal(seen.chunked, true, 'ServerResponse.chunkedEncoding is true for a chunked answer');
    assert.equal(seen.waiting, 0, 'nothing of the answer waits in the response once its head is flushed');
  });

  it("Node's write frames a chunk exactly as chunked() does, so a pre-framed chunk on the socket fits between them", async () => {
    const first = new TextEncoder().encode('event: status\ndata: {"status":"pending"}\nretry: 3000\n\n');
    const second = new TextEncoder().encode('event: status\ndata: {"status":"paid","é":"ü"}\nretry: 3000\n\n');
    const third = new TextEncoder().encode(': keep-alive\n\n');
    const answer = await rawExchange(async (res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.flushHeaders();
      res.write(first);
      await new Promise((resolve) => setImmediate(resolve));
      // What the fast path does: the pre-framed chunk straight to the socket.
      res.socket!.write(chunked(second));
      res.end(third);
    });
    assert.match(answer.toString('latin1'), /^HTTP\/1\.1 200 OK\r\n/);
    assert.match(answer.toString('latin1'), /\r\ntransfer-encoding: chunked\r\n/i);
    const expected = Buffer.concat([chunked(first), chunked(second), chunked(third), Buffer.from('0\r\n\r\n', 'latin1')]);
    assert.deepEqual(bodyOf(answer), expected);
  });
});

describe("the client's departure on node:http (clientGoneSignal)", () => {
  /** A Hono app on a real node:http server whose one route keeps `clientGoneSignal` and answers with `answer`. */
  async function serveWithSignal(
    answer: (res: ServerResponse) => void,
  ): Promise<{ port: number; signals: AbortSignal[]; closed: Promise<void>; close(): Promise<void> }> {
    const signals: AbortSignal[] = [];
    let closedNow: () => void;
    const closed = new Promise<void>((resolve) => (closedNow = resolve));
    const app = new Hono();
    app.get('/events', (c) => {
      signals.push(clientGoneSignal(c));
      const res = nodeResponse(c)!;
      // After the helper's own listener: the signal has its final state here.
      res.once('close', () => closedNow());
      answer(res);
      return alreadySent();
    });
    const server = createNodeServer(nodeListener(app.fetch));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    return { port, signals, closed, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
  }

  it('aborted when the client hangs up before the answer is finished', async () => {
    const served = await serveWithSignal((res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.flushHeaders();
    });
    try {
      const socket = connect(served.port, '127.0.0.1', () => socket.write('GET /events HTTP/1.1\r\nhost: localhost\r\n\r\n'));
      socket.once('data', () => socket.destroy());
      await served.closed;
      assert.equal(served.signals.length, 1);
      assert.equal(served.signals[0]!.aborted, true);
    } finally {
      await served.close();
    }
  });

  it('not aborted when the answer finishes', async () => {
    const served = await serveWithSignal((res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end(': done\n\n');
    });
    try {
      const answer = await fetch(`http://127.0.0.1:${served.port}/events`, { headers: { connection: 'close' } });
      assert.equal(await answer.text(), ': done\n\n');
      await served.closed;
      assert.equal(served.signals[0]!.aborted, false);
    } finally {
      await served.close();
    }
  });
});
