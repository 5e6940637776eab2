/**
 * A page for the widget benches and screenshots: the built script-tag bundle (dist/pix-checkout.js)
 * on the dev stack's origin, plus a states gallery (`/gallery?state=...`) that puts the widget in each
 * state with the real stack, and fakes only for time and faults.
 */
import { serveStatic } from '@hono/node-server/serve-static';
import type { Hono } from 'hono';

export const GALLERY_STATES = [
  'loading',
  'pending',
  'more-time',
  'copy-failed',
  'reconnecting',
  'invalid-code',
  'link',
  'paid',
  'expired',
  'canceled',
  'error',
] as const;
export type GalleryState = (typeof GALLERY_STATES)[number];

const page = (body: string) => `<!doctype html><html lang="pt-BR"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>body{margin:0;padding:16px;font:16px system-ui;background:#eef1f4}@media (prefers-color-scheme:dark){body{background:#0d0f12}}</style>
<script type="module" src="/dist/pix-checkout.js"></script></head><body>${body}</body></html>`;

export function mountWidgetPages(app: Hono): void {
  app.get('/dist/*', serveStatic({ root: './' }));
  // Timing: one widget, created on load; `?stream=0` forces polling; `?checkout=co_…` shows that
  // checkout's payment (checkout mode) instead of asking for a new open-amount one; `?locale=en`.
  app.get('/bench', (c) =>
    c.html(
      page(`<script type="module">
  const el = document.createElement('pix-checkout');
  const params = new URLSearchParams(location.search);
  if (params.get('stream') === '0') el.environment = { EventSource: null };
  el.endpoint = '/api';
  el.id = 'widget';
  if (params.get('locale')) el.locale = params.get('locale');
  if (params.get('checkout')) el.checkout = params.get('checkout'); else el.amount = 12.34;
  el.addEventListener('pix-created', (e) => { window.reference = e.detail.payment.reference; });
  el.addEventListener('pix-paid', () => { window.paidAt = Date.now(); });
  sessionStorage.clear();
  document.body.append(el);
</script>`),
    ),
  );
  app.get('/gallery', (c) =>
    c.html(
      page(`<script type="module">
  const state = new URLSearchParams(location.search).get('state');
  const el = document.createElement('pix-checkout');
  const env = {};
  sessionStorage.clear();
  el.endpoint = '/api';
  el.amount = 49.9;
  el.description = 'Loja Demo';
  if (state === 'loading') env.fetch = () => new Promise(() => {});
  if (state === 'error') el.endpoint = 'http://127.0.0.1:9/api';
  if (state === 'copy-failed') Object.assign(env, { clipboard: null, execCopy: () => false });
  if (state === 'reconnecting') Object.assign(env, { EventSource: null, online: () => false });
  if (state === 'link') el.mode = 'link';
  if (state === 'invalid-code') env.fetch = async (input, init) => {
    const body = await (await fetch(input, init)).json();
    return new Response(JSON.stringify({ ...body, brcode: body.brcode + '0' }), { status: 201 });
  };
  // The code's last 100 seconds in every answer (polling, so the stream's own view does not undo it):
  // "I need more time" is offered.
  if (state === 'more-time') env.EventSource = null;
  if (state === 'more-time') env.fetch = async (input, init) => {
    const res = await fetch(input, init);
    const body = await res.json();
    const expires = new Date(Date.parse(body.server_time) + 100_000).toISOString();
    return new Response(JSON.stringify({ ...body, expires_at: expires }), { status: res.status, headers: { 'content-type': 'application/json' } });
  };
  el.environment = env;
  el.addEventListener('pix-created', async (e) => {
    window.reference = e.detail.payment.reference;
    await el.updateComplete;
    if (state === 'copy-failed') el.shadowRoot.querySelector('[part=copy-button]').click();
    if (state === 'reconnecting') window.dispatchEvent(new Event('offline'));
    setTimeout(() => (window.ready = true), 300);
  });
  el.addEventListener('pix-error', () => setTimeout(() => (window.ready = true), 100));
  if (state === 'loading') setTimeout(() => (window.ready = true), 300);
  document.body.append(el);
</script>`),
    ),
  );
}
