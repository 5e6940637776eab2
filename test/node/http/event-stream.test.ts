/**
 * The Node internals the status stream's chunked fast path relies on (server/http/event-stream.ts):
 * `ServerResponse.chunkedEncoding` (undocumented) is true for a chunked answer, and Node frames a
 * written chunk exactly as `chunked()` does, so a pre-framed chunk written to the socket gives the
 * bytes Node's own write would. If a Node release changes either, this test fails (and the stream
 * falls back to Node's documented write at startup: checkChunkedInternals).
 */
import assert from 'node:assert/strict';
import { createServer, type ServerResponse } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { describe, it } from 'node:test';
import { checkChunkedInternals, chunked, chunkedInternalsChecked, usesChunkedFastPath } from '../../../server/http/event-stream.ts';

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
