/** The browser API for payments: thin handlers that validate with src/shared and call the service. */
import { Hono, type Context } from 'hono';
import { streamSSE } from 'hono/streaming';
import { API_PATHS, CreatePaymentRequest, Reference, STATUS_STREAM, fillPath, type PaymentView } from '../../src/shared/contract.ts';
import { parseInput } from '../../src/shared/errors.ts';
import { isFinalStatus } from '../../src/shared/status.ts';
import { HttpError } from '../http-errors.ts';
import { readJson } from '../json-body.ts';
import type { PaymentService } from '../payments.ts';

export interface PaymentRoutesDeps {
  payments: PaymentService;
  /** Serve the live status stream; off where long-lived connections are not possible. */
  streams: boolean;
}

/** The largest create body accepted; a real one is under 300 bytes. */
export const MAX_CREATE_BODY_BYTES = 4 * 1024;

async function readJsonBody(c: Context, maxBytes: number): Promise<unknown> {
  const read = await readJson(c, maxBytes);
  if (read.ok) return read.body;
  switch (read.problem) {
    case 'media_type':
      throw new HttpError(415, 'unsupported_media_type', 'Send the body as JSON with Content-Type: application/json.');
    case 'too_large':
      throw new HttpError(413, 'payload_too_large', `The body must be at most ${maxBytes} bytes.`);
    default:
      throw new HttpError(400, 'invalid_json', 'The body is not valid JSON.');
  }
}

function referenceOf(c: Context): string {
  const reference = Reference.safeParse(c.req.param('reference'));
  if (reference.success) return reference.data;
  const message = reference.error.issues[0]?.message ?? 'is invalid';
  throw new HttpError(400, 'invalid_reference', `reference ${message}`, { reference: message });
}

export function paymentRoutes({ payments, streams }: PaymentRoutesDeps): Hono {
  const routes = new Hono();

  routes.post(API_PATHS.payments, async (c) => {
    const parsed = parseInput(CreatePaymentRequest, await readJsonBody(c, MAX_CREATE_BODY_BYTES));
    if (!parsed.success) return c.json(parsed.body, 400);
    const view = await payments.create(parsed.data);
    return c.json(view, 201, { location: fillPath(API_PATHS.payment, { reference: view.reference }) });
  });

  routes.get(API_PATHS.payment, async (c) => {
    const view = await payments.read(referenceOf(c));
    c.header('cache-control', 'no-store');
    return c.json(view);
  });

  routes.get(API_PATHS.paymentEvents, async (c) => {
    if (!streams) throw new HttpError(404, 'not_found', 'Live status streams are off on this server; poll the payment instead.');
    const reference = referenceOf(c);
    // Queue views until the stream is open; the first read's errors answer as plain HTTP errors.
    const queue: PaymentView[] = [];
    let wake: (() => void) | null = null;
    const stop = await payments.watch(reference, (view) => {
      queue.push(view);
      wake?.();
    });
    c.header('cache-control', 'no-store');
    c.header('x-accel-buffering', 'no');
    return streamSSE(c, async (stream) => {
      let open = true;
      stream.onAbort(() => {
        open = false;
        wake?.();
      });
      try {
        while (open) {
          const view = queue.shift();
          if (view) {
            await stream.writeSSE({ event: STATUS_STREAM.event, data: JSON.stringify(view), retry: STATUS_STREAM.retryMs });
            if (isFinalStatus(view.status)) break;
            continue;
          }
          await new Promise<void>((resolve) => {
            const keepAlive = setTimeout(() => {
              void stream.write(': keep-alive\n\n');
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
        stop();
      }
    });
  });

  return routes;
}
