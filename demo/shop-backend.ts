/**
 * The demo store's own backend: what a merchant's server does around the proxy. It keeps the price
 * list and the orders, computes an order's total itself (the page sends product ids and quantities,
 * never a price), creates the order's checkout at the proxy server to server with the API key, and
 * decides that an order is paid only from the server side: the proxy's signed webhook
 * (constructEvent) or the checkout's status read with the API key. The browser's `pix-paid` event
 * only makes the page ask here sooner. Every call to the proxy goes through the package's typed
 * client (createCheckoutClient), as a merchant's Node server would make it.
 *
 * An order's refunds are the checkout's (the proxy's view lists them); in test mode the panel refunds
 * a paid order to one of the sandbox's test customers (POST /shop/test/orders/:id/refunds).
 *
 * Every answer is JSON; bad input is a 4xx `{error: {code, message, fields?}}` (src/shared/errors.ts).
 * Orders live in memory: the stack's store is temporary too.
 */
import { randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import { Hono, type Context } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { getCookie, setCookie } from 'hono/cookie';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { z } from 'zod/mini';
// The package's entries, as a merchant's backend imports them (pix-checkout-server, pix-checkout-server/shared).
import {
  CheckoutApiError,
  EVENT_ID_HEADER,
  SIGNATURE_HEADER,
  WebhookVerificationError,
  constructEvent,
  createCheckoutClient,
  type CheckoutClient,
  type OutcomeEvent,
} from '../server/index.ts';
import { ORDER_PAGE_MODES, renderOrderPage, type OrderPageMode } from './order-page.ts';
import { CheckoutId, LIMITS, TransferValue, errorBody, parseInput, type CheckoutView, type ErrorCode, type TransferView } from '../src/shared/index.ts';

export interface Product {
  id: string;
  name: string;
  description: string;
  priceCents: number;
  /** An illustration under /demo/img/. */
  image: string;
}

/** The shop's price list: the only source of prices. */
export const CATALOG: readonly Product[] = [
  {
    id: 'cafe-especial',
    name: 'Café especial Serra Azul',
    description: 'Torra média, grãos moídos, 250 g. Notas de chocolate e caramelo.',
    priceCents: 3990,
    image: 'cafe.svg',
  },
  {
    id: 'pao-de-queijo',
    name: 'Pão de queijo congelado',
    description: 'Receita da casa com queijo canastra, pacote de 1 kg.',
    priceCents: 3250,
    image: 'pao-de-queijo.svg',
  },
  {
    id: 'doce-de-leite',
    name: 'Doce de leite artesanal',
    description: 'Feito no tacho de cobre, pote de vidro de 400 g.',
    priceCents: 1890,
    image: 'doce-de-leite.svg',
  },
  {
    id: 'queijo-canastra',
    name: 'Queijo canastra meia-cura',
    description: 'Peça de aproximadamente 1 kg, maturada por 22 dias.',
    priceCents: 7400,
    image: 'queijo.svg',
  },
  {
    id: 'goiabada-cascao',
    name: 'Goiabada cascão',
    description: 'Barra de 500 g, da fruta com casca. Perfeita com queijo.',
    priceCents: 1690,
    image: 'goiabada.svg',
  },
  { id: 'caneca-esmaltada', name: 'Caneca esmaltada', description: 'Ágata branca com borda azul, 350 ml. Vai ao fogo.', priceCents: 4500, image: 'caneca.svg' },
];

export const STORE_NAME = 'Empório Serra Azul';
/** Quantity of one product in one order. */
export const MAX_QUANTITY = 20;

/** Where the shop reaches the proxy, known once the stack listens. */
export interface ProxyAccess {
  /** The proxy's API base, e.g. http://127.0.0.1:8787/api. */
  apiUrl: string;
  apiKey: string;
  /** The stack's origin, for the sandbox's control API (test mode only). */
  origin: string;
}

export interface ShopOptions {
  /** The proxy; undefined while the stack is still starting (the shop then answers 503). */
  proxy: () => ProxyAccess | undefined;
  /** The HMAC key of the proxy's merchant webhooks (PIX_MERCHANT_WEBHOOK_SECRET). */
  webhookSecret: string;
  /** The shop runs against the sandbox: its page shows the test panel and /shop/test/* answers. */
  sandbox: boolean;
  /** Deadline of each call to the proxy (default 10 s). */
  proxyTimeoutMs?: number;
}

export type OrderStatus = 'awaiting_payment' | 'paid';

/**
 * The sandbox's test customers a refund can go to, by first name, with the key the shop sends. They
 * are the sandbox's documented ones (docs/guides/sandbox.md); each gives another outcome.
 */
export const REFUND_CUSTOMERS = {
  ana: { name: 'Ana Aprovada', pixKey: 'ana@cliente.example' },
  bruno: { name: 'Bruno Pendente', pixKey: 'bruno@cliente.example' },
  carla: { name: 'Carla Recusada', pixKey: 'carla@cliente.example' },
  diego: { name: 'Diego Banco Recusa', pixKey: 'diego@cliente.example' },
  elisa: { name: 'Elisa Banco Cancela', pixKey: 'elisa@cliente.example' },
  fabio: { name: 'Fabio Banco Lento', pixKey: '+5521912345678' },
} as const;
export type RefundCustomer = keyof typeof REFUND_CUSTOMERS;

/** Why a refund was refused (or is unknown), in the customer's words. */
const REFUND_REASONS: Record<string, string> = {
  bank_refused: 'o banco do cliente recusou',
  kyc_not_approved: 'o cadastro do cliente não está aprovado',
  key_owner_mismatch: 'a chave Pix não é do cliente',
  invalid_data: 'dados inválidos',
  refused: 'o serviço de pagamentos recusou',
  answer_lost: 'a resposta do serviço de pagamentos se perdeu',
};
const reasonText = (reason: string) => REFUND_REASONS[reason] ?? reason;

interface OrderLine {
  product: Product;
  quantity: number;
}

interface Order {
  id: string;
  lines: OrderLine[];
  totalCents: number;
  checkoutId: string;
  createdAt: number;
  status: OrderStatus;
  /** The checkout's status as the proxy last reported it (open, pending, paid, expired, canceled). */
  paymentStatus: string;
  paidAt: number | null;
  confirmedBy: 'webhook' | 'proxy' | null;
  paymentReference: string | null;
  /** The checkout's refunds as the proxy last listed them (or answered them), oldest first. */
  refunds: TransferView[];
  /** Something happened to a refund (a transfer.* webhook): read the checkout at the next look. */
  refundsStale: boolean;
  /** The session (cookie) of the browser that placed it: only that browser may read it. */
  session: string;
}

/**
 * The test panel's server-side log, in the order things happened: the partner's notifications to
 * the proxy (from the sandbox's delivery log), the proxy's signed webhooks to the shop, and the
 * shop's confirmations.
 */
export interface ShopLogEntry {
  seq: number;
  /** When the shop recorded it (wall clock). */
  at: string;
  /** `refund`: the shop asked the proxy for a refund (test mode). */
  kind: 'partner_webhook' | 'webhook' | 'webhook_rejected' | 'confirmation' | 'refund';
  note: string;
  event_id?: string;
  type?: string;
  order_id?: string | null;
  reference?: string;
  duplicate?: boolean;
  /** partner_webhook: the sandbox's delivery, updated as its attempts go. */
  delivery?: ReturnType<typeof partnerWebhookView>;
}

const OrderRequest = z.strictObject({
  items: z
    .array(
      z.strictObject({
        product_id: z.string().check(z.maxLength(64, 'must be at most 64 characters')),
        quantity: z.int('must be a whole number').check(z.gte(1, 'must be at least 1'), z.lte(MAX_QUANTITY, `must be at most ${MAX_QUANTITY}`)),
      }),
    )
    .check(z.minLength(1, 'must have at least one item'), z.maxLength(CATALOG.length * 2, `must have at most ${CATALOG.length * 2} items`)),
});

const RefundRequest = z.strictObject({
  customer: z.enum(Object.keys(REFUND_CUSTOMERS) as [RefundCustomer, ...RefundCustomer[]], {
    error: `must be one of ${Object.keys(REFUND_CUSTOMERS).join(', ')}`,
  }),
  /** Reais; without it, whatever of the order is not refunded yet. */
  value: z.optional(TransferValue),
});

const ORDER_ID = /^[0-9]{1,12}$/;
/**
 * Orders belong to the browser that placed them: a random session id in an HttpOnly cookie (a real
 * shop would use its login or session instead). Order numbers are sequential, so without this anyone
 * could read anyone's order by counting.
 */
const SESSION_COOKIE = 'shop_session';
const SESSION = /^[A-Za-z0-9_-]{32}$/;
const sameSession = (a: string, b: string | undefined) => {
  if (b === undefined) return false;
  const [x, y] = [Buffer.from(a), Buffer.from(b)];
  // Bytes, not characters: a non-ASCII value of the same length is another secret, not a 500.
  return x.length === y.length && timingSafeEqual(x, y);
};
const MAX_BODY_BYTES = 8 * 1024;
/** The proxy's outcome events are well under a kilobyte. */
const MAX_WEBHOOK_BYTES = 16 * 1024;

const reais = (cents: number) => cents / 100;
const brl = (cents: number) => new Intl.NumberFormat('pt-BR', { style: 'currency', currency: 'BRL' }).format(cents / 100);

class ProxyUnavailable extends Error {}

export interface Shop {
  /** The routes: /shop/config, /shop/products, /shop/orders, /shop/webhooks/pix, /shop/test/log, /shop/test/orders/:id/refunds. */
  app: Hono;
  /** An order's current state, for tests: as GET /shop/orders/:id would answer, without asking the proxy. */
  order(id: string): ReturnType<typeof orderView> | null;
}

export function createShop(options: ShopOptions): Shop {
  const orders = new Map<string, Order>();
  const seenEvents = new Set<string>();
  const log: ShopLogEntry[] = [];
  let nextOrder = 1001;
  let seq = 0;
  const timeoutMs = options.proxyTimeoutMs ?? 10_000;

  const note = (entry: Omit<ShopLogEntry, 'seq' | 'at'>) => {
    log.push({ seq: ++seq, at: new Date().toISOString(), ...entry });
    if (log.length > 200) log.shift();
  };

  /**
   * Test mode: records the partner's notifications the sandbox sent, new ones as new entries and
   * later attempts in place. Run before every entry of the shop's own, so a notification comes
   * before the outcome it caused.
   */
  const deliveries = new Map<string, ShopLogEntry>();
  async function syncPartnerWebhooks(): Promise<void> {
    const proxy = options.proxy();
    if (!options.sandbox || !proxy) return;
    const res = await fetch(`${proxy.origin}/sandbox/_sandbox/webhooks/deliveries`, { signal: AbortSignal.timeout(2000) }).catch(() => null);
    const body = (await res?.json().catch(() => null)) as { deliveries?: SandboxDelivery[] } | null;
    for (const delivery of body?.deliveries ?? []) {
      const view = partnerWebhookView(delivery);
      const known = deliveries.get(delivery.id);
      if (known) known.delivery = view;
      else {
        note({
          kind: 'partner_webhook',
          reference: view.reference,
          event_id: view.event_id,
          delivery: view,
          note: `Parceiro → proxy: ${view.kind} ${view.outcome}.`,
        });
        deliveries.set(delivery.id, log.at(-1)!);
      }
    }
  }

  const fail = (c: Context, status: ContentfulStatusCode, code: ErrorCode, message: string, fields?: Record<string, string>) =>
    c.json(errorBody(code, message, fields), status);

  /** The proxy's client with the API key, made again only if the stack's address or key changes. */
  let client: { url: string; apiKey: string; api: CheckoutClient } | undefined;
  function proxy(): CheckoutClient {
    const access = options.proxy();
    if (!access) throw new ProxyUnavailable('the stack is still starting');
    if (client?.url !== access.apiUrl || client.apiKey !== access.apiKey) {
      client = { url: access.apiUrl, apiKey: access.apiKey, api: createCheckoutClient({ url: access.apiUrl, apiKey: access.apiKey, timeoutMs }) };
    }
    return client.api;
  }

  async function markPaid(order: Order, by: 'webhook' | 'proxy', reference: string | null): Promise<void> {
    if (order.status === 'paid') return;
    await syncPartnerWebhooks();
    // Another request (the webhook, a poll) may have confirmed it meanwhile.
    if ((order.status as OrderStatus) === 'paid') return;
    order.status = 'paid';
    order.paymentStatus = 'paid';
    order.paidAt = Date.now();
    order.confirmedBy = by;
    order.paymentReference = reference;
    note({
      kind: 'confirmation',
      order_id: order.id,
      ...(reference ? { reference } : {}),
      note: `Pedido ${order.id} confirmado pela loja (${by === 'webhook' ? 'webhook assinado do proxy' : 'consulta ao proxy com a chave de API'}).`,
    });
  }

  /**
   * Reads the order's checkout at the proxy: paid only when the proxy says so for this order and
   * amount; its refunds as the proxy lists them.
   */
  /** The order's checkout from the proxy (null: not this order's), its news applied to the order. */
  async function readCheckout(order: Order): Promise<CheckoutView | null> {
    order.refundsStale = false;
    let checkout: CheckoutView;
    try {
      checkout = await proxy().checkouts.retrieve(order.checkoutId);
    } catch (error) {
      order.refundsStale = true;
      throw error;
    }
    if (checkout.order_id !== order.id || Math.round(checkout.value * 100) !== order.totalCents) return null;
    order.paymentStatus = checkout.status;
    order.refunds = checkout.refunds ?? [];
    if (checkout.status === 'paid') await markPaid(order, 'proxy', checkout.payment?.reference ?? null);
    return checkout;
  }

  /** A refund as the proxy answered it: replaces the one with its id, or joins the list. */
  function keepRefund(order: Order, refund: TransferView): void {
    const at = order.refunds.findIndex((r) => r.transfer_id === refund.transfer_id);
    if (at === -1) order.refunds.push(refund);
    else order.refunds[at] = refund;
  }

  const app = new Hono();

  // The playground's widget chooses its own amount (open amount): within the partner's limits, which
  // the dev stack's proxy also applies.
  const openAmount = { min: LIMITS.paymentValue.min, max: LIMITS.paymentValue.max };
  app.get('/shop/config', (c) => c.json({ sandbox: options.sandbox, store_name: STORE_NAME, currency: 'BRL', endpoint: '/api', open_amount: openAmount }));

  app.get('/shop/products', (c) =>
    c.json({
      products: CATALOG.map((p) => ({ id: p.id, name: p.name, description: p.description, price: reais(p.priceCents), image: `/demo/img/${p.image}` })),
      max_quantity: MAX_QUANTITY,
    }),
  );

  // The customer goes to pay: the order's total comes from the price list, never from the page.
  const tooLarge = (max: number) => bodyLimit({ maxSize: max, onError: (c) => fail(c, 413, 'payload_too_large', `The body is larger than ${max} bytes.`) });
  /** A JSON body in UTF-8, or the refusal to answer. */
  async function jsonBody(c: Context): Promise<{ ok: true; body: unknown } | { ok: false; response: Response }> {
    if (!/^application\/json\s*(;|$)/i.test(c.req.header('content-type') ?? ''))
      return { ok: false, response: fail(c, 415, 'unsupported_media_type', 'Send a JSON body with Content-Type: application/json.') };
    try {
      return { ok: true, body: JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(await c.req.arrayBuffer())) };
    } catch {
      return { ok: false, response: fail(c, 400, 'invalid_json', 'The body is not valid JSON.') };
    }
  }

  /** The order of this id placed by this browser; another browser's order is as missing as an unknown one. */
  /** The order named in the path, if this client placed it; `link`: its page's link (the checkout id) also opens it, to read. */
  function ownOrder(c: Context, link = false): { ok: true; order: Order } | { ok: false; response: Response } {
    const id = c.req.param('id') ?? '';
    if (!ORDER_ID.test(id)) return { ok: false, response: fail(c, 400, 'invalid_request', 'id must be an order number', { id: 'must be an order number' }) };
    const order = orders.get(id);
    // The customer's session, or the order page's link (its checkout id: 144 random bits), opened on another device.
    const owned = order && (sameSession(order.session, getCookie(c, SESSION_COOKIE)) || (link && sameSession(order.checkoutId, c.req.query('checkout'))));
    if (!owned) return { ok: false, response: fail(c, 404, 'not_found', 'No such order.') };
    return { ok: true, order };
  }

  app.post('/shop/orders', tooLarge(MAX_BODY_BYTES), async (c) => {
    const read = await jsonBody(c);
    if (!read.ok) return read.response;
    const parsed = parseInput(OrderRequest, read.body);
    if (!parsed.success) return c.json(parsed.body, 400);

    const quantities = new Map<Product, number>();
    const fields: Record<string, string> = {};
    parsed.data.items.forEach((item, i) => {
      const product = CATALOG.find((p) => p.id === item.product_id);
      if (!product) fields[`items.${i}.product_id`] = 'is not a product of this shop';
      else quantities.set(product, (quantities.get(product) ?? 0) + item.quantity);
    });
    for (const [product, quantity] of quantities) {
      if (quantity > MAX_QUANTITY) fields.items ??= `must have at most ${MAX_QUANTITY} of ${product.id}`;
    }
    if (Object.keys(fields).length > 0) {
      return fail(
        c,
        400,
        'invalid_request',
        Object.entries(fields)
          .map(([f, p]) => `${f} ${p}`)
          .join('; '),
        fields,
      );
    }
    const lines = [...quantities].map(([product, quantity]) => ({ product, quantity }));
    const totalCents = lines.reduce((sum, line) => sum + line.product.priceCents * line.quantity, 0);
    if (totalCents > LIMITS.paymentValue.max * 100) {
      return fail(c, 400, 'invalid_request', `items add up to more than ${brl(LIMITS.paymentValue.max * 100)}, the most one Pix payment can take`, {
        items: 'add up to more than one Pix payment can take',
      });
    }

    let session = getCookie(c, SESSION_COOKIE);
    if (!session || !SESSION.test(session)) {
      session = randomBytes(24).toString('base64url');
      setCookie(c, SESSION_COOKIE, session, { httpOnly: true, sameSite: 'Lax', path: '/shop' });
    }
    const id = String(nextOrder++);
    let checkout: CheckoutView;
    try {
      // The customer is at the payment step: the first payment is issued now, so the page's first
      // call reads it from the proxy's store (issue_payment, docs/proxy.md).
      checkout = await proxy().checkouts.create({ value: reais(totalCents), order_id: id, description: `${STORE_NAME} pedido ${id}`, issue_payment: true });
    } catch (error) {
      if (unreachable(error)) return fail(c, 503, 'upstream_unavailable', 'The payment service is unavailable; try again.');
      return fail(c, 502, 'upstream_refused', 'The payment service did not accept the order; try again.');
    }
    const order: Order = {
      id,
      lines,
      totalCents,
      checkoutId: checkout.checkout_id,
      createdAt: Date.now(),
      status: 'awaiting_payment',
      paymentStatus: checkout.status,
      paidAt: null,
      confirmedBy: null,
      paymentReference: null,
      refunds: [],
      refundsStale: false,
      session,
    };
    orders.set(id, order);
    return c.json(orderView(order), 201);
  });

  // The order's page: the store's page with the payment step open and the widget rendered here with
  // its payment inside (demo/order-page.ts), so the QR code is in the first paint. Its address is the
  // checkout's id, unguessable, so the link opens on another device too. `?render=script` and
  // `?render=script-preload` are the script-tag pages bench/phone.ts compares it with.
  app.get('/pagamento/:checkout', async (c) => {
    const id = c.req.param('checkout');
    const order = CheckoutId.safeParse(id).success ? [...orders.values()].find((o) => sameSession(o.checkoutId, id)) : undefined;
    if (!order) return fail(c, 404, 'not_found', 'No such order.');
    const mode = c.req.query('render') ?? 'ssr';
    if (!(ORDER_PAGE_MODES as readonly string[]).includes(mode)) {
      return fail(c, 400, 'invalid_request', `render must be one of ${ORDER_PAGE_MODES.join(', ')}`, {
        render: `must be one of ${ORDER_PAGE_MODES.join(', ')}`,
      });
    }
    let checkout: CheckoutView | null;
    try {
      checkout = await readCheckout(order);
    } catch (error) {
      if (unreachable(error)) return fail(c, 503, 'upstream_unavailable', 'The payment service is unavailable; try again.');
      return fail(c, 502, 'upstream_refused', 'The payment service did not answer for this order; try again.');
    }
    if (!checkout) return fail(c, 502, 'upstream_refused', 'The payment service answered another order for this checkout.');
    const page = await renderOrderPage({
      order: orderView(order),
      checkout,
      endpoint: '/api',
      scriptUrl: '/api/pix-checkout.js',
      mode: mode as OrderPageMode,
      headers: c.req.header(),
    });
    return c.html(page, 200, { 'cache-control': 'no-store' });
  });

  // The page asks on `pix-paid` and every few seconds; the answer is the shop's own judgement. A
  // paid order is read from memory, unless a refund is on its way or something happened to one.
  app.get('/shop/orders/:id', async (c) => {
    const own = ownOrder(c, true);
    if (!own.ok) return own.response;
    const order = own.order;
    let checked = true;
    if (order.status !== 'paid' || order.refundsStale || order.refunds.some((r) => r.status === 'pending')) {
      try {
        await readCheckout(order);
      } catch {
        // The proxy could not answer now: the order stays as last known; the page asks again.
        checked = false;
      }
    }
    return c.json({ ...orderView(order), checked });
  });

  // The proxy's signed outcome webhook (PIX_MERCHANT_WEBHOOK_URL): constructEvent checks the
  // signature over the raw body, then its time, then reads the event.
  app.post('/shop/webhooks/pix', tooLarge(MAX_WEBHOOK_BYTES), async (c) => {
    const raw = Buffer.from(await c.req.arrayBuffer());
    let event: OutcomeEvent;
    try {
      event = constructEvent(raw, c.req.raw.headers, options.webhookSecret);
    } catch (error) {
      if (!(error instanceof WebhookVerificationError)) throw error;
      if (error.code === 'invalid_payload') return fail(c, 400, 'invalid_request', error.message);
      note({ kind: 'webhook_rejected', note: `Webhook recusado: ${REJECTIONS[error.code]}.` });
      return fail(c, 401, 'unauthorized', error.message, {
        [SIGNATURE_HEADER]: error.code === 'missing_signature' ? 'is required' : 'does not sign this body',
      });
    }
    await syncPartnerWebhooks();
    if (c.req.header(EVENT_ID_HEADER) !== undefined && c.req.header(EVENT_ID_HEADER) !== event.id) {
      return fail(c, 400, 'invalid_request', `The ${EVENT_ID_HEADER} header does not match the event's id.`, {
        [EVENT_ID_HEADER]: "does not match the event's id",
      });
    }
    // At least once on the wire: the same event id again changes nothing.
    const duplicate = seenEvents.has(event.id);
    seenEvents.add(event.id);
    const found = event.data.order_id ? orders.get(event.data.order_id) : undefined;
    // The order this event is about: its checkout, not only its number.
    const order = found && event.data.checkout_id === found.checkoutId ? found : undefined;
    note({
      kind: 'webhook',
      event_id: event.id,
      type: event.type,
      order_id: event.data.order_id,
      reference: event.data.reference,
      duplicate,
      note: `${event.type} · ${describeEvent(event, order)} · assinatura válida${duplicate ? ' · repetido, ignorado' : ''}.`,
    });
    if (duplicate || !order) return c.json({ received: true, duplicate });
    if (event.type === 'payment.paid' && event.data.value !== null && Math.round(event.data.value * 100) === order.totalCents) {
      await markPaid(order, 'webhook', event.data.reference);
    } else if (event.type.startsWith('transfer.')) {
      // A refund's outcome: known at once, and the checkout's list read at the next look.
      const refund = order.refunds.find((r) => r.transfer_id === event.data.transfer_id);
      const status = TRANSFER_OUTCOMES[event.type];
      if (refund && status) Object.assign(refund, { status, ...(event.data.reason ? { reason: event.data.reason } : {}) });
      order.refundsStale = true;
    }
    return c.json({ received: true, duplicate });
  });

  // Test mode only: /shop/test/* does not exist for a shop that runs against the real service.
  app.use('/shop/test/*', async (c, next) => {
    if (!options.sandbox) return c.json(errorBody('not_found', `Nothing at ${c.req.method} ${c.req.path}.`), 404);
    await next();
  });

  // What the panel's live log shows of the server side, oldest first.
  app.get('/shop/test/log', async (c) => {
    const limitText = c.req.query('limit') ?? '50';
    if (!/^[0-9]{1,3}$/.test(limitText) || Number(limitText) < 1 || Number(limitText) > 200) {
      return fail(c, 400, 'invalid_request', 'limit must be a whole number from 1 to 200', { limit: 'must be a whole number from 1 to 200' });
    }
    await syncPartnerWebhooks();
    return c.json({ entries: log.slice(-Number(limitText)) });
  });

  // The panel refunds a paid order to a test customer's key: `{customer, value?}`, without a value
  // whatever is left. The proxy decides whether it can (paid, not more than was paid) and its 4xx
  // answers are passed on; a new Idempotency-Key per request, as each click is a new refund.
  app.post('/shop/test/orders/:id/refunds', tooLarge(MAX_BODY_BYTES), async (c) => {
    const own = ownOrder(c);
    if (!own.ok) return own.response;
    const order = own.order;
    const read = await jsonBody(c);
    if (!read.ok) return read.response;
    const parsed = parseInput(RefundRequest, read.body);
    if (!parsed.success) return c.json(parsed.body, 400);
    const customer = REFUND_CUSTOMERS[parsed.data.customer];
    const value = parsed.data.value;
    let refund: TransferView;
    try {
      refund = await proxy().refunds.create(
        order.checkoutId,
        { pix_key: customer.pixKey, ...(value === undefined ? {} : { value }) },
        { idempotencyKey: randomUUID() },
      );
    } catch (error) {
      return refundFailure(c, error);
    }
    keepRefund(order, refund);
    await syncPartnerWebhooks();
    note({
      kind: 'refund',
      order_id: order.id,
      reference: refund.transfer_id,
      note: `Reembolso de ${brl(Math.round(refund.value * 100))} do pedido ${order.id} para ${refund.pix_key} (${customer.name}) solicitado ao proxy: ${refundStatusText(refund)}.`,
    });
    return c.json({ refund: refundView(refund), order: { ...orderView(order), checked: true } }, 201);
  });

  /** A refund the proxy did not make: its 4xx passed on as it said it; no answer is a 503 or 504. */
  function refundFailure(c: Context, error: unknown): Response {
    if (unreachable(error)) {
      if (error instanceof CheckoutApiError && error.code === 'timeout') {
        return fail(
          c,
          504,
          'upstream_timeout',
          'The payment service did not answer in time: the refund may have been made; look at the order before trying again.',
        );
      }
      return fail(c, 503, 'upstream_unavailable', 'The payment service is unavailable; try again.');
    }
    if (error instanceof CheckoutApiError && PASSED_ON.has(error.status)) {
      const { code, status, fields } = error;
      return c.json({ error: { code, message: proxyMessage(error), ...(fields ? { fields } : {}) } }, status as ContentfulStatusCode);
    }
    return fail(c, 502, 'upstream_refused', 'The payment service did not accept the refund.');
  }

  return {
    app,
    order(id) {
      const order = orders.get(id);
      return order ? orderView(order) : null;
    },
  };
}

function orderView(order: Order) {
  return {
    order_id: order.id,
    status: order.status,
    total: reais(order.totalCents),
    items: order.lines.map(({ product, quantity }) => ({
      product_id: product.id,
      name: product.name,
      quantity,
      unit_price: reais(product.priceCents),
      total: reais(product.priceCents * quantity),
    })),
    checkout_id: order.checkoutId,
    payment_status: order.paymentStatus,
    // The paid payment's reference: the test panel returns it (a Pix return, in the sandbox).
    payment_reference: order.paymentReference,
    created_at: new Date(order.createdAt).toISOString(),
    paid_at: order.paidAt === null ? null : new Date(order.paidAt).toISOString(),
    confirmed_by: order.confirmedBy,
    refunds: order.refunds.map(refundView),
  };
}

/** A refund as the order's page shows it: the key masked (as the proxy gives it), a reason in words. */
function refundView(refund: TransferView) {
  return {
    transfer_id: refund.transfer_id,
    status: refund.status,
    value: refund.value,
    pix_key: refund.pix_key,
    pix_key_type: refund.pix_key_type,
    ...(refund.reason ? { reason: refund.reason, reason_text: reasonText(refund.reason) } : {}),
    created_at: refund.created_at,
    updated_at: refund.updated_at,
  };
}

const REFUND_STATUS: Record<TransferView['status'], string> = {
  pending: 'pendente',
  approved: 'concluído',
  canceled: 'cancelado',
  refused: 'recusado',
  unknown: 'desconhecido',
};
const refundStatusText = (refund: Pick<TransferView, 'status' | 'reason'>) =>
  `${REFUND_STATUS[refund.status]}${refund.reason ? ` (${reasonText(refund.reason)})` : ''}`;

/** What a transfer.* event says of a refund's status. */
const TRANSFER_OUTCOMES: Partial<Record<OutcomeEvent['type'], TransferView['status']>> = {
  'transfer.approved': 'approved',
  'transfer.canceled': 'canceled',
  'transfer.refused': 'refused',
};

/** The log's words about what an outcome event is about. */
function describeEvent(event: OutcomeEvent, order: Order | undefined): string {
  const { data } = event;
  if (event.type.startsWith('transfer.')) {
    if (!data.order_id) return 'transferência sem pedido (repasse)';
    const what = `reembolso de ${data.value === null ? 'valor desconhecido' : brl(Math.round(data.value * 100))} do pedido ${data.order_id}`;
    if (!order) return `${what}, pedido desconhecido`;
    const status = TRANSFER_OUTCOMES[event.type];
    return status ? `${what} ${refundStatusText({ status, reason: data.reason })}` : what;
  }
  if (!data.order_id) return 'pagamento sem pedido (valor aberto, playground)';
  // A Pix return (devolução, MED): money given back to the payer; never refunded again.
  if (event.type === 'payment.returned' && data.returned_value !== undefined)
    return `${brl(Math.round(data.returned_value * 100))} devolvido ao cliente · ${order ? `pedido ${order.id}` : `pedido ${data.order_id} desconhecido`}`;
  return order ? `pedido ${order.id}` : `pedido ${data.order_id} desconhecido`;
}

const REJECTIONS: Record<Exclude<WebhookVerificationError['code'], 'invalid_payload'>, string> = {
  missing_signature: 'sem assinatura',
  invalid_signature: 'assinatura inválida',
  timestamp_out_of_window: 'assinatura fora da janela de tempo (repetição, ou um relógio errado)',
};

/** The proxy's refusals a refund passes on to the panel as they are. */
const PASSED_ON = new Set([400, 409, 422]);

/** No answer from the proxy: the stack is starting, or the request never got one. */
const unreachable = (error: unknown) => error instanceof ProxyUnavailable || (error instanceof CheckoutApiError && error.status === 0);

/** The proxy's own message, as it wrote it. */
const proxyMessage = (error: CheckoutApiError): string => error.apiMessage ?? error.message;

/** The fields of the sandbox's delivery log (server/sandbox/README.md) the panel shows. */
interface SandboxDelivery {
  id: string;
  event_id: string;
  kind: string;
  outcome: string;
  external_reference: string;
  trigger: string;
  state: string;
  attempts: { number: number; at: string; status: number | null; error: string | null; delivered: boolean }[];
  created_at: string;
}

function partnerWebhookView(d: SandboxDelivery) {
  const last = d.attempts.at(-1);
  return {
    id: d.id,
    event_id: d.event_id,
    kind: d.kind,
    outcome: d.outcome,
    reference: d.external_reference,
    trigger: d.trigger,
    state: d.state,
    attempts: d.attempts.length,
    status: last?.status ?? null,
    at: d.created_at,
  };
}
