/**
 * `GET /metrics`: the proxy's metrics in Prometheus text (server/observability/metrics.ts,
 * docs/metrics.md), for a scraper bearing PIX_METRICS_TOKEN. Outside the API's base path: no CORS,
 * nothing a browser is meant to read. Mounted only when the token is set (else 404, as any unknown path).
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { Hono } from 'hono';
import { errorBody } from '../../src/shared/errors.ts';
import { allowOnly } from '../http/method-not-allowed.ts';
import type { Metrics } from '../observability/metrics.ts';

export const METRICS_PATH = '/metrics';

const digest = (text: string) => createHash('sha256').update(text, 'utf8').digest();

export function metricsRoutes(metrics: Metrics, token: string): Hono {
  // Compared in constant time over SHA-256 digests: equal lengths, and no hint of the token's length.
  const expected = digest(token);
  const routes = new Hono();
  routes.get(METRICS_PATH, async (c) => {
    const match = /^Bearer ([\x21-\x7e]+)$/.exec(c.req.header('authorization') ?? '');
    if (!match || !timingSafeEqual(digest(match[1]!), expected)) {
      return c.json(errorBody('unauthorized', 'Send the metrics token as Authorization: Bearer <PIX_METRICS_TOKEN>.'), 401, {
        'www-authenticate': 'Bearer',
        'cache-control': 'no-store',
      });
    }
    const { text, contentType } = await metrics.scrape();
    return c.body(text, 200, { 'content-type': contentType, 'cache-control': 'no-store' });
  });
  allowOnly(routes, METRICS_PATH, 'GET');
  return routes;
}
