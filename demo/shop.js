// The demo store's page: products, cart, the Pix payment step and the order confirmation.
//
// The page never decides that an order is paid. It sends the shop's backend product ids and
// quantities (never a price), gets back the order and its checkout id, shows <pix-checkout> for it,
// and asks the backend about the order every few seconds and at once on `pix-paid`. Only when the
// backend answers `status: "paid"` (it confirmed with the proxy, server to server, or got the proxy's
// signed webhook) does "Pedido confirmado" appear.
//
// A confirmed order shows its refunds as the backend lists them (the proxy's view of the checkout),
// asking again every few seconds while one is on its way.

/**
 * Built on first use, not as the module loads: a formatter's first build loads its locale's data (a
 * few hundred ms on a phone's CPU, bench/phone.ts), which would hold up the widget beside it.
 */
const lazyFormat = (make) => {
  let format;
  return { format: (value) => (format ??= make()).format(value) };
};
const money = lazyFormat(() => new Intl.NumberFormat('pt-BR', { style: 'currency', currency: 'BRL' }));
const dateTime = lazyFormat(() => new Intl.DateTimeFormat('pt-BR', { dateStyle: 'short', timeStyle: 'short' }));
const CART_KEY = 'serra-azul:cart';
const ORDER_KEY = 'serra-azul:order';
const POLL_MS = 3000;
/** After the widget said "paid": ask more often, the confirmation is seconds away. */
const POLL_AFTER_PAID_MS = 1000;
/** A refund on its way: the customer's bank answers within seconds. */
const REFUND_POLL_MS = 2000;
const REFUND_STATUS = { pending: 'pendente', approved: 'concluído', canceled: 'cancelado', refused: 'recusado', unknown: 'desconhecido' };

const $ = (id) => document.getElementById(id);

/** A small element builder: h('li', {className: 'x'}, 'text', child). */
function h(tag, props = {}, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(props)) {
    if (key === 'dataset') Object.assign(el.dataset, value);
    else if (key.startsWith('aria-') || key === 'role' || key === 'for') el.setAttribute(key, value);
    else el[key] = value;
  }
  el.append(...children.filter((child) => child !== null && child !== undefined));
  return el;
}

const state = {
  config: null,
  products: [],
  byId: new Map(),
  maxQuantity: 20,
  /** product id -> quantity */
  cart: new Map(),
  /** cart | payment | confirmed */
  step: 'cart',
  /** The order as the backend last answered it. */
  order: null,
  pollTimer: 0,
  /** The widget fired pix-paid for this order: waiting for the shop's own confirmation. */
  browserSaidPaid: false,
  checks: 0,
};

/** A JSON call to the shop's backend; a non-2xx answer throws with the error body's code. */
async function request(path, init = {}) {
  let res;
  try {
    res = await fetch(path, { ...init, headers: { accept: 'application/json', ...(init.body ? { 'content-type': 'application/json' } : {}) } });
  } catch {
    throw Object.assign(new Error('network'), { code: 'network' });
  }
  const body = await res.json().catch(() => null);
  if (!res.ok) throw Object.assign(new Error(body?.error?.message ?? `HTTP ${res.status}`), { status: res.status, code: body?.error?.code ?? 'http' });
  return body;
}

function problemText(error) {
  if (error.code === 'network') return 'Sem conexão com a loja. Verifique a internet e tente de novo.';
  if (String(error.code).startsWith('upstream') || error.status >= 500) return 'O serviço de pagamentos não respondeu. Tente de novo em instantes.';
  return 'Não foi possível criar o pedido. Revise o carrinho e tente de novo.';
}

// ---------------------------------------------------------------------------------------------
// Cart

function loadCart() {
  try {
    const saved = JSON.parse(localStorage.getItem(CART_KEY) ?? '[]');
    for (const [id, quantity] of saved) {
      if (state.byId.has(id) && Number.isInteger(quantity) && quantity > 0) state.cart.set(id, Math.min(quantity, state.maxQuantity));
    }
  } catch {
    // A broken saved cart is an empty cart.
  }
}

function saveCart() {
  try {
    localStorage.setItem(CART_KEY, JSON.stringify([...state.cart]));
  } catch {
    // Private mode: the cart just does not survive a reload.
  }
}

function setQuantity(id, quantity) {
  const product = state.byId.get(id);
  if (!product) return;
  const before = state.cart.get(id) ?? 0;
  const next = Math.max(0, Math.min(quantity, state.maxQuantity));
  if (next === 0) state.cart.delete(id);
  else state.cart.set(id, next);
  saveCart();
  renderCart();
  $('cart-error').textContent = '';
  if (next === 0) announce(`${product.name} removido do carrinho.`);
  else if (next > before) announce(`${product.name} adicionado ao carrinho. Quantidade: ${next}.`);
  else if (next < before) announce(`Quantidade de ${product.name}: ${next}.`);
}

function announce(text) {
  $('cart-status').textContent = text;
}

function cartCount() {
  let count = 0;
  for (const quantity of state.cart.values()) count += quantity;
  return count;
}

// ---------------------------------------------------------------------------------------------
// Rendering

function renderProducts() {
  $('products-loading').hidden = true;
  $('products').replaceChildren(
    ...state.products.map((product) => {
      const button = h(
        'button',
        { type: 'button', className: 'btn btn-add', dataset: { add: product.id } },
        'Adicionar',
        h('span', { className: 'sr-only' }, ` ${product.name} ao carrinho`),
      );
      return h(
        'li',
        { className: 'product' },
        h('img', { src: product.image, alt: '', width: 160, height: 120 }),
        h(
          'div',
          { className: 'product-body' },
          h('h2', {}, product.name),
          h('p', { className: 'product-desc' }, product.description),
          h('div', { className: 'product-foot' }, h('span', { className: 'price' }, money.format(product.price)), button),
        ),
      );
    }),
  );
}

/** Re-renders the cart (or, past the cart step, the order's summary), keeping focus on the same control. */
function renderCart() {
  const focusKey = document.activeElement?.dataset?.focusKey;
  const readonly = state.step !== 'cart' && state.order !== null && state.step !== 'confirmed';
  const section = $('carrinho');
  section.classList.toggle('readonly', readonly);
  $('cart-title').textContent = readonly ? `Resumo do pedido nº ${state.order.order_id}` : 'Seu carrinho';

  // Past the cart step the summary is the order as the backend priced it.
  const lines = readonly
    ? state.order.items.map((item) => ({ id: item.product_id, name: item.name, quantity: item.quantity, unit: item.unit_price, total: item.total }))
    : [...state.cart].map(([id, quantity]) => {
        const product = state.byId.get(id);
        return { id, name: product.name, quantity, unit: product.price, total: Math.round(product.price * 100 * quantity) / 100 };
      });
  const total = readonly ? state.order.total : lines.reduce((sum, line) => sum + Math.round(line.total * 100), 0) / 100;

  $('cart-items').replaceChildren(
    ...lines.map((line) => {
      const label = line.name;
      const minus = h(
        'button',
        { type: 'button', 'aria-label': `Diminuir a quantidade de ${label}`, dataset: { qty: line.id, delta: '-1', focusKey: `minus:${line.id}` } },
        '−',
      );
      const plus = h(
        'button',
        {
          type: 'button',
          'aria-label': `Aumentar a quantidade de ${label}`,
          disabled: line.quantity >= state.maxQuantity,
          dataset: { qty: line.id, delta: '1', focusKey: `plus:${line.id}` },
        },
        '+',
      );
      minus.disabled = line.quantity <= 1;
      return h(
        'li',
        { className: 'cart-item' },
        h('div', {}, h('div', { className: 'ci-name' }, label), h('div', { className: 'ci-unit' }, `${line.quantity} × ${money.format(line.unit)}`)),
        h('div', { className: 'ci-total' }, money.format(line.total)),
        h(
          'div',
          { className: 'ci-controls' },
          h(
            'div',
            { className: 'qty', role: 'group', 'aria-label': `Quantidade de ${label}` },
            minus,
            h('output', { 'aria-live': 'off' }, String(line.quantity)),
            plus,
          ),
          h(
            'button',
            { type: 'button', className: 'remove', dataset: { remove: line.id, focusKey: `remove:${line.id}` } },
            'Remover',
            h('span', { className: 'sr-only' }, ` ${label}`),
          ),
        ),
      );
    }),
  );
  $('cart-empty').hidden = lines.length > 0;
  $('cart-totals').hidden = lines.length === 0;
  $('cart-subtotal').textContent = money.format(total);
  $('cart-total').textContent = money.format(total);
  $('pay').hidden = readonly;
  $('pay').disabled = lines.length === 0 || state.step !== 'cart';
  $('cart-count').textContent = String(cartCount());

  if (focusKey) {
    const again = section.querySelector(`[data-focus-key="${CSS.escape(focusKey)}"]`);
    if (again && !again.disabled) again.focus();
    else section.focus();
  }
}

function renderStep() {
  $('step-cart').hidden = state.step !== 'cart';
  $('step-payment').hidden = state.step !== 'payment';
  $('step-confirmed').hidden = state.step !== 'confirmed';
  // After the confirmation the (now empty) cart has nothing to say.
  $('carrinho').hidden = state.step === 'confirmed';
  const order = ['cart', 'payment', 'confirmed'];
  for (const li of document.querySelectorAll('.steps li')) {
    const index = order.indexOf(li.dataset.step);
    const current = order.indexOf(state.step);
    if (index === current) li.setAttribute('aria-current', 'step');
    else li.removeAttribute('aria-current');
    li.classList.toggle('done', index < current);
  }
  document.dispatchEvent(new CustomEvent('shop-step', { detail: { step: state.step, order: state.order } }));
}

function setNote(text, kind) {
  const note = $('payment-note');
  note.textContent = text;
  if (kind) note.dataset.state = kind;
  else delete note.dataset.state;
}

// ---------------------------------------------------------------------------------------------
// Checkout: the order, the widget, the shop's confirmation

function saveOrderRef(order) {
  try {
    sessionStorage.setItem(ORDER_KEY, JSON.stringify({ order_id: order.order_id, checkout_id: order.checkout_id }));
  } catch {
    // Without storage a reload just goes back to the cart.
  }
}

function forgetOrder() {
  try {
    sessionStorage.removeItem(ORDER_KEY);
  } catch {
    // Nothing saved then.
  }
}

async function placeOrder() {
  const pay = $('pay');
  const label = $('pay-label');
  pay.disabled = true;
  label.textContent = 'Criando o pedido…';
  $('cart-error').textContent = '';
  try {
    // Ids and quantities only: the backend prices the order from its own list.
    const items = [...state.cart].map(([product_id, quantity]) => ({ product_id, quantity }));
    const order = await request('/shop/orders', { method: 'POST', body: JSON.stringify({ items }) });
    // The order's own page, rendered by the store's server with the payment inside (demo/order-page.ts):
    // the QR code is in its first paint, and a reload or the link on another device shows it at once.
    saveOrderRef(order);
    location.assign(orderPage(order));
    return;
  } catch (error) {
    $('cart-error').textContent = problemText(error);
    pay.disabled = state.cart.size === 0;
  } finally {
    label.textContent = 'Pagar com Pix';
  }
}

/** The order's page (GET /pagamento/:checkout_id). */
const orderPage = (order) => `/pagamento/${encodeURIComponent(order.checkout_id)}`;
/** The order as the store's API answers it; the checkout id opens it on a device without this session. */
const orderUrl = (order) => `/shop/orders/${encodeURIComponent(order.order_id)}?checkout=${encodeURIComponent(order.checkout_id)}`;

function showPayment(order) {
  state.order = order;
  state.step = 'payment';
  state.browserSaidPaid = false;
  saveOrderRef(order);
  $('payment-order').textContent = order.order_id;
  setNote('');

  // The order's page came with the widget rendered by the server, its payment inside: kept as it is.
  const rendered = $('checkout-slot').querySelector('pix-checkout');
  const checkout = rendered?.getAttribute('checkout') === order.checkout_id ? rendered : document.createElement('pix-checkout');
  checkout.id = 'shop-checkout';
  checkout.setAttribute('endpoint', state.config.endpoint);
  checkout.setAttribute('checkout', order.checkout_id);
  // What the customer's browser saw: a reason to ask the shop now, never a confirmation.
  checkout.addEventListener('pix-paid', () => {
    state.browserSaidPaid = true;
    setNote('O seu banco avisou o pagamento. Estamos confirmando com a loja…', 'confirming');
    void checkOrder();
  });
  if (checkout !== rendered) $('checkout-slot').replaceChildren(checkout);

  renderStep();
  renderCart();
  $('payment-title').focus();
  schedulePoll(POLL_MS);
}

function schedulePoll(delay) {
  clearTimeout(state.pollTimer);
  state.pollTimer = setTimeout(async () => {
    if (state.step !== 'payment') return;
    // A hidden tab asks again when it is shown (visibilitychange below).
    if (document.visibilityState === 'visible') await checkOrder();
    if (state.step === 'payment') schedulePoll(state.browserSaidPaid ? POLL_AFTER_PAID_MS : POLL_MS);
  }, delay);
}

let inFlight = null;
/** Asks the shop's backend about the order; shows the confirmation only when it says paid. */
function checkOrder() {
  inFlight ??= (async () => {
    const order = state.order;
    if (!order) return;
    try {
      const fresh = await request(orderUrl(order));
      if (state.order?.order_id !== fresh.order_id || state.step !== 'payment') return;
      state.order = fresh;
      if (fresh.status === 'paid') {
        showConfirmation(fresh);
        return;
      }
      if (state.browserSaidPaid)
        setNote('O seu banco avisou o pagamento, mas a loja ainda não o confirmou. Assim que confirmar, o seu pedido aparece aqui.', 'waiting');
    } catch {
      if (state.browserSaidPaid) setNote('Não conseguimos falar com a loja agora. Tentando de novo…', 'waiting');
    } finally {
      state.checks++;
      document.body.dataset.orderChecks = String(state.checks);
    }
  })().finally(() => {
    inFlight = null;
  });
  return inFlight;
}

function showConfirmation(order) {
  clearTimeout(state.pollTimer);
  state.order = order;
  state.step = 'confirmed';
  saveOrderRef(order);
  state.cart.clear();
  saveCart();
  // The widget's stream and timers stop once it leaves the page.
  $('checkout-slot').replaceChildren();
  setNote('');

  $('confirmed-order').textContent = order.order_id;
  $('confirmed-at').textContent = order.paid_at ? dateTime.format(new Date(order.paid_at)) : '';
  $('confirmed-total').textContent = money.format(order.total);
  $('confirmed-items').replaceChildren(
    ...order.items.map((item) => h('li', {}, h('span', {}, `${item.quantity} × ${item.name}`), h('span', {}, money.format(item.total)))),
  );
  $('confirmed-by').textContent =
    order.confirmed_by === 'webhook'
      ? 'Pagamento confirmado pela loja: aviso assinado do serviço de pagamentos.'
      : 'Pagamento confirmado pela loja: consulta ao serviço de pagamentos.';
  document.body.dataset.confirmedOrder = order.order_id;
  renderRefunds(order);
  renderStep();
  renderCart();
  $('confirmed-title').focus();
  scheduleRefundPoll();
}

// ---------------------------------------------------------------------------------------------
// Refunds of a confirmed order

const refundPending = (order) => (order?.refunds ?? []).some((refund) => refund.status === 'pending');

function refundStatusText(refund) {
  const words = REFUND_STATUS[refund.status] ?? refund.status;
  return refund.reason_text ? `${words} (${refund.reason_text})` : words;
}

function renderRefunds(order) {
  const refunds = order.refunds ?? [];
  $('refunds').hidden = refunds.length === 0;
  $('refund-list').replaceChildren(
    ...refunds.map((refund) =>
      h(
        'li',
        { dataset: { status: refund.status, transfer: refund.transfer_id } },
        h('span', {}, money.format(refund.value)),
        h('span', { className: 'refund-status' }, refundStatusText(refund)),
        h('span', { className: 'refund-key' }, `para a chave Pix ${refund.pix_key}`),
      ),
    ),
  );
  const returned = refunds.filter((refund) => refund.status === 'approved').reduce((sum, refund) => sum + Math.round(refund.value * 100), 0) / 100;
  const pending = refunds.filter((refund) => refund.status === 'pending').length;
  const parts = [`Devolvido: ${money.format(returned)} de ${money.format(order.total)}.`];
  if (pending > 0) parts.push(pending === 1 ? 'Um reembolso em andamento.' : `${pending} reembolsos em andamento.`);
  $('refund-summary').textContent = refunds.length > 0 ? parts.join(' ') : '';
}

/** While a refund is pending, asks the backend again every few seconds (a hidden tab skips a turn). */
function scheduleRefundPoll() {
  clearTimeout(state.pollTimer);
  if (state.step !== 'confirmed' || !refundPending(state.order)) return;
  state.pollTimer = setTimeout(async () => {
    if (state.step !== 'confirmed') return;
    if (document.visibilityState === 'visible') await refreshConfirmed();
    scheduleRefundPoll();
  }, REFUND_POLL_MS);
}

async function refreshConfirmed() {
  const id = state.order?.order_id;
  if (!id) return;
  try {
    const fresh = await request(orderUrl(state.order));
    if (state.step !== 'confirmed' || state.order?.order_id !== fresh.order_id) return;
    state.order = fresh;
    renderRefunds(fresh);
  } catch {
    // The next turn asks again.
  }
}

/** The test panel refunded this order: its answer carries the order as the backend sees it now. */
function orderChanged(event) {
  const order = event.detail?.order;
  if (state.step !== 'confirmed' || !order || order.order_id !== state.order?.order_id) return;
  state.order = order;
  renderRefunds(order);
  scheduleRefundPoll();
}

function backToShop() {
  clearTimeout(state.pollTimer);
  // From the order's page: the store's own address again (the same page, in place).
  if (location.pathname !== '/') history.replaceState(null, '', `/${location.hash}`);
  forgetOrder();
  state.order = null;
  state.step = 'cart';
  state.browserSaidPaid = false;
  delete document.body.dataset.confirmedOrder;
  $('checkout-slot').replaceChildren();
  renderStep();
  renderCart();
  $('products-title').focus();
}

/** After a reload: the same order again (checkout mode resumes the same live payment). */
async function resumeOrder() {
  let saved;
  try {
    saved = JSON.parse(sessionStorage.getItem(ORDER_KEY) ?? 'null');
  } catch {
    saved = null;
  }
  if (!saved?.order_id) return;
  try {
    const order = await request(orderUrl(saved));
    // Another demo run may reuse the number: only the same checkout is the same order.
    if (order.checkout_id !== saved.checkout_id) throw new Error('another order');
    if (order.status === 'paid') showConfirmation(order);
    else showPayment(order);
  } catch {
    forgetOrder();
  }
}

// ---------------------------------------------------------------------------------------------
// Views: the store and the playground

let playground = null;
function showView(focus) {
  const view = location.hash === '#playground' ? 'playground' : 'loja';
  $('view-loja').hidden = view !== 'loja';
  $('view-playground').hidden = view !== 'playground';
  for (const link of document.querySelectorAll('.tabs a')) {
    if (link.dataset.view === view) link.setAttribute('aria-current', 'page');
    else link.removeAttribute('aria-current');
  }
  if (view === 'playground') {
    // Loaded on first visit: its widget creates a payment only when someone looks at it.
    playground ??= import('./playground.js').then((module) => module.initPlayground());
    if (focus) $('playground-title').focus();
  } else if (focus) {
    // The cart is hidden on the confirmation: its title then.
    if (location.hash === '#carrinho' && !$('carrinho').hidden) $('carrinho').focus();
    else $(state.step === 'cart' ? 'products-title' : state.step === 'payment' ? 'payment-title' : 'confirmed-title').focus();
  }
  return playground;
}

// ---------------------------------------------------------------------------------------------
// Start

async function main() {
  document.addEventListener('click', (event) => {
    const target = event.target instanceof Element ? event.target.closest('button') : null;
    if (!target) return;
    if (target.dataset.add) {
      setQuantity(target.dataset.add, (state.cart.get(target.dataset.add) ?? 0) + 1);
      target.classList.add('added');
      setTimeout(() => target.classList.remove('added'), 1200);
    } else if (target.dataset.qty) {
      setQuantity(target.dataset.qty, (state.cart.get(target.dataset.qty) ?? 0) + Number(target.dataset.delta));
    } else if (target.dataset.remove) {
      setQuantity(target.dataset.remove, 0);
    }
  });
  $('pay').addEventListener('click', () => void placeOrder());
  $('back-to-cart').addEventListener('click', backToShop);
  $('new-order').addEventListener('click', backToShop);
  document.addEventListener('visibilitychange', () => {
    if (document.visibilityState === 'visible' && state.step === 'payment') void checkOrder();
    if (document.visibilityState === 'visible' && state.step === 'confirmed' && refundPending(state.order)) void refreshConfirmed();
  });
  document.addEventListener('shop-order-changed', orderChanged);
  window.addEventListener('hashchange', () => void showView(true));
  // Back from the order's page, restored from the back-forward cache: the cart as it is, payable again.
  window.addEventListener('pageshow', (event) => {
    if (event.persisted && state.step === 'cart') renderCart();
  });

  try {
    const [config, catalog] = await Promise.all([request('/shop/config'), request('/shop/products')]);
    state.config = config;
    state.products = catalog.products;
    state.maxQuantity = catalog.max_quantity;
    state.byId = new Map(catalog.products.map((product) => [product.id, product]));
  } catch {
    $('products-loading').textContent = 'Não foi possível carregar os produtos. Recarregue a página.';
    return;
  }
  renderProducts();
  loadCart();
  renderStep();
  renderCart();
  if (state.config.sandbox) {
    const { initTestPanel } = await import('./test-panel.js');
    initTestPanel();
  }
  // The order's page (GET /pagamento/:checkout_id) carries its order; the store's page may resume one.
  const served = document.getElementById('shop-order');
  if (served) {
    const order = JSON.parse(served.textContent);
    if (order.status === 'paid') showConfirmation(order);
    else showPayment(order);
  } else await resumeOrder();
  await showView(false);
  document.documentElement.dataset.ready = 'true';
}

void main();
