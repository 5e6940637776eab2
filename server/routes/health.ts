/**
 * `GET /health` (the process answers) and `GET /ready` (the store answers and the partner service is
 * reachable: domain/readiness.ts), for load balancers and orchestrators. Outside the API's base path.
 */
import { Hono } from 'hono';
import { errorBody } from '../../src/shared/errors.ts';
import type { ReadinessReport } from '../domain/readiness.ts';
import { allowOnly } from '../http/method-not-allowed.ts';

export const HEALTH_PATHS = { health: '/health', ready: '/ready' } as const;

const NO_STORE = { 'cache-control': 'no-store' } as const;

export function healthRoutes(ready: () => Promise<ReadinessReport>): Hono {
  const routes = new Hono();
  routes.get(HEALTH_PATHS.health, (c) => c.json({ status: 'ok' }, 200, NO_STORE));
  routes.get(HEALTH_PATHS.ready, async (c) => {
    const report = await ready();
    const warnings = report.warnings ? { warnings: report.warnings } : {};
    const reads = report.reads ? { reads: report.reads } : {};
    const codes = report.status_codes ? { status_codes: report.status_codes } : {};
    if (report.ready) return c.json({ status: 'ready', checks: report.checks, ...codes, ...reads, ...warnings }, 200, NO_STORE);
    const message = report.cause ? `Not ready to serve payments yet: ${report.cause}.` : 'Not ready to serve payments yet.';
    return c.json({ ...errorBody('not_ready', message), checks: report.checks, ...codes, ...reads, ...warnings }, 503, NO_STORE);
  });
  allowOnly(routes, HEALTH_PATHS.health, 'GET');
  allowOnly(routes, HEALTH_PATHS.ready, 'GET');
  return routes;
}
