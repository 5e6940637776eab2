// The test panel, loaded only when the shop's backend says it runs against the sandbox. It plays the
// customer's bank and the payment service through the sandbox's control API (/sandbox/_sandbox/...),
// refunds a paid order to one of the sandbox's test customers through the shop's backend (which
// asks the proxy, as a merchant's server would), and shows a live log of the widget's events and of
// the webhooks on the server side.

// Built on first use (see shop.js's lazyFormat): not while the widget's payment is being shown.
let moneyFormat;
let clockFormat;
const money = { format: (value) => (moneyFormat ??= new Intl.NumberFormat('pt-BR', { style: 'currency', currency: 'BRL' })).format(value) };
const clock = {
  format: (value) => (clockFormat ??= new Intl.DateTimeFormat('pt-BR', { hour: '2-digit', minute: '2-digit', second: '2-digit' })).format(value),
};
const EVENTS = ['pix-created', 'pix-status-change', 'pix-paid', 'pix-expired', 'pix-canceled', 'pix-copy', 'pix-error'];
const STATUS = { pending: 'pendente', paid: 'pago', expired: 'expirado', canceled: 'cancelado' };
const REFUND_STATUS = { pending: 'pendente', approved: 'concluído', canceled: 'cancelado', refused: 'recusado', unknown: 'desconhecido' };
/** What happens next to a refund to each test customer, once the proxy took it. */
const REFUND_NEXT = {
  ana: 'o banco da Ana aprova em 5 s (relógio do sandbox).',
  elisa: 'o banco da Elisa cancela em 5 s (relógio do sandbox).',
  fabio: 'o banco do Fabio responde em 10 min (relógio do sandbox).',
};
const MAX_LOG = 120;
const SERVER_POLL_MS = 1000;

const $ = (id) => document.getElementById(id);
const short = (reference) => (reference.length > 12 ? `${reference.slice(0, 10)}…` : reference);

/** A call to the sandbox's control API; a non-2xx answer throws with its message. */
async function control(method, path, body) {
  const res = await fetch(`/sandbox/_sandbox/${path}`, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const json = await res.json().catch(() => null);
  if (!res.ok) throw new Error(json?.error?.message ?? `HTTP ${res.status}`);
  return json;
}

function logLine(list, { time, name, tone, text, source }) {
  const item = document.createElement('li');
  const stamp = document.createElement('time');
  stamp.textContent = clock.format(time);
  const label = document.createElement('span');
  label.className = `ev${tone ? ` ${tone}` : ''}`;
  label.textContent = name;
  item.append(stamp, label, ` ${text}`);
  if (source) {
    const from = document.createElement('span');
    from.className = 'src';
    from.textContent = ` · ${source}`;
    item.append(from);
  }
  list.prepend(item);
  while (list.children.length > MAX_LOG) list.lastElementChild.remove();
  return item;
}

/** One line about a widget event. */
function describe(type, detail) {
  const payment = detail?.payment;
  switch (type) {
    case 'pix-created':
      return `${short(payment.reference)} · ${money.format(payment.value)} · ${detail.resumed ? 'retomado' : 'novo código'}${detail.renewal ? ` · renovação ${detail.renewal}` : ''}`;
    case 'pix-status-change':
      return `${STATUS[detail.previous] ?? detail.previous} → ${STATUS[payment.status] ?? payment.status}`;
    case 'pix-paid':
    case 'pix-canceled':
      return short(payment.reference);
    case 'pix-expired':
      return `${short(payment.reference)} · novos códigos: ${detail.renewalsLeft > 0 ? 'sim' : 'não'}`;
    case 'pix-copy':
      return detail.copied ? `copiado (${detail.method})` : `não copiado (${detail.method})`;
    case 'pix-error':
      return `${detail.code}${detail.fatal ? ' (fatal)' : ''}: ${detail.message}`;
    default:
      return '';
  }
}

const PARTNER_STATE = {
  sending: 'enviando',
  delivered: 'recebido pelo proxy',
  failed: 'falhou em todas as tentativas',
  not_sent: 'não enviado (sem URL)',
  dropped: 'perdido (falha simulada); o proxy descobre o resultado sozinho',
};

function partnerText(d) {
  const what =
    d.kind === 'payment'
      ? `pagamento ${d.outcome === 'approved' ? 'aprovado' : 'cancelado'}`
      : `transferência ${d.outcome === 'approved' ? 'aprovada' : 'cancelada'}`;
  const status = d.status !== null && d.state !== 'dropped' ? ` (HTTP ${d.status})` : '';
  return `${what} · ${short(d.reference)} · ${PARTNER_STATE[d.state] ?? d.state}${status}${d.trigger === 'resend' ? ' · reenvio' : ''}`;
}

const SERVER_SOURCE = { confirmation: 'loja', refund: 'loja → proxy' };

function serverTone(entry) {
  if (entry.kind === 'webhook_rejected') return 'bad';
  if (entry.kind === 'confirmation' || entry.type === 'transfer.approved') return 'good';
  if (entry.type === 'transfer.canceled' || entry.type === 'transfer.refused') return 'bad';
  return '';
}

export function initTestPanel() {
  const panel = $('test-panel');
  panel.hidden = false;
  $('sandbox-ribbon').hidden = false;
  const eventLog = $('event-log');
  const serverLog = $('server-log');
  const result = $('test-result');
  const buttons = { paid: $('sim-paid'), canceled: $('sim-canceled'), expired: $('sim-expired') };

  /** The shop widget's payment on screen: {reference, status, value, expires_at}. */
  let current = null;
  /** The confirmed (paid) order on screen, as the shop's backend answered it. */
  let paidOrder = null;
  let busy = false;

  function renderCurrent() {
    $('test-payment').textContent = current
      ? `${short(current.reference)} · ${money.format(current.value)} · ${STATUS[current.status] ?? current.status}`
      : 'Nenhum pagamento na tela.';
    const pending = current?.status === 'pending' && !busy;
    for (const button of Object.values(buttons)) button.disabled = !pending;
    $('refund-order').textContent = paidOrder ? `Pedido nº ${paidOrder.order_id} · ${money.format(paidOrder.total)} · pago` : 'Nenhum pedido pago na tela.';
    $('refund').disabled = !paidOrder || busy;
    $('sim-return').disabled = !paidOrder?.payment_reference || busy;
  }

  for (const type of EVENTS) {
    document.addEventListener(type, (event) => {
      const fromShop = event.target instanceof Element && event.target.id === 'shop-checkout';
      const tone = type === 'pix-paid' ? 'good' : type === 'pix-error' || type === 'pix-expired' || type === 'pix-canceled' ? 'bad' : '';
      logLine(eventLog, { time: new Date(), name: type, tone, text: describe(type, event.detail), source: fromShop ? 'loja' : 'playground' });
      if (fromShop && event.detail?.payment) {
        const p = event.detail.payment;
        current = { reference: p.reference, status: p.status, value: p.value, expires_at: p.expires_at };
        renderCurrent();
      }
    });
  }
  // The order's page renders the widget with its payment inside: it was on screen (and its
  // pix-created fired) before this panel loaded, so the panel reads it from the element.
  const onScreen = document.getElementById('shop-checkout')?.payment;
  if (onScreen) current = { reference: onScreen.reference, status: onScreen.status, value: onScreen.value, expires_at: onScreen.expires_at };
  renderCurrent();
  document.addEventListener('shop-step', (event) => {
    if (event.detail.step !== 'payment') current = null;
    paidOrder = event.detail.step === 'confirmed' ? event.detail.order : null;
    renderCurrent();
  });

  /** Runs one panel action: buttons off meanwhile, the result said in the status line and the log. */
  async function act(name, run) {
    busy = true;
    renderCurrent();
    try {
      const text = await run();
      result.textContent = text;
      logLine(eventLog, { time: new Date(), name: 'painel', tone: '', text: `${name}: ok` });
    } catch (error) {
      result.textContent = `${name}: não foi possível (${error.message}).`;
      logLine(eventLog, { time: new Date(), name: 'painel', tone: 'bad', text: `${name}: ${error.message}` });
    } finally {
      // Counts finished actions: two in a row may say the same sentence.
      result.dataset.done = String(Number(result.dataset.done ?? 0) + 1);
      busy = false;
      renderCurrent();
    }
  }

  buttons.paid.addEventListener('click', () =>
    act('simular pagamento', async () => {
      await control('POST', `payments/${encodeURIComponent(current.reference)}/pay`);
      return 'O banco do cliente pagou. O widget e a loja vão saber em instantes.';
    }),
  );
  buttons.canceled.addEventListener('click', () =>
    act('simular cancelamento', async () => {
      // As the spec has it: the service cancels an unpaid payment an hour past its expiration (a
      // cancellation sooner would prove the status codes wrong: server/domain/numbering/status-numbering.ts).
      const { now } = await control('GET', 'clock');
      const seconds = Math.max(1, Math.ceil((Date.parse(current.expires_at) + 3600_000 - Date.parse(now)) / 1000) + 1);
      await control('POST', 'clock/advance', { seconds });
      return `O relógio do sandbox avançou ${seconds} s: uma hora após a expiração, o serviço cancelou o pagamento.`;
    }),
  );
  buttons.expired.addEventListener('click', () =>
    act('expirar o código', async () => {
      // Past this payment's expiration, and well before its cancellation an hour later.
      const { now } = await control('GET', 'clock');
      const seconds = Math.max(1, Math.ceil((Date.parse(current.expires_at) - Date.parse(now)) / 1000) + 1);
      await control('POST', 'clock/advance', { seconds });
      return `O relógio do sandbox avançou ${seconds} s: o código expirou.`;
    }),
  );

  // A refund of the order on screen to a test customer's key, through the shop's backend: a new
  // refund per click. The page shows it in the order's refunds (the shop-order-changed event).
  $('refund').addEventListener('click', () =>
    act('reembolsar', async () => {
      const customer = $('refund-customer').value;
      const text = $('refund-value').value.trim();
      // What was typed goes as typed: the backend says what is wrong with it.
      const value = text === '' ? undefined : Number.isFinite(Number(text)) ? Number(text) : text;
      const res = await fetch(`/shop/test/orders/${encodeURIComponent(paidOrder.order_id)}/refunds`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ customer, ...(value === undefined ? {} : { value }) }),
      });
      const json = await res.json().catch(() => null);
      if (!res.ok) throw new Error(json?.error?.message ?? `HTTP ${res.status}`);
      paidOrder = json.order;
      document.dispatchEvent(new CustomEvent('shop-order-changed', { detail: { order: json.order } }));
      const { refund } = json;
      const status = `${REFUND_STATUS[refund.status] ?? refund.status}${refund.reason_text ? ` (${refund.reason_text})` : ''}`;
      const next = refund.status === 'pending' && REFUND_NEXT[customer] ? ` Agora ${REFUND_NEXT[customer]}` : '';
      return `Reembolso de ${money.format(refund.value)} para ${refund.pix_key}: ${status}.${next}`;
    }),
  );

  // A Pix return of the paid order's payment (devolução; the central bank's MED), as the payer's bank
  // would ask: the sandbox gives back what is left and notifies it; the proxy records it, tells the
  // shop (payment.returned) and refunds no more of it.
  $('sim-return').addEventListener('click', () =>
    act('simular devolução', async () => {
      const { returned } = await control('POST', `payments/${encodeURIComponent(paidOrder.payment_reference)}/return`);
      return `O pagamento foi devolvido ao cliente (${money.format(returned)} no total). A loja vai saber em instantes; o que foi devolvido não pode mais ser reembolsado.`;
    }),
  );

  // Faults: each button turns its fault on or off; the list says what is on.
  const FAULTS = {
    'fault-slow': { kind: 'latency', rate: 1, latency_ms: 3000 },
    'fault-failing': { kind: 'server_error', rate: 1, status: 503 },
    'fault-webhook': { kind: 'drop_webhook', rate: 1 },
  };
  const FAULT_TEXT = {
    latency: (f) => `lento (+${f.latency_ms} ms)`,
    server_error: (f) => `falhando (HTTP ${f.status})`,
    drop_webhook: () => 'webhooks perdidos',
  };
  let faults = [];
  function renderFaults() {
    $('faults').textContent = faults.length ? `Falhas ativas: ${faults.map((f) => FAULT_TEXT[f.kind]?.(f) ?? f.kind).join('; ')}.` : 'Nenhuma falha ativa.';
    for (const [id, fault] of Object.entries(FAULTS)) $(id).setAttribute('aria-pressed', String(faults.some((f) => f.kind === fault.kind)));
  }
  async function refreshFaults() {
    faults = (await control('GET', 'faults')).faults;
    renderFaults();
  }
  for (const [id, fault] of Object.entries(FAULTS)) {
    $(id).addEventListener('click', () =>
      act($(id).textContent.toLowerCase(), async () => {
        const on = faults.filter((f) => f.kind === fault.kind);
        if (on.length > 0) for (const f of on) await control('DELETE', `faults/${f.id}`);
        else await control('POST', 'faults', fault);
        await refreshFaults();
        return on.length > 0 ? 'Falha desligada.' : 'Falha ligada: vale para as próximas chamadas ao serviço de pagamentos.';
      }),
    );
  }
  $('fault-clear').addEventListener('click', () =>
    act('limpar falhas', async () => {
      await control('DELETE', 'faults');
      await refreshFaults();
      return 'Nenhuma falha ativa: o serviço responde normalmente.';
    }),
  );

  // The server side, in the order the shop recorded it: the partner's notifications to the proxy,
  // the proxy's signed webhooks to the shop, the shop's confirmations.
  let shown = '';
  let polling = false;
  async function pollServer() {
    if (polling || panel.hidden || $('view-loja').hidden || document.visibilityState !== 'visible') return;
    polling = true;
    try {
      const res = await fetch('/shop/test/log?limit=60');
      if (!res.ok) return;
      const text = await res.text();
      if (text === shown) return;
      shown = text;
      serverLog.replaceChildren();
      for (const entry of JSON.parse(text).entries) {
        if (entry.kind === 'partner_webhook') {
          const d = entry.delivery;
          const tone = d.state === 'delivered' ? 'good' : d.state === 'sending' ? '' : 'bad';
          logLine(serverLog, { time: new Date(entry.at), name: 'parceiro → proxy', tone, text: partnerText(d) });
        } else {
          logLine(serverLog, { time: new Date(entry.at), name: SERVER_SOURCE[entry.kind] ?? 'proxy → loja', tone: serverTone(entry), text: entry.note });
        }
      }
    } catch {
      // The next poll tries again.
    } finally {
      polling = false;
    }
  }
  setInterval(() => void pollServer(), SERVER_POLL_MS);
  document.addEventListener('visibilitychange', () => void pollServer());

  renderCurrent();
  void refreshFaults().catch(() => undefined);
  void pollServer();
}
