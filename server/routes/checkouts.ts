/**
 * Checkouts: creation and confirmation for the merchant's server (API key, no CORS), and the
 * checkout's payment for the browser, which sends no amount: the checkout fixed it.
 */
import { Hono, type MiddlewareHandler } from 'hono';
import { CheckoutPaymentQuery, CheckoutPaymentRequest, CreateCheckoutRequest } from '../../src/shared/contract.ts';
import { FIRST_SCREEN } from '../../src/shared/first-screen.ts';
import { CHECKOUT_PATHS } from '../../src/shared/wire.ts';
import type { CheckoutService } from '../domain/checkouts.ts';
import type { Render } from '../http/first-screens.ts';
import { checkoutIdOf, parseBody, parseOptionalBody, parseQuery } from '../http/input.ts';
import { allowOnly } from '../http/method-not-allowed.ts';

export interface CheckoutRoutesDeps {
  checkouts: CheckoutService;
  requireApiKey: MiddlewareHandler;
  limitCreate: MiddlewareHandler;
  /** CORS for the merchant's pages, and the refusal of a POST from any other page (the browser's path only). */
  cors: MiddlewareHandler;
  sameOrigin: MiddlewareHandler;
  /**
   * The payment's first screen for a script-tag page's head (`?render=`, src/shared/first-screen.ts
   * FIRST_SCREEN): the widget's server render (server/ssr/render.ts), loaded on the first such request.
   */
  renderFirstScreen: Render;
}

export function checkoutRoutes({ checkouts, requireApiKey, limitCreate, cors, sameOrigin, renderFirstScreen }: CheckoutRoutesDeps): Hono {
  const routes = new Hono();
  // The API-key paths are server to server: no CORS there.
  routes.use(CHECKOUT_PATHS.checkoutPayment, cors);

  routes.post(CHECKOUT_PATHS.checkouts, requireApiKey, async (c) => {
    const { checkout, created } = await checkouts.create(await parseBody(c, CreateCheckoutRequest));
    return c.json(checkout, created ? 201 : 200, { 'cache-control': 'no-store' });
  });

  routes.get(CHECKOUT_PATHS.checkout, requireApiKey, async (c) => {
    return c.json(await checkouts.get(checkoutIdOf(c)), 200, { 'cache-control': 'no-store' });
  });

  routes.post(CHECKOUT_PATHS.checkoutPayment, sameOrigin, limitCreate, async (c) => {
    const id = checkoutIdOf(c);
    const locale = parseQuery(c, CheckoutPaymentQuery)[FIRST_SCREEN.param];
    // No body, or `{"renew": true}`; any other field (a value) is refused: the checkout fixed the amount.
    const body = await parseOptionalBody(c, CheckoutPaymentRequest);
    const { payment, created } = await checkouts.payment(id, { renew: body?.renew === true });
    // The payment is issued and recorded whatever the render does: a render that fails leaves the screen to the widget.
    const screen = locale && (await renderFirstScreen(payment, { locale, headers: c.req.raw.headers }).catch(() => undefined));
    return c.json(screen ? { ...payment, [FIRST_SCREEN.field]: screen } : payment, created ? 201 : 200, { 'cache-control': 'no-store' });
  });

  allowOnly(routes, CHECKOUT_PATHS.checkouts, 'POST');
  allowOnly(routes, CHECKOUT_PATHS.checkout, 'GET');
  allowOnly(routes, CHECKOUT_PATHS.checkoutPayment, 'POST');
  return routes;
}
