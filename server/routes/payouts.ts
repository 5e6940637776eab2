/**
 * Payouts and refunds, server to server (API key, no CORS): POST /transfers and
 * /checkouts/:id/refunds with an Idempotency-Key, GET /transfers/:id and the paged GET /transfers.
 */
import { Hono, type Context, type MiddlewareHandler } from 'hono';
import { CreateRefundRequest, CreateTransferRequest } from '../../src/shared/contract.ts';
import { IDEMPOTENCY_HEADER, IdempotencyKey, PAYOUT_PATHS, TransferListQuery } from '../../src/shared/payouts.ts';
import type { PayoutService } from '../domain/payouts.ts';
import { HttpError } from '../http/errors.ts';
import { checkoutIdOf, parseBody, parseQuery } from '../http/input.ts';
import { allowOnly } from '../http/method-not-allowed.ts';

export interface PayoutRoutesDeps {
  payouts: PayoutService;
  requireApiKey: MiddlewareHandler;
}

const NO_STORE = { 'cache-control': 'no-store' };

/** The Idempotency-Key header: required on every payout, so a retried request never pays twice. */
function idempotencyKeyOf(c: Context): string {
  const given = c.req.header(IDEMPOTENCY_HEADER);
  if (given === undefined) {
    throw new HttpError(400, 'invalid_request', `Send an ${IDEMPOTENCY_HEADER} header (a UUID, say): a retried request then never pays twice.`, {
      [IDEMPOTENCY_HEADER]: 'is required',
    });
  }
  const parsed = IdempotencyKey.safeParse(given);
  if (!parsed.success) {
    const problem = parsed.error.issues[0]?.message ?? 'is invalid';
    throw new HttpError(400, 'invalid_request', `${IDEMPOTENCY_HEADER} ${problem}`, { [IDEMPOTENCY_HEADER]: problem });
  }
  return parsed.data;
}

export function payoutRoutes({ payouts, requireApiKey }: PayoutRoutesDeps): Hono {
  const routes = new Hono();

  routes.post(PAYOUT_PATHS.transfers, requireApiKey, async (c) => {
    const key = idempotencyKeyOf(c);
    const { transfer, created } = await payouts.transfer(await parseBody(c, CreateTransferRequest), key);
    return c.json(transfer, created ? 201 : 200, NO_STORE);
  });

  routes.get(PAYOUT_PATHS.transfers, requireApiKey, async (c) => {
    const { status, cursor, limit } = parseQuery(c, TransferListQuery);
    return c.json(await payouts.list({ status, cursor, limit: limit === undefined ? undefined : Number(limit) }), 200, NO_STORE);
  });

  routes.get(PAYOUT_PATHS.transfer, requireApiKey, async (c) => c.json(await payouts.get(c.req.param('id') ?? ''), 200, NO_STORE));

  routes.post(PAYOUT_PATHS.refunds, requireApiKey, async (c) => {
    const id = checkoutIdOf(c);
    const key = idempotencyKeyOf(c);
    const { transfer, created } = await payouts.refund(id, await parseBody(c, CreateRefundRequest), key);
    return c.json(transfer, created ? 201 : 200, NO_STORE);
  });

  allowOnly(routes, PAYOUT_PATHS.transfers, 'GET, POST');
  allowOnly(routes, PAYOUT_PATHS.transfer, 'GET');
  allowOnly(routes, PAYOUT_PATHS.refunds, 'POST');
  return routes;
}
