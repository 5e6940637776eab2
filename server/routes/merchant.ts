/**
 * The merchant's server-to-server extras, behind the API key, no CORS: the accounting export
 * (`GET /reports`, CSV or JSON, streamed) and the stream of outcome events (`GET /events`, SSE) that
 * `pix-checkout listen` forwards to a local receiver. Neither carries a signing secret: the events
 * are the webhook's bodies, and listen signs them with a secret of its own.
 */
import { Hono, type MiddlewareHandler } from 'hono';
import { streamSSE } from 'hono/streaming';
import { MERCHANT_PATHS, OutcomeStreamQuery, ReportQuery, isTimeZone } from '../../src/shared/merchant.ts';
import type { MerchantFeed } from '../domain/merchant-feed.ts';
import { HttpError } from '../http/errors.ts';
import { parseQuery } from '../http/input.ts';
import { allowOnly } from '../http/method-not-allowed.ts';

export interface MerchantRoutesDeps {
  feed: MerchantFeed;
  requireApiKey: MiddlewareHandler;
}

/** The SSE event name of an outcome on GET /events. */
export const OUTCOME_STREAM_EVENT = 'outcome';

export function merchantRoutes({ feed, requireApiKey }: MerchantRoutesDeps): Hono {
  const routes = new Hono();

  routes.get(MERCHANT_PATHS.reports, requireApiKey, (c) => {
    const q = parseQuery(c, ReportQuery);
    if (q.time_zone !== undefined && !isTimeZone(q.time_zone)) {
      throw new HttpError(400, 'invalid_request', 'time_zone must be an IANA time zone such as America/Sao_Paulo', {
        time_zone: 'must be an IANA time zone such as America/Sao_Paulo',
      });
    }
    const format = q.format ?? 'csv';
    const chunks = feed.report({ from: q.from, to: q.to, format, timeZone: q.time_zone });
    const encoder = new TextEncoder();
    // Pulled: the next page is read from the store only when the client has taken the last one.
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        const next: IteratorResult<string, void> = await chunks.next();
        if (next.done) controller.close();
        else controller.enqueue(encoder.encode(next.value));
      },
      async cancel() {
        await chunks.return(undefined);
      },
    });
    return c.body(body, 200, {
      'content-type': format === 'csv' ? 'text/csv; charset=utf-8' : 'application/json; charset=utf-8',
      'content-disposition': `attachment; filename="pix-checkout-${q.from}-${q.to}.${format}"`,
      'cache-control': 'no-store',
    });
  });

  routes.get(MERCHANT_PATHS.events, requireApiKey, (c) => {
    const given = parseQuery(c, OutcomeStreamQuery).after ?? c.req.header('last-event-id');
    if (given !== undefined && !/^\d{1,15}$/.test(given)) {
      throw new HttpError(400, 'invalid_request', 'Last-Event-ID must be an event sequence number this stream gave', {
        'Last-Event-ID': 'is not a sequence number',
      });
    }
    const after = given === undefined ? null : Number(given);
    return streamSSE(c, async (stream) => {
      const closing = new AbortController();
      stream.onAbort(() => closing.abort());
      c.req.raw.signal.addEventListener('abort', () => closing.abort(), { once: true });
      // The client knows the stream is open before the first event (which may be long in coming).
      await stream.write(': listening\n\n');
      for await (const event of feed.events(after, closing.signal)) {
        if (event === null) await stream.write(': keep-alive\n\n');
        else await stream.writeSSE({ event: OUTCOME_STREAM_EVENT, id: String(event.seq), data: event.body });
      }
    });
  });

  allowOnly(routes, MERCHANT_PATHS.reports, 'GET');
  allowOnly(routes, MERCHANT_PATHS.events, 'GET');
  return routes;
}
