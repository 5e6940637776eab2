/**
 * renderPaymentRequest (server/merchant/payment-request.ts): the inline script a script-tag page's head
 * carries to ask for its checkout's payment as it is parsed. Its bytes are run here as a page runs
 * them (node:vm, with the page's globals: `self`, `location`, `performance`, Node's real `fetch`)
 * against a real local server, and its answer is read by the widget's own client (src/api/client.ts)
 * as the widget reads it; the browser suites show the element taking it (test/browser/server-render.test.ts).
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { runInNewContext } from 'node:vm';
import { after, before, test } from 'node:test';
import { ProxyClient, ProxyError, type Answer } from '../../../src/api/client.ts';
import { FIRST_SCREEN, FIRST_SCREENS_PAINTED } from '../../../src/shared/first-screen.ts';
import { CHECKOUT_PATHS, EARLY_REQUESTS, fillPath } from '../../../src/shared/wire.ts';
import { renderPaymentRequest } from '../../../server/merchant/payment-request.ts';
import { fencedBlocks, readDoc } from '../../support/markdown.ts';
import { PAYMENT_VIEW } from '../../support/payment-view.ts';

const PAYMENT = PAYMENT_VIEW;

let server: Server;
let origin: string;
const seen: string[] = [];

before(async () => {
  server = createServer((req, res) => {
    seen.push(`${req.method} ${req.url}`);
    if (req.url?.includes('busy')) {
      res.writeHead(503, { 'content-type': 'application/json', 'retry-after': '7' });
      res.end(JSON.stringify({ error: { code: 'status_unverified', message: 'Confirming the earlier code.' } }));
      return;
    }
    res.writeHead(201, { 'content-type': 'application/json' });
    // Asked for its first screen: the proxy adds it to the payment (server/routes/checkouts.ts).
    const screen = { css: ':host{}', html: '<div part="base"></div>', texts: { copy: 'c', copied: 'd', failed: 'f' } };
    res.end(JSON.stringify(req.url?.includes(`?${FIRST_SCREEN.param}=`) ? { ...PAYMENT, [FIRST_SCREEN.field]: screen } : PAYMENT));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
after(() => new Promise<void>((resolve) => server.close(() => resolve())));

/** Runs the tag's script as the page's parser would, in a page at `pageUrl`; returns the page's globals. */
function runInPage(tag: string, pageUrl: string, page: Record<string, unknown> = {}): Record<string, unknown> {
  const code = /^<script(?: nonce="[^"]*")?>([^]*)<\/script>$/.exec(tag)?.[1];
  assert.ok(code, `one script element: ${tag}`);
  page.self ??= page;
  // A hidden page's document: no element to put a first screen into, no frame to wait for.
  runInNewContext(code, Object.assign(page, { location: { href: pageUrl }, performance, fetch, URL, setTimeout, document: { hidden: true } }));
  return page;
}

test("the page's request is the widget's own call, sent once, and its answer is read by the widget's client as its own", async () => {
  const checkout = 'co_early/é';
  const tag = renderPaymentRequest(checkout, { endpoint: '/api/' });
  const page = runInPage(tag, `${origin}/pagamento/1`);
  runInPage(tag, `${origin}/pagamento/1`, page);
  const client = new ProxyClient('/api/');
  const url = new URL(client.urlOf(fillPath(CHECKOUT_PATHS.checkoutPayment, { id: checkout })), `${origin}/pagamento/1`).href;
  const requests = page[EARLY_REQUESTS] as Record<string, Promise<Answer>>;
  assert.deepEqual(Object.keys(requests), [url]);
  const answer = await requests[url]!;
  assert.deepEqual(seen.splice(0), [`POST ${fillPath('/api' + CHECKOUT_PATHS.checkoutPayment, { id: checkout })}?${FIRST_SCREEN.param}=pt-BR`]);
  assert.equal(answer.status, 201);
  // The first screen is the page's (no element here to put it in: the page's script goes on), never the widget's.
  assert.ok(!answer.text.includes(FIRST_SCREEN.field), answer.text);
  // What the widget's script waits for before it defines the element: settled once the answer is in (no frame on a hidden page).
  const painted = page[FIRST_SCREENS_PAINTED] as Promise<unknown>;
  assert.equal(typeof painted?.then, 'function', "the page's promise of its first screens painted");
  await painted;
  assert.deepEqual(await client.checkoutPayment(checkout, undefined, {}, Promise.resolve(answer)), { payment: PAYMENT, created: true });
});

test("the first screen is asked for in the element's language (any tag, as the widget reads it), and not at all with firstScreen: false", async () => {
  const urls = (options: Partial<Parameters<typeof renderPaymentRequest>[1]>) => {
    const page = runInPage(renderPaymentRequest('co_lang', { endpoint: `${origin}/api`, ...options }), 'https://shop.example/pay');
    return Promise.all(Object.values(page[EARLY_REQUESTS] as Record<string, Promise<Answer>>)).then(() => seen.splice(0));
  };
  assert.deepEqual(await urls({ locale: 'en-US' }), [`POST /api/checkouts/co_lang/payment?${FIRST_SCREEN.param}=en`]);
  assert.deepEqual(await urls({ locale: 'es' }), [`POST /api/checkouts/co_lang/payment?${FIRST_SCREEN.param}=es`]);
  assert.deepEqual(await urls({ locale: 'fr' }), [`POST /api/checkouts/co_lang/payment?${FIRST_SCREEN.param}=pt-BR`]);
  assert.deepEqual(await urls({ firstScreen: false }), ['POST /api/checkouts/co_lang/payment']);
});

test("an error answer keeps its status and Retry-After: the widget's client reads the same error it would have", async () => {
  const tag = renderPaymentRequest('co_busy', { endpoint: `${origin}/api` });
  const page = runInPage(tag, 'https://shop.example/pay');
  const requests = page[EARLY_REQUESTS] as Record<string, Promise<Answer>>;
  const sent = requests[`${origin}/api/checkouts/co_busy/payment`]!;
  const error = await new ProxyClient(`${origin}/api`).checkoutPayment('co_busy', undefined, {}, sent).catch((e: unknown) => e);
  seen.splice(0);
  assert.ok(error instanceof ProxyError);
  assert.deepEqual([error.code, error.status, error.retryAfterMs], ['status_unverified', 503, 7000]);
});

test('nothing in its inputs can end the script element or leave the nonce attribute', () => {
  const tag = renderPaymentRequest('co_</script><script>alert(1)//', { endpoint: '/api</script>', nonce: 'n"><script>', locale: 'pt</script>' });
  assert.equal(tag.match(/<\/script/g)?.length, 1, tag);
  assert.ok(tag.endsWith('</script>'));
  assert.ok(tag.startsWith('<script nonce="n&#34;&#62;&#60;script&#62;">'), tag);
});

test('a missing checkout id or endpoint is said to be not set', () => {
  assert.throws(() => renderPaymentRequest('', { endpoint: '/api' }), /^TypeError: renderPaymentRequest: checkoutId is not set \(/);
  assert.throws(() => renderPaymentRequest('co_x', { endpoint: '' }), /^TypeError: renderPaymentRequest: endpoint is not set \(/);
  assert.throws(() => renderPaymentRequest('co_x', undefined as unknown as { endpoint: string }), /^TypeError: renderPaymentRequest: endpoint is not set \(/);
});

test('docs/widget.md shows the bytes it writes, for servers in other languages (the id as the doc writes it, URL-encoded in the real path)', () => {
  const shown = fencedBlocks(readDoc('docs/widget.md')).blocks.filter((block) => block.body.includes('pixCheckoutRequests'));
  assert.equal(shown.length, 1, "one block of docs/widget.md shows the page's request");
  const written = renderPaymentRequest('co_…', { endpoint: '/api' }).replace(encodeURIComponent('co_…'), 'co_…');
  assert.equal(shown[0]!.body.trim(), written);
});
