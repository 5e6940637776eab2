/**
 * The demo store's own backend: what a merchant's server does around the proxy. It keeps the price
 * list and the orders, computes an order's total itself (the page sends product ids and quantities,
 * never a price), creates the order's checkout at the proxy server to server with the API key, and
 * decides that an order is paid only from the server side: the proxy's signed webhook
 * (verifyWebhookSignature) or the checkout's status read with the API key. The browser's `pix-paid`
 * event only makes the page ask here sooner.
 *
 * Every answer is JSON; bad input is a 4xx `{error: {code, message, fields?}}` (src/shared/errors.ts).
 * Orders live in memory: the stack's store is temporary too.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { Hono, type Context } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { getCookie, setCookie } from 'hono/cookie';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { z } from 'zod/mini';
// The package's entries, as a merchant's backend imports them (pix-checkout/server, pix-checkout/shared).
import { EVENT_ID_HEADER, SIGNATURE_HEADER, verifyWebhookSignature } from '../server/index.ts';
import { CheckoutView, LIMITS, OutcomeEvent, errorBody, parseInput, type ErrorCode } from '../src/shared/index.ts';

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
  kind: 'partner_webhook' | 'webhook' | 'webhook_rejected' | 'confirmation';
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

const ORDER_ID = /^[0-9]{1,12}$/;
/**
 * Orders belong to the browser that placed them: a random session id in an HttpOnly cookie (a real
 * shop would use its login or session instead). Order numbers are sequential, so without this anyone
 * could read anyone's order by counting.
 */
const SESSION_COOKIE = 'shop_session';
const SESSION = /^[A-Za-z0-9_-]{32}$/;
const sameSession = (a: string, b: string | undefined) => b !== undefined && a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b));
const MAX_BODY_BYTES = 8 * 1024;
/** The proxy's outcome events are well under a kilobyte. */
const MAX_WEBHOOK_BYTES = 16 * 1024;

const reais = (cents: number) => cents / 100;
const brl = (cents: number) => new Intl.NumberFormat('pt-BR', { style: 'currency', currency: 'BRL' }).format(cents / 100);

class ProxyUnavailable extends Error {}

export interface Shop {
  /** The routes: /shop/config, /shop/products, /shop/orders, /shop/webhooks/pix, /shop/test/log. */
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

  /** A server-to-server call to the proxy with the API key. */
  async function callProxy(method: 'GET' | 'POST', path: string, body?: unknown): Promise<{ status: number; body: unknown }> {
    const proxy = options.proxy();
    if (!proxy) throw new ProxyUnavailable('the stack is still starting');
    try {
      const res = await fetch(proxy.apiUrl + path, {
        method,
        headers: { authorization: `Bearer ${proxy.apiKey}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(timeoutMs),
      });
      return { status: res.status, body: await res.json().catch(() => null) };
    } catch (error) {
      throw new ProxyUnavailable((error as Error).message);
    }
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

  /** Asks the proxy about the order's checkout; paid only when the proxy says so for this order and amount. */
  async function confirmWithProxy(order: Order): Promise<void> {
    const answer = await callProxy('GET', `/checkouts/${encodeURIComponent(order.checkoutId)}`);
    if (answer.status !== 200) throw new ProxyUnavailable(`the proxy answered ${answer.status}`);
    const parsed = CheckoutView.safeParse(answer.body);
    if (!parsed.success) throw new ProxyUnavailable('the proxy answered an unexpected body');
    const checkout = parsed.data;
    if (checkout.order_id !== order.id || Math.round(checkout.value * 100) !== order.totalCents) return;
    order.paymentStatus = checkout.status;
    if (checkout.status === 'paid') await markPaid(order, 'proxy', checkout.payment?.reference ?? null);
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
  app.post('/shop/orders', tooLarge(MAX_BODY_BYTES), async (c) => {
    if (!/^application\/json\s*(;|$)/i.test(c.req.header('content-type') ?? ''))
      return fail(c, 415, 'unsupported_media_type', 'Send a JSON body with Content-Type: application/json.');
    let body: unknown;
    try {
      body = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(await c.req.arrayBuffer()));
    } catch {
      return fail(c, 400, 'invalid_json', 'The body is not valid JSON.');
    }
    const parsed = parseInput(OrderRequest, body);
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
    let answer: { status: number; body: unknown };
    try {
      answer = await callProxy('POST', '/checkouts', { value: reais(totalCents), order_id: id, description: `${STORE_NAME} pedido ${id}` });
    } catch {
      return fail(c, 503, 'upstream_unavailable', 'The payment service is unavailable; try again.');
    }
    const checkout = CheckoutView.safeParse(answer.body);
    if ((answer.status !== 201 && answer.status !== 200) || !checkout.success) {
      return fail(c, 502, 'upstream_refused', 'The payment service did not accept the order; try again.');
    }
    const order: Order = {
      id,
      lines,
      totalCents,
      checkoutId: checkout.data.checkout_id,
      createdAt: Date.now(),
      status: 'awaiting_payment',
      paymentStatus: checkout.data.status,
      paidAt: null,
      confirmedBy: null,
      paymentReference: null,
      session,
    };
    orders.set(id, order);
    return c.json(orderView(order), 201);
  });

  // The page asks on `pix-paid` and every few seconds; the answer is the shop's own judgement.
  app.get('/shop/orders/:id', async (c) => {
    const id = c.req.param('id');
    if (!ORDER_ID.test(id)) return fail(c, 400, 'invalid_request', 'id must be an order number', { id: 'must be an order number' });
    const order = orders.get(id);
    // Another browser's order answers exactly like a missing one.
    if (!order || !sameSession(order.session, getCookie(c, SESSION_COOKIE))) return fail(c, 404, 'not_found', 'No such order.');
    let checked = true;
    if (order.status !== 'paid') {
      try {
        await confirmWithProxy(order);
      } catch {
        // The proxy could not answer now: the order stays as last known; the page asks again.
        checked = false;
      }
    }
    return c.json({ ...orderView(order), checked });
  });

  // The proxy's signed outcome webhook (PIX_MERCHANT_WEBHOOK_URL): verified on the raw body first.
  app.post('/shop/webhooks/pix', tooLarge(MAX_WEBHOOK_BYTES), async (c) => {
    const raw = Buffer.from(await c.req.arrayBuffer());
    if (!verifyWebhookSignature(raw, c.req.header(SIGNATURE_HEADER), options.webhookSecret)) {
      note({ kind: 'webhook_rejected', note: 'Webhook recusado: assinatura inválida ou ausente.' });
      return fail(c, 401, 'unauthorized', `The ${SIGNATURE_HEADER} header does not sign this body.`, { [SIGNATURE_HEADER]: 'does not sign this body' });
    }
    let json: unknown;
    try {
      json = JSON.parse(raw.toString('utf8'));
    } catch {
      return fail(c, 400, 'invalid_json', 'The body is not valid JSON.');
    }
    const parsed = parseInput(OutcomeEvent, json);
    if (!parsed.success) return c.json(parsed.body, 400);
    const event = parsed.data;
    await syncPartnerWebhooks();
    if (c.req.header(EVENT_ID_HEADER) !== undefined && c.req.header(EVENT_ID_HEADER) !== event.id) {
      return fail(c, 400, 'invalid_request', `The ${EVENT_ID_HEADER} header does not match the event's id.`, {
        [EVENT_ID_HEADER]: "does not match the event's id",
      });
    }
    // At least once on the wire: the same event id again changes nothing.
    const duplicate = seenEvents.has(event.id);
    seenEvents.add(event.id);
    const order = event.data.order_id ? orders.get(event.data.order_id) : undefined;
    let what: string;
    if (!event.data.order_id) what = 'pagamento sem pedido (valor aberto, playground)';
    else if (!order) what = `pedido ${event.data.order_id} desconhecido`;
    else what = `pedido ${order.id}`;
    note({
      kind: 'webhook',
      event_id: event.id,
      type: event.type,
      order_id: event.data.order_id,
      reference: event.data.reference,
      duplicate,
      note: `${event.type} · ${what} · assinatura válida${duplicate ? ' · repetido, ignorado' : ''}.`,
    });
    if (
      !duplicate &&
      order &&
      event.type === 'payment.paid' &&
      event.data.checkout_id === order.checkoutId &&
      event.data.value !== null &&
      Math.round(event.data.value * 100) === order.totalCents
    ) {
      await markPaid(order, 'webhook', event.data.reference);
    }
    return c.json({ received: true, duplicate });
  });

  // Test mode only: what the panel's live log shows of the server side, oldest first.
  app.get('/shop/test/log', async (c) => {
    if (!options.sandbox) return fail(c, 404, 'not_found', `Nothing at ${c.req.method} ${c.req.path}.`);
    const limitText = c.req.query('limit') ?? '50';
    if (!/^[0-9]{1,3}$/.test(limitText) || Number(limitText) < 1 || Number(limitText) > 200) {
      return fail(c, 400, 'invalid_request', 'limit must be a whole number from 1 to 200', { limit: 'must be a whole number from 1 to 200' });
    }
    await syncPartnerWebhooks();
    return c.json({ entries: log.slice(-Number(limitText)) });
  });

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
    created_at: new Date(order.createdAt).toISOString(),
    paid_at: order.paidAt === null ? null : new Date(order.paidAt).toISOString(),
    confirmed_by: order.confirmedBy,
  };
}

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
