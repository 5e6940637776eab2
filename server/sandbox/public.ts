/**
 * What the service shows people: the QR image (`qr_code_url`) and the hosted checkout page
 * (`checkout`), plus the sandbox's control API (control.ts). Served by the sandbox itself and, in
 * `npm start`, on the demo's origin under /sandbox.
 */
import { Hono } from 'hono';
import QRCode from 'qrcode';
import { PARTNER_STATUS } from '../partner/wire.ts';
import { createControlApi } from './control.ts';
import { statusName } from './dialects.ts';
import type { SandboxPayment, SandboxState } from './state.ts';

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`);
}

/** What the checkout page says about a payment; an unpaid one is "expired" until its cancellation. */
function statusLabel(state: SandboxState, payment: SandboxPayment): string {
  if (payment.status === PARTNER_STATUS.approved) return 'Pago';
  if (payment.status === PARTNER_STATUS.canceled) return 'Cancelado';
  return state.clock.now() >= state.expiresAt(payment) ? 'Expirado (será cancelado 1 hora após a expiração)' : 'Aguardando pagamento';
}

/** A time for people, or nothing when an absurd expiration puts it beyond what Date can show. */
function localTime(epochMs: number): string {
  const date = new Date(epochMs);
  return Number.isNaN(date.getTime()) ? '' : date.toLocaleString('pt-BR', { timeZone: 'America/Sao_Paulo' });
}

export function createPublicApp(state: SandboxState): Hono {
  const app = new Hono();
  app.use('*', async (_c, next) => {
    state.settleDue();
    await next();
  });

  app.get('/qr/:file', async (c) => {
    const payment = state.payments.get(c.req.param('file').replace(/\.svg$/, ''));
    if (!payment) return c.json({ error: { code: 'not_found', message: 'No such payment.' } }, 404);
    const svg = await QRCode.toString(payment.pixKey, { type: 'svg', errorCorrectionLevel: 'M', margin: 4 });
    return c.body(svg, 200, { 'content-type': 'image/svg+xml', 'cache-control': 'public, max-age=3600' });
  });

  app.get('/checkout/:reference', async (c) => {
    const payment = state.payments.get(c.req.param('reference'));
    if (!payment) return c.html('<!doctype html><title>Not found</title><p>Payment not found.</p>', 404);
    const pending = payment.status === PARTNER_STATUS.pending;
    const value = payment.value.toLocaleString('pt-BR', { style: 'currency', currency: 'BRL' });
    const qr = await QRCode.toString(payment.pixKey, { type: 'svg', errorCorrectionLevel: 'M', margin: 4, width: 240 });
    const expires = localTime(state.expiresAt(payment));
    const payButton = pending
      ? `<form method="post" action="${escapeHtml(payment.externalReference)}/pay"><button>Simular pagamento (sandbox)</button></form>`
      : '';
    const back = payment.status === PARTNER_STATUS.approved && payment.callback ? `<p><a href="${escapeHtml(payment.callback)}">Voltar à loja</a></p>` : '';
    // While pending the page refreshes itself, so a payment made elsewhere shows up.
    const refresh = pending ? '<meta http-equiv="refresh" content="5">' : '';
    return c.html(`<!doctype html><html lang="pt-BR"><meta charset="utf-8"><meta name="viewport" content="width=device-width">${refresh}
<title>Pagamento Pix ${escapeHtml(value)}</title>
<style>body{font:16px system-ui,sans-serif;max-width:26rem;margin:2rem auto;padding:0 1rem}textarea{width:100%;font:13px ui-monospace,monospace}</style>
<h1>Pix ${escapeHtml(value)}</h1><p>${escapeHtml(state.account.partner.name)}</p>
<p role="status" data-status="${state.dialect.statusCodes[statusName(payment.status)]}"><strong>${escapeHtml(statusLabel(state, payment))}</strong></p>
${pending && expires ? `<p>Válido até ${escapeHtml(expires)}</p>` : ''}${pending ? qr : ''}
<label>Pix Copia e Cola<textarea readonly rows="5">${escapeHtml(payment.pixKey)}</textarea></label>${payButton}${back}</html>`);
  });

  app.post('/checkout/:reference/pay', (c) => {
    const payment = state.payments.get(c.req.param('reference'));
    if (!payment) return c.text('Payment not found.', 404);
    const paid = state.pay(payment);
    if (!paid.ok) return c.text(`Not paid: ${paid.reason}.`, 409);
    return c.redirect(`../${payment.externalReference}`, 303);
  });

  app.route('/_sandbox', createControlApi(state));
  app.notFound((c) => c.json({ error: { code: 'not_found', message: `Nothing at ${c.req.method} ${c.req.path}.` } }, 404));
  app.onError((error, c) => {
    console.error(`[sandbox] unexpected error: ${error.name}`);
    return c.json({ error: { code: 'internal', message: 'Sandbox error.' } }, 500);
  });
  return app;
}
