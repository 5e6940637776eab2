/**
 * Checkouts: creation and confirmation for the merchant's server (API key, no CORS), and the
 * checkout's payment for the browser, which sends no amount: the checkout fixed it.
 */
import { Hono, type MiddlewareHandler } from 'hono';
import { CHECKOUT_PATHS, CreateCheckoutRequest } from '../../src/shared/contract.ts';
import { z } from 'zod/mini';
import type { CheckoutService } from '../domain/checkouts.ts';
import { checkoutIdOf, parseBody, parseOptionalBody } from '../http/input.ts';

/** The browser's request for a checkout's payment takes no fields: any field (a value) is refused. */
const NoFields = /* @__PURE__ */ z.strictObject({});

export interface CheckoutRoutesDeps {
  checkouts: CheckoutService;
  requireApiKey: MiddlewareHandler;
  limitCreate: MiddlewareHandler;
}

export function checkoutRoutes({ checkouts, requireApiKey, limitCreate }: CheckoutRoutesDeps): Hono {
  const routes = new Hono();

  routes.post(CHECKOUT_PATHS.checkouts, requireApiKey, async (c) => {
    const { checkout, created } = await checkouts.create(await parseBody(c, CreateCheckoutRequest));
    return c.json(checkout, created ? 201 : 200, { 'cache-control': 'no-store' });
  });

  routes.get(CHECKOUT_PATHS.checkout, requireApiKey, async (c) => {
    return c.json(await checkouts.get(checkoutIdOf(c)), 200, { 'cache-control': 'no-store' });
  });

  routes.post(CHECKOUT_PATHS.checkoutPayment, limitCreate, async (c) => {
    const id = checkoutIdOf(c);
    await parseOptionalBody(c, NoFields);
    const { payment, created } = await checkouts.payment(id);
    return c.json(payment, created ? 201 : 200, { 'cache-control': 'no-store' });
  });

  return routes;
}
