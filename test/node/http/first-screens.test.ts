/**
 * The proxy's first screens (server/http/first-screens.ts) when the renderer cannot be had: the proxy
 * installed without the render entry's optional peers (lit, @lit-labs/ssr), the fault put in as the
 * import's own error. The render fails, the log says why once, and the checkout's payment call still
 * answers the payment (server/routes/checkouts.ts), as the route does with any failed render.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { firstScreenRenderer } from '../../../server/http/first-screens.ts';
import { createLogger } from '../../../server/log.ts';
import type { PaymentView } from '../../../src/shared/contract.ts';
import { PAYMENT_VIEW } from '../../support/payment-view.ts';

const PAYMENT = PAYMENT_VIEW as unknown as PaymentView;

test('without lit and @lit-labs/ssr: each render fails, the log says why once, the import is tried once', async () => {
  const lines: string[] = [];
  const logger = createLogger({ level: 'info', destination: { write: (line: string) => void lines.push(line) } });
  let loads = 0;
  const missing = new Error("Cannot find package '@lit-labs/ssr' imported from /app/node_modules/pix-checkout-server/lib/server/ssr/render.js");
  const screens = firstScreenRenderer(logger, () => (loads++, Promise.reject(missing)));
  for (let i = 0; i < 3; i++) await assert.rejects(screens.render(PAYMENT, { locale: 'pt-BR', headers: new Headers() }), missing);
  assert.equal(loads, 1);
  assert.equal(lines.length, 1, lines.join(''));
  const line = JSON.parse(lines[0]!) as { level: number; component: string; err: string; msg: string };
  assert.equal(line.level, 40);
  assert.equal(line.component, 'first-screen');
  assert.match(line.err, /@lit-labs\/ssr/);
  assert.match(line.msg, /lit and @lit-labs\/ssr must be installed beside pix-checkout-server/);
});

test('with the renderer: its first screen, loaded once, nothing logged', async () => {
  const lines: string[] = [];
  const logger = createLogger({ level: 'info', destination: { write: (line: string) => void lines.push(line) } });
  let loads = 0;
  const screen = { css: ':host{}', html: '<div></div>', texts: { copy: 'c', copied: 'd', failed: 'f' } };
  const screens = firstScreenRenderer(logger, async () => (loads++, { renderFirstScreen: async () => screen }));
  assert.deepEqual(await screens.render(PAYMENT, { locale: 'pt-BR', headers: new Headers() }), screen);
  assert.deepEqual(await screens.render(PAYMENT, { locale: 'en', headers: new Headers() }), screen);
  assert.equal(loads, 1);
  assert.deepEqual(lines, []);
});
