/**
 * The status stream's writer (Server-Sent Events): its headers, its frames, and the fastest way to
 * put them on the wire.
 *
 * On node:http it writes straight to Node's response: one write per frame, where a web stream costs a
 * TransformStream, a reader and several promises per frame (5,000 streams told of one change:
 * bench:sse). There, a status frame of a chunked answer goes to the socket as one HTTP/1.1 chunk
 * framed once for every stream of the payment (chunkOf), where Node's own write frames it in three
 * pieces and corks the socket: twice the time for 5,000 streams. That path relies on two things Node
 * does not document: `ServerResponse.chunkedEncoding` says the answer is chunked, and Node frames a
 * chunk exactly as chunkOf does. Both are checked once at startup against a response over an
 * in-memory socket (checkChunkedInternals; test/node/http/event-stream.test.ts checks them on a real
 * socket); until that check has passed, or if it fails, every frame takes Node's documented
 * `write`, which gives the same bytes.
 *
 * Elsewhere (another runtime, a mounted app) it is Hono's streamSSE, with the same status, headers and
 * bytes (test/node/routes/status-stream.test.ts).
 */
import { IncomingMessage, ServerResponse } from 'node:http';
import { Writable } from 'node:stream';
import type { Context } from 'hono';
import { streamSSE } from 'hono/streaming';
import type { PaymentView } from '../../src/shared/contract.ts';
import { STATUS_STREAM } from '../../src/shared/wire.ts';
import { alreadySent, headerBag, nodeResponse } from './response-headers.ts';
import { completeResponseLayout } from './response-layout.ts';

/**
 * The status stream's own headers, beside the security set and CORS: streamSSE's (which sets
 * `cache-control: no-cache` itself) and one that tells nginx not to buffer it.
 */
export const SSE_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  'cache-control': 'no-cache',
  connection: 'keep-alive',
  'content-type': 'text/event-stream',
  'x-accel-buffering': 'no',
});

/** Writes a view (`last`: the stream ends with it) or a comment (text); a promise when the socket is full. */
export type FrameWriter = (frame: PaymentView | string, last?: boolean) => Promise<unknown> | undefined;

/**
 * A view's SSE frame (`event`, `data`, `retry`), serialized and encoded once: every stream of a
 * payment is handed the same view object on a change, so 5,000 streams share one JSON.stringify and
 * one encoding, and each writes the same bytes.
 */
const frames = new WeakMap<PaymentView, Uint8Array>();
const encoder = new TextEncoder();
export function frameOf(view: PaymentView): Uint8Array {
  let frame = frames.get(view);
  if (!frame) {
    // The JSON is one line (no newline in JSON.stringify's output), so it is one `data:` field.
    frame = encoder.encode(`event: ${STATUS_STREAM.event}\ndata: ${JSON.stringify(view)}\nretry: ${STATUS_STREAM.retryMs}\n\n`);
    frames.set(view, frame);
  }
  return frame;
}

/** Bytes as one chunk of HTTP/1.1's chunked coding (RFC 9112 7.1): size in hex, CRLF, the bytes, CRLF. */
export function chunked(bytes: Uint8Array): Buffer {
  return Buffer.concat([Buffer.from(`${bytes.byteLength.toString(16)}\r\n`, 'latin1'), bytes, Buffer.from('\r\n', 'latin1')]);
}

/** A view's frame as one chunk, framed once per view: what every stream of the payment writes to its socket as is. */
const chunks = new WeakMap<PaymentView, Buffer>();
export function chunkOf(view: PaymentView): Buffer {
  let chunk = chunks.get(view);
  if (!chunk) {
    chunk = chunked(frameOf(view));
    chunks.set(view, chunk);
  }
  return chunk;
}

/**
 * Whether Node's internals behave as the chunked fast path expects: a response to an HTTP/1.1 GET
 * with no length, its head flushed, says `chunkedEncoding === true` and has nothing waiting in it
 * (`writableLength === 0`), and its `write(bytes)` puts exactly `chunked(bytes)` on the socket.
 * Checked over an in-memory socket, so it costs no connection.
 */
export async function checkChunkedInternals(): Promise<boolean> {
  try {
    const written: Buffer[] = [];
    const socket = new Writable({
      write(chunk: Buffer, _encoding, callback) {
        written.push(Buffer.from(chunk));
        callback();
      },
    });
    const request = new IncomingMessage(socket as never);
    request.method = 'GET';
    request.httpVersionMajor = 1;
    request.httpVersionMinor = 1;
    request.httpVersion = '1.1';
    const response = new ServerResponse(request);
    response.assignSocket(socket as never);
    response.writeHead(200, { 'content-type': 'text/event-stream' });
    response.flushHeaders();
    if ((response as { chunkedEncoding?: unknown }).chunkedEncoding !== true) return false;
    await new Promise((resolve) => setImmediate(resolve));
    if (response.writableLength !== 0) return false;
    const headLength = Buffer.concat(written).length;
    const sample = encoder.encode(': internals check\n\n');
    response.write(sample);
    await new Promise((resolve) => setImmediate(resolve));
    const sent = Buffer.concat(written).subarray(headLength);
    response.detachSocket(socket as never);
    socket.destroy();
    return sent.equals(chunked(sample));
  } catch {
    return false;
  }
}

// Before the first request, so that every stream's response is laid out as Node's own (response-layout.ts).
completeResponseLayout();

/** Whether frames may go to the socket as pre-framed chunks: set once checkChunkedInternals has passed. */
let chunkedFastPath = false;
/** The startup check, run once when this module loads; tests await it. */
export const chunkedInternalsChecked: Promise<boolean> = checkChunkedInternals().then((ok) => (chunkedFastPath = ok));

/** Whether the pre-framed chunk path is in use (the startup check passed). */
export function usesChunkedFastPath(): boolean {
  return chunkedFastPath;
}

/**
 * A signal aborted when the client of `c` goes away before its answer is finished. On node:http it
 * follows Node's response, as @hono/node-server aborts the Request's signal (its `close` while the
 * answer is unfinished or the request errored), without the web Request that reading
 * `c.req.raw.signal` makes the adapter build: that Request, its headers, URL and abort controller
 * stay as long as the stream, 2.3 KB of heap each (bench:sse). Elsewhere, the Request's own signal. Like
 * that one, taken before the first await sees a client that leaves during it.
 */
export function clientGoneSignal(c: Context): AbortSignal {
  const outgoing = nodeResponse(c);
  if (!outgoing) return c.req.raw.signal;
  const incoming = (c.env as { incoming?: { errored?: unknown } }).incoming;
  const controller = new AbortController();
  outgoing.once('close', () => {
    if (incoming?.errored || !outgoing.writableFinished) controller.abort();
  });
  return controller.signal;
}

/**
 * Answers `c` with the status stream: `pump(write)` writes its frames until it returns, and the
 * answer ends then. `onClose` is called when the connection closes (the client leaving).
 */
export function respondEventStream(c: Context, pump: (write: FrameWriter) => Promise<void>, onClose: () => void): Response | Promise<Response> {
  const outgoing = nodeResponse(c);
  if (outgoing) {
    outgoing.writeHead(200, { ...SSE_HEADERS, ...headerBag(c) });
    outgoing.flushHeaders();
    outgoing.once('close', onClose);
    void pump(nodeWriter(outgoing)).finally(() => {
      if (!outgoing.writableEnded) outgoing.end();
    });
    return alreadySent();
  }
  for (const [name, value] of Object.entries(SSE_HEADERS)) c.header(name, value);
  return streamSSE(c, (stream) => {
    stream.onAbort(onClose);
    return pump((frame) => stream.write(typeof frame === 'string' ? frame : frameOf(frame)));
  });
}

/** Frames written to Node's response, its head already on the socket. */
function nodeWriter(outgoing: ServerResponse): FrameWriter {
  const socket = outgoing.socket;
  return (frame, last) => {
    // The pre-framed chunk, only while nothing of this answer waits in the response (its head is on
    // the socket; no earlier answer on the connection holds it back), so the bytes keep their order.
    // The answer's end (the last chunk) is written after, when the pump returns, off the path of the
    // frames of every other stream of the payment.
    if (chunkedFastPath && typeof frame !== 'string' && outgoing.chunkedEncoding && outgoing.writableLength === 0 && socket && socket.writable) {
      if (socket.write(chunkOf(frame)) || last) return;
      return new Promise((resolve) => socket.once('drain', resolve));
    }
    const bytes = typeof frame === 'string' ? frame : frameOf(frame);
    // The final frame and the end of the answer in one write.
    if (last) return void outgoing.end(bytes);
    return outgoing.write(bytes) ? undefined : new Promise((resolve) => outgoing.once('drain', resolve));
  };
}
