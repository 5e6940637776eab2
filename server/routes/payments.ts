/** The browser API for payments: thin handlers that validate with src/shared and call the service. */
import { Hono, type Context, type MiddlewareHandler } from 'hono';
import { streamSSE } from 'hono/streaming';
import { OpenPaymentRequest, type PaymentView } from '../../src/shared/contract.ts';
import { errorBody } from '../../src/shared/errors.ts';
import { formatReais } from '../../src/shared/limits.ts';
import { isFinalStatus } from '../../src/shared/status.ts';
import { API_PATHS, STATUS_STREAM, fillPath } from '../../src/shared/wire.ts';
import type { PaymentService } from '../domain/payments.ts';
import { HttpError } from '../http/errors.ts';
import { parseBody, referenceOf } from '../http/input.ts';
import { allowOnly } from '../http/method-not-allowed.ts';
import { alreadySent, headerBag, jsonResponse, nodeResponse } from '../http/response-headers.ts';
import { StreamSlots, type StreamCaps } from '../http/stream-slots.ts';

export interface PaymentRoutesDeps {
  payments: PaymentService;
  /** Serve the live status stream; off where long-lived connections are not possible. */
  streams: boolean;
  /** Streams open at once per client address and per payment (this instance's); past either, 429. */
  streamCaps: StreamCaps;
  /** The caller's address (X-Forwarded-For through trusted proxies, else the socket). */
  clientOf: (c: Context) => string;
  /** Bounds of open-amount payments, or false: the browser may not choose an amount (default). */
  openAmount: { min: number; max: number } | false;
  /** Rate limits on creating and on reading. */
  limitCreate: MiddlewareHandler;
  limitStatus: MiddlewareHandler;
  /** CORS for the merchant's pages, and the refusal of a POST from any other page. */
  cors: MiddlewareHandler;
  sameOrigin: MiddlewareHandler;
}

/** The status read's own headers (beside the security set and CORS), for the route and the fast path. */
export const STATUS_READ_HEADERS = Object.freeze({ 'cache-control': 'no-store' } as const);

/**
 * The status stream's own headers, beside the security set and CORS: streamSSE's (which sets
 * `cache-control: no-cache` itself) and one that tells nginx not to buffer it.
 */
const SSE_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  'cache-control': 'no-cache',
  connection: 'keep-alive',
  'content-type': 'text/event-stream',
  'x-accel-buffering': 'no',
});

/**
 * A view's SSE frame (`event`, `data`, `retry`), serialized and encoded once: every stream of a
 * payment is handed the same view object on a change, so 5,000 streams share one JSON.stringify and
 * one encoding, and each writes the same bytes.
 */
const frames = new WeakMap<PaymentView, Uint8Array>();
const encoder = new TextEncoder();
function frameOf(view: PaymentView): Uint8Array {
  let frame = frames.get(view);
  if (!frame) {
    // The JSON is one line (no newline in JSON.stringify's output), so it is one `data:` field.
    frame = encoder.encode(`event: ${STATUS_STREAM.event}\ndata: ${JSON.stringify(view)}\nretry: ${STATUS_STREAM.retryMs}\n\n`);
    frames.set(view, frame);
  }
  return frame;
}

/**
 * The same frame as one chunk of HTTP/1.1's chunked coding (size line, bytes, CRLF), framed once per
 * view: the bytes Node's `write(frame)` puts on the socket for a chunked answer, in one buffer that
 * every stream of the payment writes to its socket as is.
 */
const chunks = new WeakMap<PaymentView, Buffer>();
function chunkOf(view: PaymentView): Buffer {
  let chunk = chunks.get(view);
  if (!chunk) {
    const frame = frameOf(view);
    chunk = Buffer.concat([Buffer.from(`${frame.byteLength.toString(16)}\r\n`, 'latin1'), frame, Buffer.from('\r\n', 'latin1')]);
    chunks.set(view, chunk);
  }
  return chunk;
}

export function paymentRoutes({ payments, streams, streamCaps, clientOf, openAmount, limitCreate, limitStatus, cors, sameOrigin }: PaymentRoutesDeps): Hono {
  const routes = new Hono();
  const slots = new StreamSlots(streamCaps);
  // The browser calls these: CORS on every method, preflights included.
  routes.use(API_PATHS.payments, cors);
  routes.use(`${API_PATHS.payments}/*`, cors);

  routes.post(API_PATHS.payments, sameOrigin, limitCreate, async (c) => {
    if (!openAmount) {
      throw new HttpError(
        403,
        'open_amount_disabled',
        "This server does not let the browser choose an amount; pay through a checkout created by the merchant's server.",
      );
    }
    const input = await parseBody(c, OpenPaymentRequest);
    if (input.value < openAmount.min || input.value > openAmount.max) {
      const problem = `must be between ${formatReais(openAmount.min)} and ${formatReais(openAmount.max)}`;
      throw new HttpError(400, 'invalid_request', `value ${problem}`, { value: problem });
    }
    const view = await payments.create(input);
    return c.json(view, 201, { location: fillPath(API_PATHS.payment, { reference: view.reference }) });
  });

  // The hot path (every open page polls it): the stored view's JSON, cached per record version, in a
  // Response with plain-object headers, and no await when the stored record is fresh or final.
  routes.get(API_PATHS.payment, limitStatus, (c): Response | Promise<Response> => {
    const json = payments.readJson(referenceOf(c));
    return typeof json === 'string' ? jsonResponse(c, json, 200, STATUS_READ_HEADERS) : json.then((text) => jsonResponse(c, text, 200, STATUS_READ_HEADERS));
  });

  routes.get(API_PATHS.paymentEvents, limitStatus, async (c) => {
    if (!streams) throw new HttpError(404, 'not_found', 'Live status streams are off on this server; poll the payment instead.');
    const reference = referenceOf(c);
    // Counted before anything is read or held: past a cap the widget polls (EventSource gives up on a 429).
    const slot = slots.take(clientOf(c), reference);
    if ('refused' in slot) {
      const cap = slot.refused === 'client' ? `${streamCaps.perClient} from one address` : `${streamCaps.perPayment} of one payment`;
      return c.json(errorBody('too_many_streams', `Too many live status streams are open (at most ${cap}); poll the payment instead.`), 429);
    }
    // Queue views until the stream is open; the first read's errors answer as plain HTTP errors.
    const queue: PaymentView[] = [];
    let wake: (() => void) | null = null;
    let open = true;
    // Read before the first await: the adapter aborts it when the client goes away, even while the
    // first read still waits on the partner, when the stream's own abort handler would never run.
    const gone = c.req.raw.signal;
    let stop: () => void;
    try {
      stop = await payments.watch(reference, (view) => {
        queue.push(view);
        wake?.();
      });
    } catch (error) {
      slot.release();
      throw error;
    }
    // Shutdown ends the stream; EventSource reconnects to the next instance after `retry`.
    const forget = payments.onClose(() => {
      open = false;
      wake?.();
    });
    // Every way out releases the watch once: the client leaving (before or during the stream), the
    // stream ending, a shutdown.
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      open = false;
      wake?.();
      gone.removeEventListener('abort', release);
      forget();
      stop();
      slot.release();
    };
    if (gone.aborted) {
      release();
      return c.body(null, 204);
    }
    gone.addEventListener('abort', release, { once: true });

    /**
     * Hands the queued views (and keep-alive comments, as text) to `write` until a final one
     * (written `last`: the stream ends with it), a shutdown or the client leaving.
     */
    const pump = async (write: (frame: PaymentView | string, last?: boolean) => Promise<unknown> | undefined) => {
      try {
        while (open) {
          const view = queue.shift();
          if (view) {
            const last = isFinalStatus(view.status);
            await write(view, last);
            if (last) break;
            continue;
          }
          await new Promise<void>((resolve) => {
            const keepAlive = setTimeout(() => {
              void write(': keep-alive\n\n');
              resolve();
            }, STATUS_STREAM.keepAliveMs);
            wake = () => {
              clearTimeout(keepAlive);
              resolve();
            };
          });
          wake = null;
        }
      } finally {
        release();
      }
    };

    // On node:http, straight to Node's response: one write per frame, where a web stream costs a
    // TransformStream, a reader and several promises per frame (5,000 streams told of one change:
    // bench:sse). The same status, headers and bytes as streamSSE below (test/node/stream.test.ts).
    const outgoing = nodeResponse(c);
    if (outgoing) {
      outgoing.writeHead(200, { ...SSE_HEADERS, ...headerBag(c) });
      outgoing.flushHeaders();
      outgoing.once('close', release);
      const socket = outgoing.socket;
      const write = (frame: PaymentView | string, last?: boolean) => {
        // A status frame of a chunked answer goes to the socket as the chunk framed once for every
        // stream (chunkOf): one buffer and one system call, where Node's write frames it in three
        // pieces and corks the socket, twice the time for 5,000 streams told of one change
        // (bench:sse). Only while nothing of this answer waits in the response (its head is on the
        // socket; no earlier answer on the connection holds it back), so the bytes keep their order.
        // The answer's end (the last chunk) is written after, when the pump returns, off the path
        // of the frames of every other stream of the payment.
        if (typeof frame !== 'string' && outgoing.chunkedEncoding && outgoing.writableLength === 0 && socket && socket.writable) {
          if (socket.write(chunkOf(frame)) || last) return;
          return new Promise((resolve) => socket.once('drain', resolve));
        }
        const bytes = typeof frame === 'string' ? frame : frameOf(frame);
        // The final frame and the end of the answer in one write.
        if (last) return void outgoing.end(bytes);
        return outgoing.write(bytes) ? undefined : new Promise((resolve) => outgoing.once('drain', resolve));
      };
      void pump(write).finally(() => {
        if (!outgoing.writableEnded) outgoing.end();
      });
      return alreadySent();
    }
    for (const [name, value] of Object.entries(SSE_HEADERS)) c.header(name, value);
    return streamSSE(c, (stream) => {
      stream.onAbort(release);
      return pump((frame) => stream.write(typeof frame === 'string' ? frame : frameOf(frame)));
    });
  });

  allowOnly(routes, API_PATHS.payments, 'POST');
  allowOnly(routes, API_PATHS.payment, 'GET');
  allowOnly(routes, API_PATHS.paymentEvents, 'GET');
  return routes;
}
