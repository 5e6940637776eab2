/**
 * Checkouts, the default mode: the merchant's server fixes the amount (API key, server to server),
 * the browser gets the checkout's payment by its opaque id. Real sockets, real HTTPS to the sandbox,
 * a real SQLite file; only the sandbox's clock is moved by hand.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { CheckoutId, CheckoutView, PaymentView } from '../../../src/shared/contract.ts';
import { ErrorBody } from '../../../src/shared/errors.ts';
import { FIRST_SCREEN, type FirstScreen } from '../../../src/shared/first-screen.ts';
import { createApp, type AppDeps } from '../../../server/app.ts';
import { startDevStack, type DevStack, type DevStackOptions } from '../../../server/dev-stack.ts';
import { createLogger } from '../../../server/log.ts';
import { DEFAULTS, proxyConfig } from '../../../server/config/index.ts';
import { tokenStoreKey, type PartnerClient } from '../../../server/partner/client.ts';
import { PartnerError } from '../../../server/partner/errors.ts';
import { PARTNER_PATHS, PARTNER_STATUS } from '../../../server/partner/wire.ts';
import { paymentOutcome } from '../../../server/domain/outcomes.ts';
import { startSandbox } from '../../../server/sandbox/server.ts';
import { DEFAULT_ACCOUNT } from '../../../server/sandbox/state.ts';
import { SANDBOX_DIALECTS } from '../../../server/sandbox/dialects.ts';
import { expectError, verifyStatusCodes, waitFor } from '../../support/checks.ts';

const HOUR = 3600 * 1000;
let stack: DevStack;
let orders = 0;
/** Every body and header a browser-facing endpoint answered in this file. */
const browserSaw: string[] = [];
const logLines: string[] = [];

before(async () => {
  stack = await startDevStack({ logger: createLogger({ level: 'trace', destination: { write: (line: string) => void logLines.push(line) } }) });
  // Every code proven, as after a partner's first hours: an expired code the partner canceled then
  // reads as a verified canceled one, and may be replaced (domain/numbering/status-numbering.ts).
  await verifyStatusCodes(stack);
});
after(async () => {
  await stack.close();
});

const newOrder = () => `order-${process.pid}-${++orders}`;

async function merchant(on: DevStack, method: string, path: string, body?: unknown, key: string | null = on.apiKey) {
  const headers: Record<string, string> = {};
  if (key !== null) headers.authorization = `Bearer ${key}`;
  if (body !== undefined) headers['content-type'] = 'application/json';
  // In process, no socket (app.request): the proxy's routes, middleware and services are under test.
  const res = await on.app.request(`/api${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await res.text();
  return { res, json: text ? (JSON.parse(text) as unknown) : undefined };
}

async function browser(on: DevStack, method: string, path: string, init: { body?: string; headers?: Record<string, string> } = {}) {
  const res = await on.app.request(`/api${path}`, { method, headers: init.headers, body: init.body });
  const text = await res.text();
  browserSaw.push(text, JSON.stringify([...res.headers]));
  return { res, json: text ? (JSON.parse(text) as unknown) : undefined };
}

async function newCheckout(on: DevStack = stack, extra: Record<string, unknown> = {}): Promise<CheckoutView> {
  const { res, json } = await merchant(on, 'POST', '/checkouts', { value: 49.9, order_id: newOrder(), description: 'Loja', ...extra });
  assert.equal(res.status, 201, JSON.stringify(json));
  return CheckoutView.parse(json);
}

/** A checkout whose first code the page was given an hour ago: expired, not yet renewed. */
async function checkoutWithExpiredCode(): Promise<{ checkout: CheckoutView; first: PaymentView }> {
  const checkout = await newCheckout();
  const first = PaymentView.parse((await payFor(stack, checkout.checkout_id)).json);
  stack.sandbox.state.clock.advance(HOUR);
  return { checkout, first };
}

const payFor = (on: DevStack, id: string) => browser(on, 'POST', `/checkouts/${id}/payment`);

describe('creating a checkout (merchant server, API key)', () => {
  test('201 with an opaque id, status open and the renewals left; no customer data echoed', async () => {
    const order = newOrder();
    const { res, json } = await merchant(stack, 'POST', '/checkouts', {
      value: 120.5,
      order_id: order,
      name: 'Maria Silva',
      document: '529.982.247-25',
      callback: 'https://shop.example/thanks',
    });
    assert.equal(res.status, 201);
    const checkout = CheckoutView.parse(json);
    assert.ok(CheckoutId.safeParse(checkout.checkout_id).success);
    assert.deepEqual({ ...checkout, checkout_id: '' }, { checkout_id: '', order_id: order, value: 120.5, status: 'open', renewals_left: 3, refunds: [] });
    assert.doesNotMatch(JSON.stringify(json), /Maria|529|98224725/);
    assert.equal(res.headers.get('access-control-allow-origin'), null, 'no CORS on the API-key endpoints');
  });

  test('the same order and value again: the same checkout (200); another value: 409 conflict', async () => {
    const order = newOrder();
    const first = await merchant(stack, 'POST', '/checkouts', { value: 10, order_id: order });
    const again = await merchant(stack, 'POST', '/checkouts', { value: 10.0, order_id: order, description: 'retry' });
    assert.equal(first.res.status, 201);
    assert.equal(again.res.status, 200);
    assert.equal(CheckoutView.parse(again.json).checkout_id, CheckoutView.parse(first.json).checkout_id);
    const error = expectError(await merchant(stack, 'POST', '/checkouts', { value: 10.01, order_id: order }), 409, 'conflict');
    assert.ok(error.fields?.order_id);
  });

  test('ids are unguessable: distinct and random', async () => {
    const ids = await Promise.all(Array.from({ length: 5 }, () => newCheckout().then((c) => c.checkout_id)));
    assert.equal(new Set(ids).size, 5);
  });

  for (const [label, key] of [
    ['no Authorization', null],
    ['a wrong key', 'sandbox-api-kez'],
    ['a prefix of the key', 'sandbox-api'],
    ['an empty key', ''],
  ] as const) {
    test(`${label}: 401 unauthorized, nothing created`, async () => {
      const order = newOrder();
      const result = await merchant(stack, 'POST', '/checkouts', { value: 10, order_id: order }, key);
      expectError(result, 401, 'unauthorized');
      assert.equal(result.res.headers.get('www-authenticate'), 'Bearer');
      const ok = await merchant(stack, 'POST', '/checkouts', { value: 11, order_id: order });
      assert.equal(ok.res.status, 201, 'the order id was not taken by the refused call');
    });
  }

  test('the key in another scheme (Basic) is refused', async () => {
    const res = await fetch(`${stack.apiUrl}/checkouts`, {
      method: 'POST',
      headers: { authorization: `Basic ${stack.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ value: 1, order_id: newOrder() }),
    });
    assert.equal(res.status, 401);
  });

  const invalid: [string, Record<string, unknown>, string][] = [
    ['value missing', { order_id: 'x1' }, 'value'],
    ['value below 0.20', { value: 0.1, order_id: 'x2' }, 'value'],
    ['value with fractions of a cent', { value: 1.005, order_id: 'x3' }, 'value'],
    ['order_id missing', { value: 1 }, 'order_id'],
    ['order_id with spaces', { value: 1, order_id: 'a b' }, 'order_id'],
    ['order_id of 65 characters', { value: 1, order_id: 'o'.repeat(65) }, 'order_id'],
    ['an http callback', { value: 1, order_id: 'x4', callback: 'http://shop.example/thanks' }, 'callback'],
    ['a callback that is not a URL', { value: 1, order_id: 'x5', callback: 'thanks' }, 'callback'],
    ['name without document', { value: 1, order_id: 'x6', name: 'Maria' }, 'document'],
    ['an invalid CPF', { value: 1, order_id: 'x7', name: 'Maria', document: '123.456.789-00' }, 'document'],
    ['description of 51 characters', { value: 1, order_id: 'x8', description: 'd'.repeat(51) }, 'description'],
    ['an unknown field', { value: 1, order_id: 'x9', tenant_id: 'x' }, 'tenant_id'],
  ];
  for (const [label, body, field] of invalid) {
    test(`${label}: 400 invalid_request naming ${field}`, async () => {
      const error = expectError(await merchant(stack, 'POST', '/checkouts', body), 400, 'invalid_request');
      assert.ok(error.fields && field in error.fields, JSON.stringify(error.fields));
    });
  }

  test('not JSON: 415; broken JSON: 400 invalid_json; too large: 413', async () => {
    const send = (body: string, type: string) =>
      fetch(`${stack.apiUrl}/checkouts`, { method: 'POST', headers: { authorization: `Bearer ${stack.apiKey}`, 'content-type': type }, body });
    const codes = async (res: Response) => [res.status, ErrorBody.parse(await res.json()).error.code];
    assert.deepEqual(await codes(await send('value=1', 'application/x-www-form-urlencoded')), [415, 'unsupported_media_type']);
    assert.deepEqual(await codes(await send('{"value":', 'application/json')), [400, 'invalid_json']);
    assert.deepEqual(await codes(await send(JSON.stringify({ value: 1, order_id: 'big', description: 'x'.repeat(10_000) }), 'application/json')), [
      413,
      'payload_too_large',
    ]);
  });
});

describe("the browser gets the checkout's payment", () => {
  test("201 with the checkout's value; asking again answers the same payment (200)", async () => {
    const checkout = await newCheckout();
    const first = await payFor(stack, checkout.checkout_id);
    assert.equal(first.res.status, 201);
    const payment = PaymentView.parse(first.json);
    assert.equal(payment.value, 49.9);
    assert.equal(payment.status, 'pending');
    const again = await payFor(stack, checkout.checkout_id);
    assert.equal(again.res.status, 200);
    assert.equal(PaymentView.parse(again.json).reference, payment.reference);
    assert.equal(PaymentView.parse(again.json).brcode, payment.brcode, 'the same QR, never a second one');
  });

  test('twenty concurrent first calls share one payment: one QR upstream', async () => {
    const checkout = await newCheckout();
    const before = stack.sandbox.state.payments.size;
    const answers = await Promise.all(Array.from({ length: 20 }, () => payFor(stack, checkout.checkout_id)));
    const references = new Set(answers.map((a) => PaymentView.parse(a.json).reference));
    assert.equal(references.size, 1);
    assert.equal(stack.sandbox.state.payments.size - before, 1);
  });

  test('customer data goes to the partner, never to the browser', async () => {
    const checkout = await newCheckout(stack, { name: 'Maria Silva', document: '529.982.247-25', callback: 'https://shop.example/thanks' });
    const { json } = await payFor(stack, checkout.checkout_id);
    const payment = PaymentView.parse(json);
    const upstream = stack.sandbox.state.payments.get(payment.reference);
    assert.equal(upstream?.customer?.name, 'Maria Silva');
    assert.equal(upstream?.callback, 'https://shop.example/thanks');
    assert.deepEqual(Object.keys(json as object).sort(), Object.keys(PaymentView.shape).sort());
    assert.doesNotMatch(JSON.stringify(json), /Maria|529\.982|52998224725/);
  });

  test('an alphanumeric CNPJ is accepted in any case and reaches the partner upper-cased', async () => {
    const checkout = await newCheckout(stack, { name: 'Loja Alfa LTDA', document: '12.abc.345/01de-35' });
    const payment = PaymentView.parse((await payFor(stack, checkout.checkout_id)).json);
    assert.deepEqual(stack.sandbox.state.payments.get(payment.reference)?.customer, { name: 'Loja Alfa LTDA', document: '12.ABC.345/01DE-35' });
    const wrong = await merchant(stack, 'POST', '/checkouts', { value: 1, order_id: newOrder(), name: 'Loja', document: '12.ABC.345/01DE-36' });
    assert.ok(expectError(wrong, 400, 'invalid_request').fields?.document);
  });

  describe('amount tampering is refused', () => {
    test('a value in the body: 400 naming value, nothing issued', async () => {
      const checkout = await newCheckout();
      const before = stack.sandbox.state.payments.size;
      const error = expectError(
        await browser(stack, 'POST', `/checkouts/${checkout.checkout_id}/payment`, { body: '{"value":0.2}', headers: { 'content-type': 'application/json' } }),
        400,
        'invalid_request',
      );
      assert.ok(error.fields?.value);
      assert.equal(stack.sandbox.state.payments.size, before);
    });

    test('any field at all is refused; an empty JSON object is fine', async () => {
      const checkout = await newCheckout();
      for (const body of ['{"description":"x"}', '{"name":"Maria","document":"52998224725"}', '{"amount":1}']) {
        expectError(
          await browser(stack, 'POST', `/checkouts/${checkout.checkout_id}/payment`, { body, headers: { 'content-type': 'application/json' } }),
          400,
          'invalid_request',
        );
      }
      const ok = await browser(stack, 'POST', `/checkouts/${checkout.checkout_id}/payment`, { body: '{}', headers: { 'content-type': 'application/json' } });
      assert.equal(PaymentView.parse(ok.json).value, 49.9);
    });

    test('a body without a JSON content type: 415', async () => {
      const checkout = await newCheckout();
      expectError(
        await browser(stack, 'POST', `/checkouts/${checkout.checkout_id}/payment`, { body: 'value=0.2', headers: { 'content-type': 'text/plain' } }),
        415,
        'unsupported_media_type',
      );
      expectError(
        await browser(stack, 'POST', `/checkouts/${checkout.checkout_id}/payment`, { body: new Uint8Array([1, 2, 3]) as unknown as string }),
        415,
        'unsupported_media_type',
      );
    });

    test('the open-amount endpoint is off unless turned on', async () => {
      const off = await startDevStack({ openAmount: false });
      try {
        const result = await browser(off, 'POST', '/payments', { body: '{"value":0.2}', headers: { 'content-type': 'application/json' } });
        expectError(result, 403, 'open_amount_disabled');
      } finally {
        await off.close();
      }
    });

    test('open-amount bounds are enforced', async () => {
      const bounded = await startDevStack({ openAmount: { min: 5, max: 50 } });
      try {
        const post = (value: number) =>
          browser(bounded, 'POST', '/payments', { body: JSON.stringify({ value }), headers: { 'content-type': 'application/json' } });
        assert.ok(expectError(await post(4.99), 400, 'invalid_request').fields?.value);
        assert.ok(expectError(await post(50.01), 400, 'invalid_request').fields?.value);
        assert.equal((await post(5)).res.status, 201);
      } finally {
        await bounded.close();
      }
    });
  });

  test('an unknown checkout: 404; a malformed id: 400 naming id', async () => {
    expectError(await payFor(stack, `co_${'A'.repeat(24)}`), 404, 'not_found');
    const error = expectError(await payFor(stack, 'co_short'), 400, 'invalid_request');
    assert.ok(error.fields?.id);
    expectError(await browser(stack, 'GET', `/checkouts/co_${'A'.repeat(24)}/payment`), 405, 'method_not_allowed');
  });
});

describe("the payment's first screen, for a script-tag page's head (?render=)", () => {
  const PHONE = 'Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0 Mobile Safari/537.36';
  const DESKTOP = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0 Safari/537.36';
  const renderFor = (id: string, query: string, userAgent = PHONE) =>
    browser(stack, 'POST', `/checkouts/${id}/payment?${query}`, { headers: { 'user-agent': userAgent } });

  test("the answer is the payment, plus its shadow root's styles and markup (the QR, the code) and the copy texts, in the asked language", async () => {
    const checkout = await newCheckout();
    const { res, json } = await renderFor(checkout.checkout_id, `${FIRST_SCREEN.param}=pt-BR`);
    assert.equal(res.status, 201);
    const { [FIRST_SCREEN.field]: screen, ...rest } = json as Record<string, unknown> & { [FIRST_SCREEN.field]: FirstScreen };
    const payment = PaymentView.parse(rest);
    // The same payment as any later call answers: the render adds to the answer, it changes nothing of it.
    const again = await payFor(stack, checkout.checkout_id);
    assert.equal(again.res.status, 200);
    assert.deepEqual(Object.keys(again.json as object).sort(), Object.keys(rest).sort());
    assert.equal(PaymentView.parse(again.json).reference, payment.reference);
    assert.match(screen.css, /:host/);
    assert.doesNotMatch(screen.html, /<style|<template|<script|<!--|<\?/, 'the styles apart; no nested shadow root, script or hydration marker');
    assert.match(screen.html, /<svg[^>]*part="qr"|part="qr"[^>]*>\s*<svg/);
    assert.ok(screen.html.includes(`>${payment.brcode}</textarea>`), 'the code in its field, to select and copy before any script');
    assert.deepEqual(screen.texts, {
      copy: 'Copiar código',
      copied: 'Código copiado',
      failed: 'Não foi possível copiar. O código está selecionado: copie manualmente.',
    });
    const english = await renderFor((await newCheckout()).checkout_id, `${FIRST_SCREEN.param}=en`);
    assert.equal((english.json as { [FIRST_SCREEN.field]: FirstScreen })[FIRST_SCREEN.field].texts.copy, 'Copy code');
  });

  test('the layout is guessed from the request as the server render guesses it: on a phone the code comes before the QR', async () => {
    const order = (html: string) => Math.sign(html.indexOf('part="code"') - html.indexOf('part="qr"'));
    const phone = await renderFor((await newCheckout()).checkout_id, `${FIRST_SCREEN.param}=pt-BR`, PHONE);
    const desktop = await renderFor((await newCheckout()).checkout_id, `${FIRST_SCREEN.param}=pt-BR`, DESKTOP);
    assert.equal(order((phone.json as { [FIRST_SCREEN.field]: FirstScreen })[FIRST_SCREEN.field].html), -1);
    assert.equal(order((desktop.json as { [FIRST_SCREEN.field]: FirstScreen })[FIRST_SCREEN.field].html), 1);
  });

  test('another language or any other parameter: 400 naming it, and no payment issued', async () => {
    const checkout = await newCheckout();
    const error = expectError(await renderFor(checkout.checkout_id, `${FIRST_SCREEN.param}=fr`), 400, 'invalid_request');
    assert.ok(error.fields?.[FIRST_SCREEN.param], JSON.stringify(error));
    expectError(await renderFor(checkout.checkout_id, 'amount=1'), 400, 'invalid_request');
    const { json } = await merchant(stack, 'GET', `/checkouts/${checkout.checkout_id}`);
    assert.equal(CheckoutView.parse(json).payment ?? null, null, 'a refused call issues nothing');
  });
});

describe('renewal after expiry', () => {
  test('under a status numbering that does not hold, no second code is offered: the first may have been paid', async () => {
    // The numbered dialect (0 pending) read with the default setting (1 pending): a mismatch of code 0 at the first payment.
    const local = await startDevStack({ dialect: 'numbered', logger: createLogger({ level: 'silent' }) });
    try {
      const checkout = await newCheckout(local);
      assert.equal((await payFor(local, checkout.checkout_id)).res.status, 201);
      assert.equal(local.pix.numbering.report().state, 'mismatch');
      assert.equal(local.pix.numbering.report().codes.pending, 'unverified');
      local.sandbox.state.clock.advance(HOUR);
      expectError(await payFor(local, checkout.checkout_id), 503, 'status_unverified');
      assert.equal(local.sandbox.state.payments.size, 1, 'no second payment created upstream');
    } finally {
      await local.close();
    }
  });

  test('an expired payment is replaced, up to the renewals allowed, then 409 renewals_exhausted', async () => {
    const local = await startDevStack({ renewals: 1 });
    try {
      await verifyStatusCodes(local);
      const checkout = await newCheckout(local);
      const first = PaymentView.parse((await payFor(local, checkout.checkout_id)).json);
      local.sandbox.state.clock.advance(HOUR);
      const second = await payFor(local, checkout.checkout_id);
      assert.equal(second.res.status, 201);
      const renewed = PaymentView.parse(second.json);
      assert.notEqual(renewed.reference, first.reference);
      assert.equal(renewed.status, 'pending');
      assert.equal(renewed.value, first.value);
      const view = CheckoutView.parse((await merchant(local, 'GET', `/checkouts/${checkout.checkout_id}`)).json);
      assert.equal(view.renewals_left, 0);
      assert.equal(view.payment?.reference, renewed.reference);

      local.sandbox.state.clock.advance(HOUR);
      // Expired, but payable until the partner cancels it an hour later: never told "expired" meanwhile.
      const early = await payFor(local, checkout.checkout_id);
      expectError(early, 503, 'status_unverified');
      assert.equal(early.res.headers.get('retry-after'), '3600', 'asked back once the partner will have canceled it (an hour at most)');
      local.sandbox.state.clock.advance(HOUR + 60_000);
      expectError(await payFor(local, checkout.checkout_id), 409, 'renewals_exhausted');
      assert.equal(CheckoutView.parse((await merchant(local, 'GET', `/checkouts/${checkout.checkout_id}`)).json).status, 'canceled');
    } finally {
      await local.close();
    }
  });

  test('renewals exhausted while the last code may still be paid: 503 with Retry-After, never "expired"; paid late, it is the answer', async () => {
    const local = await startDevStack({ renewals: 0, logger: createLogger({ level: 'silent' }) });
    try {
      await verifyStatusCodes(local);
      const checkout = await newCheckout(local);
      const first = PaymentView.parse((await payFor(local, checkout.checkout_id)).json);
      local.sandbox.state.clock.advance(HOUR + 5 * 60_000);
      const answer = await payFor(local, checkout.checkout_id);
      expectError(answer, 503, 'status_unverified');
      assert.equal(answer.res.headers.get('retry-after'), String(HOUR / 1000 - 5 * 60 + 60));
      // The customer pays the expired code meanwhile: that is the answer, paid.
      assert.equal(local.sandbox.state.pay(local.sandbox.state.payments.get(first.reference)!).ok, true);
      const paid = await payFor(local, checkout.checkout_id);
      assert.equal(paid.res.status, 200, JSON.stringify(paid.json));
      assert.deepEqual([PaymentView.parse(paid.json).reference, PaymentView.parse(paid.json).status], [first.reference, 'paid']);
    } finally {
      await local.close();
    }
  });

  test('no renewal when the expired code was paid late: the paid payment is answered', async () => {
    const { checkout, first } = await checkoutWithExpiredCode();
    // The payer's bank accepts it within the hour before the partner cancels it.
    const payment = stack.sandbox.state.payments.get(first.reference)!;
    assert.equal(stack.sandbox.state.pay(payment).ok, true);
    const again = await payFor(stack, checkout.checkout_id);
    assert.equal(again.res.status, 200);
    assert.equal(PaymentView.parse(again.json).reference, first.reference);
    assert.equal(PaymentView.parse(again.json).status, 'paid');
  });

  test('a paid checkout keeps answering its paid payment', async () => {
    const checkout = await newCheckout();
    const first = PaymentView.parse((await payFor(stack, checkout.checkout_id)).json);
    await fetch(`${stack.url}/sandbox/_sandbox/payments/${first.reference}/pay`, { method: 'POST' });
    // Past any freshness window (the trusted one while notifications arrive): the read asks the partner.
    stack.sandbox.state.clock.advance(DEFAULTS.partnerReads.trustedMs);
    const view = CheckoutView.parse((await merchant(stack, 'GET', `/checkouts/${checkout.checkout_id}`)).json);
    assert.equal(view.status, 'paid');
    stack.sandbox.state.clock.advance(2 * HOUR);
    const again = PaymentView.parse((await payFor(stack, checkout.checkout_id)).json);
    assert.deepEqual([again.reference, again.status], [first.reference, 'paid']);
  });
});

/**
 * Another proxy instance on the stack's store (the same SQLite file, the same partner account and
 * status numbering), whose partner client a test alters: faults and races only; every call it does
 * not alter goes to the real sandbox over HTTPS.
 */
function secondInstance(on: DevStack, alter: (real: PartnerClient) => Partial<PartnerClient>, settings: Partial<AppDeps> = {}) {
  const base = proxyConfig({});
  const counts = { createPayment: 0 };
  const altered: PartnerClient = { ...on.partner, ...alter(on.partner) };
  const partner: PartnerClient = {
    ...altered,
    createPayment: (input) => {
      counts.createPayment++;
      return altered.createPayment(input);
    },
  };
  const app = createApp({
    partner,
    store: on.store,
    now: on.sandbox.state.clock.now,
    logger: createLogger({ level: 'silent' }),
    rateLimits: false,
    partnerScope: tokenStoreKey(base.partner.baseUrl, base.partner.credentials?.email),
    ...settings,
  });
  return { app, counts };
}

/** Pays each code at the partner, in order, confirms it, and answers the checkout.overpaid events once one is in the outbox. */
async function payAllUntilOverpaid(on: DevStack, references: string[]) {
  for (const reference of references) {
    assert.equal(on.sandbox.state.pay(on.sandbox.state.payments.get(reference)!).ok, true);
    await on.pix.payments.reads.confirm(reference);
  }
  return waitFor('the overpayment told', async () => {
    const rows = (await on.store.outbox.list()).filter((e) => e.type === 'checkout.overpaid');
    return rows.length > 0 && rows;
  });
}

/** Asks `other` for the checkout's code: the answer is the paid code, and the new one, created upstream, is never attached. */
async function expectPaidNotAttached(other: ReturnType<typeof secondInstance>, checkoutId: CheckoutView['checkout_id'], paid: string): Promise<void> {
  const res = await other.app.request(`/api/checkouts/${checkoutId}/payment`, { method: 'POST' });
  assert.equal(res.status, 200);
  const answer = PaymentView.parse(await res.json());
  assert.deepEqual([answer.reference, answer.status], [paid, 'paid']);
  assert.equal(other.counts.createPayment, 1, 'the new code was created upstream');
  const stored = await stack.store.checkouts.get(checkoutId);
  assert.deepEqual([stored?.paymentReference, stored?.renewalsUsed], [paid, 0], 'but never attached');
}

describe('a new code only when every earlier code is confirmed unpaid', () => {
  const unreadable = (operation: string) => new PartnerError('unavailable', `${operation}: the answer could not be read`, { operation });
  const cases: [string, (real: PartnerClient, reference: string) => PartnerClient['getPayment']][] = [
    [
      'a status code the numbering does not know',
      (real, reference) => async (r) => ({ ...(await real.getPayment(r)), ...(r === reference ? { status: { code: 7, word: null } } : {}) }),
    ],
    ['no status at all', (real, reference) => async (r) => ({ ...(await real.getPayment(r)), ...(r === reference ? { status: null } : {}) })],
    [
      'an unreadable answer (the partner down)',
      (real, reference) => async (r) => (r === reference ? Promise.reject(unreadable('getPayment')) : real.getPayment(r)),
    ],
  ];
  for (const [label, getPayment] of cases) {
    test(`the expired code reads as ${label}: 503 status_unverified, and no payment is created`, async () => {
      const { checkout, first } = await checkoutWithExpiredCode();
      const before = stack.sandbox.state.payments.size;
      // A code the setting does not name, read before the hour, proves the setting wrong (a mismatch,
      // kept in the store): that instance keeps its verdicts apart, so this file's stack stays trusted.
      const scope = label.startsWith('a status code') ? { partnerScope: `isolated-${newOrder()}` } : {};
      const other = secondInstance(stack, (real) => ({ getPayment: getPayment(real, first.reference) }), scope);
      const res = await other.app.request(`/api/checkouts/${checkout.checkout_id}/payment`, { method: 'POST' });
      const error = expectError({ res, json: await res.json() }, 503, 'status_unverified');
      assert.match(error.message, /no new code/);
      assert.equal(other.counts.createPayment, 0, 'no create call');
      assert.equal(stack.sandbox.state.payments.size, before);
      assert.equal((await stack.store.checkouts.get(checkout.checkout_id))?.paymentReference, first.reference);
      // Read for sure (the real partner: pending), the same checkout gets its new code.
      assert.equal((await payFor(stack, checkout.checkout_id)).res.status, 201);
    });
  }

  test('the expired code paid (recorded by another instance) between the check and the attach: no new code attached, the answer is paid', async () => {
    const { checkout, first } = await checkoutWithExpiredCode();
    // This instance confirms the code unpaid, then creates a new one; meanwhile the customer pays the
    // expired code and the other instance (the stack) records it paid: what its webhook does.
    const other = secondInstance(stack, (real) => ({
      createPayment: async (input) => {
        const created = await real.createPayment(input);
        assert.equal(stack.sandbox.state.pay(stack.sandbox.state.payments.get(first.reference)!).ok, true);
        assert.equal((await stack.pix.payments.reads.confirm(first.reference))?.final, true);
        return created;
      },
    }));
    await expectPaidNotAttached(other, checkout.checkout_id, first.reference);
    const view = CheckoutView.parse((await merchant(stack, 'GET', `/checkouts/${checkout.checkout_id}`)).json);
    assert.deepEqual([view.status, view.payment?.reference, view.payment?.status], ['paid', first.reference, 'paid']);
    // The page asking again still gets the paid code.
    const again = PaymentView.parse((await payFor(stack, checkout.checkout_id)).json);
    assert.deepEqual([again.reference, again.status], [first.reference, 'paid']);
  });

  test('the expired code paid at the partner (no one told yet) while the new code is created: the check is asked again, the new code never shown', async () => {
    const { checkout, first } = await checkoutWithExpiredCode();
    // The customer pays the expired code right after the proxy confirmed it unpaid, while its new code
    // is being created; no webhook, no other instance: only the partner knows.
    const other = secondInstance(stack, (real) => ({
      createPayment: async (input) => {
        assert.equal(stack.sandbox.state.pay(stack.sandbox.state.payments.get(first.reference)!).ok, true);
        return real.createPayment(input);
      },
    }));
    await expectPaidNotAttached(other, checkout.checkout_id, first.reference);
    const again = PaymentView.parse((await payFor(stack, checkout.checkout_id)).json);
    assert.deepEqual([again.reference, again.status], [first.reference, 'paid']);
  });
});

describe('the amount the partner reports', () => {
  test('another value than ours: not paid; flagged on the checkout, a payment.amount_mismatch event and an error log', async () => {
    const checkout = await newCheckout();
    const first = PaymentView.parse((await payFor(stack, checkout.checkout_id)).json);
    const upstream = stack.sandbox.state.payments.get(first.reference)!;
    upstream.value = 4.99;
    assert.equal(stack.sandbox.state.pay(upstream).ok, true);
    // Confirmed with the partner (as its notification is): approved, but for R$ 4,99.
    await stack.pix.payments.reads.confirm(first.reference);
    const events = (await stack.store.outbox.list()).filter((e) => e.reference === first.reference);
    assert.deepEqual(
      events.map((e) => e.type),
      ['payment.amount_mismatch'],
      'told once, never payment.paid',
    );
    const event = JSON.parse(events[0]!.body) as { data: Record<string, unknown> };
    assert.deepEqual([event.data.value, event.data.reported_value, event.data.checkout_id], [49.9, 4.99, checkout.checkout_id]);
    assert.ok(
      logLines.some((l) => l.includes('"level":50') && l.includes('another value') && l.includes(first.reference)),
      'an error log line',
    );
    stack.sandbox.state.clock.advance(DEFAULTS.partnerReads.trustedMs);
    const view = CheckoutView.parse((await merchant(stack, 'GET', `/checkouts/${checkout.checkout_id}`)).json);
    assert.notEqual(view.status, 'paid');
    assert.deepEqual(view.amount_mismatch, { reference: first.reference, value: 49.9, reported_value: 4.99 });
    const page = PaymentView.parse((await browser(stack, 'GET', `/payments/${first.reference}`)).json);
    assert.notEqual(page.status, 'paid', 'the widget never shows it paid');
    assert.equal((await stack.store.payments.get(first.reference))?.final, false);
    // Nor is a new code issued beside it: the customer paid something.
    stack.sandbox.state.clock.advance(HOUR);
    expectError(await payFor(stack, checkout.checkout_id), 503, 'status_unverified');
  });
});

describe('a checkout paid twice', () => {
  test('the expired code paid after its renewal was shown: the page and the merchant get the paid code, never the pending new one', async () => {
    const { checkout, first } = await checkoutWithExpiredCode();
    const second = PaymentView.parse((await payFor(stack, checkout.checkout_id)).json);
    assert.equal(second.status, 'pending');
    assert.equal(stack.sandbox.state.pay(stack.sandbox.state.payments.get(first.reference)!).ok, true);
    await stack.pix.payments.reads.confirm(first.reference);
    const again = PaymentView.parse((await payFor(stack, checkout.checkout_id)).json);
    assert.deepEqual([again.reference, again.status], [first.reference, 'paid']);
    const view = CheckoutView.parse((await merchant(stack, 'GET', `/checkouts/${checkout.checkout_id}`)).json);
    assert.deepEqual([view.status, view.payment?.reference, view.overpaid], ['paid', first.reference, undefined]);
  });

  for (const refundOverpayments of [false, true]) {
    test(`the expired code paid after a renewal: the checkout says overpaid, the merchant is told once${refundOverpayments ? ' (PIX_REFUND_OVERPAYMENTS: no payer key, reported)' : ''}`, async () => {
      const lines: string[] = [];
      const local = await startDevStack({
        renewals: 1,
        refundOverpayments,
        logger: createLogger({ level: 'warn', destination: { write: (line: string) => void lines.push(line) } }),
      });
      try {
        const checkout = await newCheckout(local);
        const first = PaymentView.parse((await payFor(local, checkout.checkout_id)).json);
        local.sandbox.state.clock.advance(HOUR);
        const second = PaymentView.parse((await payFor(local, checkout.checkout_id)).json);
        assert.notEqual(second.reference, first.reference);
        // The renewed code is paid, and the expired one too (its payer's bank, within the hour).
        const told = await payAllUntilOverpaid(local, [second.reference, first.reference]);
        local.sandbox.state.clock.advance(DEFAULTS.partnerReads.trustedMs);
        const view = CheckoutView.parse((await merchant(local, 'GET', `/checkouts/${checkout.checkout_id}`)).json);
        assert.equal(view.status, 'paid');
        assert.deepEqual(view.overpaid, { value: 49.9, references: [first.reference, second.reference] });
        await merchant(local, 'GET', `/checkouts/${checkout.checkout_id}`);
        const rows = (await local.store.outbox.list()).filter((e) => e.type === 'checkout.overpaid');
        assert.equal(rows.length, 1, 'told once');
        assert.equal(rows[0]!.eventId, told[0]!.eventId);
        const event = JSON.parse(rows[0]!.body) as { data: Record<string, unknown> };
        assert.deepEqual(
          [event.data.value, event.data.references, event.data.checkout_id, event.data.refund],
          [49.9, [first.reference, second.reference], checkout.checkout_id, refundOverpayments ? 'payer_key_unknown' : 'off'],
        );
        const warned = lines.filter((l) => l.includes('"level":40') && l.includes('paid more than once'));
        assert.equal(warned.length, 1);
        if (refundOverpayments) assert.match(warned[0]!, /no payer key/);
        assert.deepEqual(view.refunds, [], 'no refund sent without a payer key');
      } finally {
        await local.close();
      }
    });
  }
});

describe('a new checkout for the same order (replaces)', () => {
  test('links to the earlier one; the earlier code paid late beside the new one is an overpayment of the order, told once', async () => {
    const local = await startDevStack({ renewals: 0, logger: createLogger({ level: 'silent' }) });
    try {
      await verifyStatusCodes(local);
      const earlier = await newCheckout(local);
      const first = PaymentView.parse((await payFor(local, earlier.checkout_id)).json);
      local.sandbox.state.clock.advance(HOUR);
      // The merchant gives the customer a new checkout for the order, naming the earlier one.
      const later = await newCheckout(local, { replaces: earlier.checkout_id });
      assert.equal(later.replaces, earlier.checkout_id);
      const second = PaymentView.parse((await payFor(local, later.checkout_id)).json);
      const told = await payAllUntilOverpaid(local, [second.reference, first.reference]);
      const event = JSON.parse(told[0]!.body) as { data: Record<string, unknown> };
      assert.deepEqual([event.data.checkout_id, event.data.references, event.data.value], [later.checkout_id, [first.reference, second.reference], 49.9]);
      const view = CheckoutView.parse((await merchant(local, 'GET', `/checkouts/${later.checkout_id}`)).json);
      assert.deepEqual(
        [view.status, view.replaces, view.overpaid],
        ['paid', earlier.checkout_id, { value: 49.9, references: [first.reference, second.reference] }],
      );
      assert.equal((await local.store.outbox.list()).filter((e) => e.type === 'checkout.overpaid').length, 1, 'told once');
      // Naming a checkout that is not here is refused.
      const unknown = await merchant(local, 'POST', '/checkouts', { value: 49.9, order_id: newOrder(), replaces: 'co_AAAAAAAAAAAAAAAAAAAAAAAA' });
      assert.equal(unknown.res.status >= 400 && unknown.res.status < 500, true, JSON.stringify(unknown.json));
    } finally {
      await local.close();
    }
  });
});

describe('an overpayment refunded to its payer (PIX_REFUND_OVERPAYMENTS)', () => {
  test('with the payer key known (a partner whose records name it): the extra is refunded once, labelled overpayment, and told with its transfer', async () => {
    const { checkout, first } = await checkoutWithExpiredCode();
    const second = PaymentView.parse((await payFor(stack, checkout.checkout_id)).json);
    // Both codes recorded paid, here with no event published (as another instance's webhooks would).
    for (const reference of [first.reference, second.reference]) {
      assert.equal(
        (await stack.store.payments.updateStatus(reference, PARTNER_STATUS.approved, true, stack.sandbox.state.clock.now(), paymentOutcome)).changed,
        true,
      );
    }
    const other = secondInstance(stack, () => ({}), { refundOverpayments: true, payerKeyOf: () => 'ana@cliente.example', apiKey: stack.apiKey });
    const read = async () => {
      const res = await other.app.request(`/api/checkouts/${checkout.checkout_id}`, { headers: { authorization: `Bearer ${stack.apiKey}` } });
      assert.equal(res.status, 200);
      return CheckoutView.parse(await res.json());
    };
    const view = await read();
    assert.deepEqual([view.status, view.overpaid], ['paid', { value: 49.9, references: [first.reference, second.reference] }]);
    assert.equal(view.refunds?.length, 1);
    assert.deepEqual([view.refunds[0]!.value, view.refunds[0]!.reference, view.refunds[0]!.pix_key === 'ana@cliente.example'], [49.9, 'overpayment', false]);
    const again = await read();
    assert.deepEqual(
      again.refunds?.map((r) => r.transfer_id),
      [view.refunds[0]!.transfer_id],
      'refunded once',
    );
    const rows = (await stack.store.outbox.list()).filter((e) => e.type === 'checkout.overpaid' && e.reference === second.reference);
    assert.equal(rows.length, 1);
    const event = JSON.parse(rows[0]!.body) as { data: Record<string, unknown> };
    assert.deepEqual([event.data.refund, event.data.transfer_id], ['sent', view.refunds[0]!.transfer_id]);
  });
});

describe('"need more time?": a new code before the current one expires', () => {
  const renew = (on: DevStack, id: string, body = '{"renew":true}') =>
    browser(on, 'POST', `/checkouts/${id}/payment`, { body, headers: { 'content-type': 'application/json' } });

  test('the view says whether a new code may still be issued; renew issues one now, counted, until none is left', async () => {
    const local = await startDevStack({ renewals: 1, logger: createLogger({ level: 'silent' }) });
    try {
      const checkout = await newCheckout(local);
      const first = PaymentView.parse((await payFor(local, checkout.checkout_id)).json);
      assert.equal(first.renewable, true);
      // Asked again without renew: the same code, still renewable.
      assert.equal(PaymentView.parse((await payFor(local, checkout.checkout_id)).json).reference, first.reference);
      local.sandbox.state.clock.advance(HOUR - 90_000);
      const renewed = await renew(local, checkout.checkout_id);
      assert.equal(renewed.res.status, 201);
      const second = PaymentView.parse(renewed.json);
      assert.notEqual(second.reference, first.reference);
      assert.equal(second.status, 'pending');
      assert.equal(second.renewable, false, 'that was the last renewal');
      assert.equal(Date.parse(second.expires_at) - Date.parse(second.server_time) > HOUR - 60_000, true, 'a whole new hour');
      expectError(await renew(local, checkout.checkout_id), 409, 'renewals_exhausted');
      assert.equal(local.sandbox.state.payments.size, 2);
    } finally {
      await local.close();
    }
  });

  test('a payment made at the last second wins: renew answers it paid and issues nothing', async () => {
    const checkout = await newCheckout();
    const first = PaymentView.parse((await payFor(stack, checkout.checkout_id)).json);
    const before = stack.sandbox.state.payments.size;
    // Paid at the partner a moment ago: the proxy has not heard of it yet.
    assert.equal(stack.sandbox.state.pay(stack.sandbox.state.payments.get(first.reference)!).ok, true);
    const answer = await renew(stack, checkout.checkout_id);
    assert.equal(answer.res.status, 200);
    const view = PaymentView.parse(answer.json);
    assert.deepEqual([view.reference, view.status], [first.reference, 'paid']);
    assert.ok(view.paid_at && Date.parse(view.paid_at) > 0, 'the receipt has its time');
    assert.equal(stack.sandbox.state.payments.size, before, 'no new code');
  });

  test('any other body is refused: renew false, a value', async () => {
    const checkout = await newCheckout();
    for (const body of ['{"renew":false}', '{"renew":"yes"}', '{"value":1}', '{"renew":true,"value":1}']) {
      const error = expectError(await renew(stack, checkout.checkout_id, body), 400, 'invalid_request');
      assert.ok(error.fields && Object.keys(error.fields).length > 0, body);
    }
  });
});

describe('who is being paid, and the receipt', () => {
  test('the payment view names the receiving party; a dialect whose create answer lacks it has it read once after (numbered)', async () => {
    const checkout = await newCheckout();
    const view = PaymentView.parse((await payFor(stack, checkout.checkout_id)).json);
    assert.equal(view.favoured, DEFAULT_ACCOUNT.partner.name);
    // The numbered dialect's create answer does not say who is paid.
    const terse = await startDevStack({
      dialect: 'numbered',
      statusCodes: { ...SANDBOX_DIALECTS.numbered.statusCodes },
      logger: createLogger({ level: 'silent' }),
    });
    try {
      const created = PaymentView.parse((await payFor(terse, (await newCheckout(terse)).checkout_id)).json);
      const read = await waitFor('favoured read after the create', async () => {
        const again = PaymentView.parse((await browser(terse, 'GET', `/payments/${created.reference}`)).json);
        return again.favoured ? again : undefined;
      });
      assert.equal(read.favoured, DEFAULT_ACCOUNT.partner.name);
    } finally {
      await terse.close();
    }
  });
});

describe('confirming a checkout (merchant server)', () => {
  test('open, then pending with the payment, then paid', async () => {
    const checkout = await newCheckout();
    const get = () => merchant(stack, 'GET', `/checkouts/${checkout.checkout_id}`);
    assert.equal(CheckoutView.parse((await get()).json).status, 'open');
    const payment = PaymentView.parse((await payFor(stack, checkout.checkout_id)).json);
    const pending = CheckoutView.parse((await get()).json);
    assert.equal(pending.status, 'pending');
    assert.equal(pending.payment?.reference, payment.reference);
    await fetch(`${stack.url}/sandbox/_sandbox/payments/${payment.reference}/pay`, { method: 'POST' });
    // Past any freshness window (the trusted one while notifications arrive): the read asks the partner.
    stack.sandbox.state.clock.advance(DEFAULTS.partnerReads.trustedMs);
    assert.equal(CheckoutView.parse((await get()).json).status, 'paid');
  });

  test('without the API key: 401; unknown: 404; malformed: 400', async () => {
    const checkout = await newCheckout();
    expectError(await merchant(stack, 'GET', `/checkouts/${checkout.checkout_id}`, undefined, null), 401, 'unauthorized');
    expectError(await merchant(stack, 'GET', `/checkouts/co_${'B'.repeat(24)}`), 404, 'not_found');
    expectError(await merchant(stack, 'GET', '/checkouts/nope'), 400, 'invalid_request');
    expectError(await merchant(stack, 'DELETE', `/checkouts/${checkout.checkout_id}`), 405, 'method_not_allowed');
    expectError(await merchant(stack, 'GET', '/checkouts'), 405, 'method_not_allowed');
  });
});

describe('CORS and origins', () => {
  let shop: DevStack;
  before(async () => {
    shop = await startDevStack({ allowedOrigins: ['https://shop.example'] });
  });
  after(async () => {
    await shop.close();
  });

  test("an allowed origin's preflight and call get the CORS headers", async () => {
    const checkout = await newCheckout(shop);
    const preflight = await fetch(`${shop.apiUrl}/checkouts/${checkout.checkout_id}/payment`, {
      method: 'OPTIONS',
      headers: { origin: 'https://shop.example', 'access-control-request-method': 'POST' },
    });
    assert.equal(preflight.status, 204);
    assert.equal(preflight.headers.get('access-control-allow-origin'), 'https://shop.example');
    const call = await browser(shop, 'POST', `/checkouts/${checkout.checkout_id}/payment`, { headers: { origin: 'https://shop.example' } });
    assert.equal(call.res.status, 201);
    assert.equal(call.res.headers.get('access-control-allow-origin'), 'https://shop.example');
  });

  test('another origin gets no CORS headers, and its POST is refused before anything is created', async () => {
    const checkout = await newCheckout(shop);
    const preflight = await fetch(`${shop.apiUrl}/payments`, {
      method: 'OPTIONS',
      headers: { origin: 'https://evil.example', 'access-control-request-method': 'POST' },
    });
    assert.equal(preflight.headers.get('access-control-allow-origin'), null);
    const before = shop.sandbox.state.payments.size;
    expectError(await browser(shop, 'POST', `/checkouts/${checkout.checkout_id}/payment`, { headers: { origin: 'https://evil.example' } }), 403, 'forbidden');
    assert.equal(shop.sandbox.state.payments.size, before);
  });

  test('the API-key endpoints never answer CORS', async () => {
    const res = await fetch(`${shop.apiUrl}/checkouts`, {
      method: 'OPTIONS',
      headers: { origin: 'https://shop.example', 'access-control-request-method': 'POST' },
    });
    assert.equal(res.headers.get('access-control-allow-origin'), null);
  });

  test('security headers on API answers', async () => {
    const res = await fetch(`${shop.apiUrl}/payments/abc`);
    assert.equal(res.headers.get('x-content-type-options'), 'nosniff');
    assert.match(res.headers.get('content-security-policy') ?? '', /default-src 'none'/);
    assert.equal(res.headers.get('x-frame-options'), 'SAMEORIGIN');
  });
});

/** A dev stack of its own with `options`, closed after `run` whatever happens. */
async function withOwnStack(options: DevStackOptions, run: (own: DevStack) => Promise<void>): Promise<void> {
  const own = await startDevStack(options);
  try {
    await run(own);
  } finally {
    await own.close();
  }
}

describe('rate limits', () => {
  test('creating: the burst, then 429 with Retry-After and the error body; refilled with time; per client', () =>
    withOwnStack(
      {
        allowedOrigins: ['https://shop.example'],
        rateLimits: { create: { perMinute: 6, burst: 2 }, status: { perMinute: 600, burst: 100 } },
        trustedProxies: 1,
      },
      async (limited) => {
        const checkout = await newCheckout(limited);
        const from = (ip: string) =>
          browser(limited, 'POST', `/checkouts/${checkout.checkout_id}/payment`, { headers: { 'x-forwarded-for': ip, origin: 'https://shop.example' } });
        assert.equal((await from('203.0.113.1')).res.status, 201);
        assert.equal((await from('203.0.113.1')).res.status, 200);
        const refused = await from('203.0.113.1');
        expectError(refused, 429, 'rate_limited');
        assert.equal(refused.res.headers.get('retry-after'), '10', 'one request every 10 s at 6 a minute');
        assert.equal(refused.res.headers.get('access-control-allow-origin'), 'https://shop.example', 'the widget can read the 429');
        assert.equal((await from('198.51.100.7')).res.status, 200, 'another client has its own bucket');
        limited.sandbox.state.clock.advance(10_000);
        assert.equal((await from('203.0.113.1')).res.status, 200, 'refilled after Retry-After');
      },
    ));

  test('reading: limited separately from creating', () =>
    withOwnStack({ rateLimits: { create: { perMinute: 60, burst: 5 }, status: { perMinute: 60, burst: 3 } } }, async (limited) => {
      const checkout = await newCheckout(limited);
      const payment = PaymentView.parse((await payFor(limited, checkout.checkout_id)).json);
      const statuses: number[] = [];
      for (let i = 0; i < 4; i++) statuses.push((await browser(limited, 'GET', `/payments/${payment.reference}`)).res.status);
      assert.deepEqual(statuses, [200, 200, 200, 429]);
      expectError(await browser(limited, 'GET', `/payments/${payment.reference}/events`), 429, 'rate_limited');
      assert.equal((await payFor(limited, checkout.checkout_id)).res.status, 200, 'creating still has tokens');
    }));

  test('X-Forwarded-For is ignored unless a proxy is trusted', () =>
    withOwnStack({ rateLimits: { create: { perMinute: 6, burst: 1 }, status: { perMinute: 600, burst: 100 } } }, async (limited) => {
      const checkout = await newCheckout(limited);
      const from = (ip: string) =>
        payFor(limited, checkout.checkout_id).then(() =>
          browser(limited, 'POST', `/checkouts/${checkout.checkout_id}/payment`, { headers: { 'x-forwarded-for': ip } }),
        );
      assert.equal((await from('192.0.2.1')).res.status, 429, 'a forged address does not buy a new bucket');
    }));
});

describe('restart with data kept', () => {
  test('checkouts, payments and the partner token survive closing and reopening the same database file', async () => {
    const sandbox = await startSandbox();
    const dataDir = mkdtempSync(join(tmpdir(), 'pix-restart-'));
    try {
      const first = await startDevStack({ sandbox, dataDir });
      const checkout = await newCheckout(first);
      const payment = PaymentView.parse((await payFor(first, checkout.checkout_id)).json);
      const tokensIssued = sandbox.state.tokens.size;
      await first.close();

      const second = await startDevStack({ sandbox, dataDir });
      try {
        const again = await payFor(second, checkout.checkout_id);
        assert.equal(again.res.status, 200);
        assert.equal(PaymentView.parse(again.json).reference, payment.reference, 'the same payment, not a new QR');
        const view = CheckoutView.parse((await merchant(second, 'GET', `/checkouts/${checkout.checkout_id}`)).json);
        assert.equal(view.order_id, checkout.order_id);
        const read = await browser(second, 'GET', `/payments/${payment.reference}`);
        assert.equal(PaymentView.parse(read.json).brcode, payment.brcode);
        second.sandbox.state.clock.advance(DEFAULTS.staleAfterMs);
        await browser(second, 'GET', `/payments/${payment.reference}`);
        assert.equal(sandbox.state.tokens.size, tokensIssued, 'the stored token was reused: no new login');
      } finally {
        await second.close();
      }
    } finally {
      await sandbox.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

describe('issue_payment: the first payment issued when the checkout is created', () => {
  /** Counts the partner calls the app makes while `body` runs. */
  async function partnerCalls<T>(body: () => Promise<T>): Promise<{ result: T; creates: number; reads: number }> {
    const partner = stack.partner;
    const saved = {
      createPayment: Object.getOwnPropertyDescriptor(partner, 'createPayment')!,
      getPayment: Object.getOwnPropertyDescriptor(partner, 'getPayment')!,
    };
    const createPayment = partner.createPayment.bind(partner);
    const getPayment = partner.getPayment.bind(partner);
    let creates = 0;
    let reads = 0;
    partner.createPayment = (...args) => (creates++, createPayment(...args));
    partner.getPayment = (...args) => (reads++, getPayment(...args));
    try {
      return { result: await body(), creates, reads };
    } finally {
      Object.defineProperties(partner, saved);
    }
  }

  test("201 pending with its payment; the page's first call answers that payment from the store, asking the partner nothing", async () => {
    const created = await partnerCalls(() => newCheckout(stack, { issue_payment: true }));
    assert.equal(created.creates, 1, 'one payment created upstream at creation');
    const checkout = created.result;
    assert.equal(checkout.status, 'pending', JSON.stringify(checkout));
    assert.ok(checkout.payment, 'the view carries the payment');
    assert.equal(checkout.payment.value, 49.9, 'its value');

    const first = await partnerCalls(() => payFor(stack, checkout.checkout_id));
    assert.equal(first.result.res.status, 200, 'the current payment, not a new one');
    const payment = PaymentView.parse(first.result.json);
    assert.equal(payment.reference, checkout.payment.reference, 'the same payment');
    assert.equal(payment.renewable, true, 'renewable as any first payment');
    assert.deepEqual([first.creates, first.reads], [0, 0], 'no partner call for the first QR');
    assert.equal(Date.parse(payment.expires_at) - Date.parse(checkout.payment.created_at), DEFAULTS.expirationSeconds * 1000, 'its expiry runs from creation');
  });

  test('the same order again keeps its payment; without the option nothing is issued until the page asks', async () => {
    const order = newOrder();
    const first = await merchant(stack, 'POST', '/checkouts', { value: 30, order_id: order, issue_payment: true });
    const again = await partnerCalls(() => merchant(stack, 'POST', '/checkouts', { value: 30, order_id: order, issue_payment: true }));
    assert.equal(again.result.res.status, 200, JSON.stringify(again.result.json));
    assert.equal(again.creates, 0, 'no second payment');
    assert.equal(CheckoutView.parse(again.result.json).payment?.reference, CheckoutView.parse(first.json).payment?.reference, 'the same payment');

    const plain = await partnerCalls(() => newCheckout(stack, { issue_payment: false }));
    assert.equal(plain.result.status, 'open', 'issue_payment false: open');
    assert.equal(plain.creates, 0, 'nothing issued');
    expectError(await merchant(stack, 'POST', '/checkouts', { value: 30, order_id: newOrder(), issue_payment: 'yes' }), 400, 'invalid_request');
  });

  test("the partner failing at creation: the checkout is still created, open, and the page's first call issues the payment", async () => {
    const fault = stack.sandbox.state.faults.add({
      kind: 'server_error',
      rate: 1,
      path_prefix: PARTNER_PATHS.createPayment,
      latency_ms: null,
      // A 503 to a create is a refusal (nothing was created), so it is not issued again at once.
      status: 503,
      times: 1,
    });
    const linesBefore = logLines.length;
    const checkout = await newCheckout(stack, { issue_payment: true });
    assert.equal(stack.sandbox.state.faults.list().includes(fault), false, 'the fault struck');
    assert.equal(checkout.status, 'open', JSON.stringify(checkout));
    assert.equal(checkout.payment, undefined, 'no payment yet');
    assert.ok(
      logLines.slice(linesBefore).some((line) => line.includes('could not be issued at creation') && line.includes(checkout.checkout_id)),
      'a warning names the checkout',
    );
    const { res, json } = await payFor(stack, checkout.checkout_id);
    assert.equal(res.status, 201, JSON.stringify(json));
    assert.equal(PaymentView.parse(json).status, 'pending', 'issued on the first call');
  });
});

describe('a payment whose creation has an unknown outcome', () => {
  test('the checkout issues another at once: the customer never saw the first code', async () => {
    const fault = stack.sandbox.state.faults.add({
      kind: 'malformed_json',
      rate: 1,
      path_prefix: PARTNER_PATHS.createPayment,
      latency_ms: null,
      status: null,
      times: 1,
    });
    const before = stack.sandbox.state.payments.size;
    const checkout = await newCheckout();
    const { res, json } = await payFor(stack, checkout.checkout_id);
    assert.equal(res.status, 201, JSON.stringify(json));
    const payment = PaymentView.parse(json);
    // Two were created upstream: the first one's answer was lost, the second is the one shown.
    assert.equal(stack.sandbox.state.payments.size, before + 2);
    assert.equal(stack.sandbox.state.faults.list().includes(fault), false, 'the fault struck once');
    const mine = [...stack.sandbox.state.payments.values()].slice(-2);
    assert.equal(mine[1]!.externalReference, payment.reference);
    assert.notEqual(mine[0]!.transactionId, mine[1]!.transactionId);
    assert.equal((await stack.store.payments.get(mine[0]!.externalReference)) ?? null, null, 'the unseen one is not attached');
    // The operator can find the lost one: its transaction_id and the answer as received, in one error line.
    const line = logLines.find((l) => l.includes('payment creation outcome unknown') && l.includes(mine[0]!.transactionId!));
    assert.ok(line, 'logged with its transaction_id');
    assert.match(line, /"raw_answer":/);
  });
});

describe('health, readiness and shutdown', () => {
  test('/health is live; /ready checks the store and the partner', async () => {
    const health = await fetch(`${stack.url}/health`);
    assert.deepEqual(await health.json(), { status: 'ok' });
    const ready = await fetch(`${stack.url}/ready`);
    assert.equal(ready.status, 200);
    // Payments were created before: the status codes are verified by their first one.
    const body = (await ready.json()) as { status: string; checks: unknown; reads: { mode: string } };
    assert.deepEqual([body.status, body.checks], ['ready', { store: 'ok', database: 'sqlite', partner: 'ok', status_codes: 'verified' }]);
    assert.ok(['webhooks', 'polling'].includes(body.reads.mode), `the pace of partner reads is shown: ${JSON.stringify(body.reads)}`);
  });

  test('closing ends open status streams and finishes', async () => {
    const local = await startDevStack();
    const checkout = await newCheckout(local);
    const payment = PaymentView.parse((await payFor(local, checkout.checkout_id)).json);
    const res = await fetch(`${local.apiUrl}/payments/${payment.reference}/events`);
    const reader = res.body!.getReader();
    assert.ok((await reader.read()).value, 'the first event arrived');
    await local.close();
    let done = false;
    for (let i = 0; i < 10 && !done; i++) done = (await reader.read()).done;
    assert.equal(done, true, 'the stream ended with the server');
  });
});

describe('secrets', () => {
  test('no token, access key, API key or document in any browser-facing answer or any log line', () => {
    const tokens = [...stack.sandbox.state.tokens];
    assert.ok(tokens.length > 0, 'the proxy did log in');
    assert.ok(browserSaw.length > 20 && logLines.length > 50, `${browserSaw.length} answers, ${logLines.length} log lines`);
    const secrets = [...tokens, DEFAULT_ACCOUNT.accessKey, stack.apiKey, '529.982.247-25', '52998224725', DEFAULT_ACCOUNT.tenant.id];
    for (const text of [...browserSaw, ...logLines]) {
      for (const secret of secrets) assert.equal(text.includes(secret), false, `a secret leaked into: ${text.slice(0, 200)}`);
    }
    assert.ok(
      logLines.some((line) => JSON.parse(line).upstream?.operation === 'createPayment'),
      'upstream calls are logged (without secrets)',
    );
  });
});

describe('renewal while only the pending code is verified (domain/numbering/status-numbering.ts)', () => {
  test('a first code paid, read only after its expiry: its code may be an expired one, so nothing is decided and no second code is issued', async () => {
    const local = await startDevStack({ logger: createLogger({ level: 'silent' }) });
    try {
      const checkout = await newCheckout(local);
      const first = PaymentView.parse((await payFor(local, checkout.checkout_id)).json);
      assert.deepEqual(local.pix.numbering.report().codes, { pending: 'verified', approved: 'unverified', canceled: 'unverified' });
      // Paid with its notification lost: only a read can tell.
      const control = (path: string, body?: unknown) =>
        fetch(`${local.url}/sandbox/_sandbox${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body ?? {}) });
      assert.equal((await control('/faults', { kind: 'drop_webhook', rate: 1 })).status, 201);
      assert.equal((await control(`/payments/${first.reference}/pay`)).status, 200);
      local.sandbox.state.clock.advance(HOUR);
      expectError(await payFor(local, checkout.checkout_id), 503, 'status_unverified');
      assert.equal(local.pix.numbering.report().codes.approved, 'unverified', 'a code read past expiry proves nothing');
      assert.equal(local.sandbox.state.payments.size, 1, 'no second payment created upstream');
    } finally {
      await local.close();
    }
  });
});
