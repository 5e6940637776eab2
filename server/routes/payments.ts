/** The browser API for payments: thin handlers that validate with src/shared and call the service. */
import { Hono, type Context, type MiddlewareHandler } from 'hono';
import { OpenPaymentRequest, type PaymentView } from '../../src/shared/contract.ts';
import { errorBody } from '../../src/shared/errors.ts';
import { formatReais } from '../../src/shared/limits.ts';
import { isFinalStatus } from '../../src/shared/status.ts';
import { API_PATHS, STATUS_STREAM, fillPath } from '../../src/shared/wire.ts';
import type { PaymentService } from '../domain/payments.ts';
import { HttpError } from '../http/errors.ts';
import { parseBody, referenceOf } from '../http/input.ts';
import { allowOnly } from '../http/method-not-allowed.ts';
import { clientGoneSignal, respondEventStream, type FrameWriter } from '../http/event-stream.ts';
import { jsonResponse } from '../http/response-headers.ts';
import { StreamSlots, type StreamCaps } from '../http/stream-slots.ts';

export interface PaymentRoutesDeps {
  payments: PaymentService;
  /** Serve the live status stream; off where long-lived connections are not possible. */
  streams: boolean;
  /** Streams open at once per client address and per payment (this instance's); past either, 429. */
  streamCaps: StreamCaps;
  /** Where the open streams are counted (the app's metrics read it); default: a new count of this route's own. */
  streamSlots?: StreamSlots | undefined;
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

export function paymentRoutes({
  payments,
  streams,
  streamCaps,
  streamSlots,
  clientOf,
  openAmount,
  limitCreate,
  limitStatus,
  cors,
  sameOrigin,
}: PaymentRoutesDeps): Hono {
  const routes = new Hono();
  const slots = streamSlots ?? new StreamSlots(streamCaps);
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
    // Taken before the first await: aborted when the client goes away, even while the first read
    // still waits on the partner, when the stream's own abort handler would never run.
    const gone = clientGoneSignal(c);
    let stop: () => void;
    try {
      stop = await payments.watches.watch(reference, (view) => {
        queue.push(view);
        wake?.();
      });
    } catch (error) {
      slot.release();
      throw error;
    }
    // Shutdown ends the stream; EventSource reconnects to the next instance after `retry`.
    const forget = payments.watches.onClose(() => {
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
    const pump = async (write: FrameWriter) => {
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
    return respondEventStream(c, pump, release);
  });

  allowOnly(routes, API_PATHS.payments, 'POST');
  allowOnly(routes, API_PATHS.payment, 'GET');
  allowOnly(routes, API_PATHS.paymentEvents, 'GET');
  return routes;
}
