/**
 * Conformance, payments: spec 2.1 (the record), 3 (pending, paid, canceled 1 hour after expiration),
 * 4.1 (tenant), 4.3 (create, every field and rule), 4.4 (HEAD check), 4.5 (details) and the payment
 * limits of section 8, against the sandbox over real HTTPS.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { LIMITS } from '../../../src/shared/limits.ts';
import {
  PARTNER_PATHS,
  PARTNER_STATUS,
  PAYMENT_CHECK_HTTP,
  PartnerErrorResponse,
  PartnerPaymentResponse,
  TenantResponse,
} from '../../../server/partner/wire.ts';
import { DEFAULT_ACCOUNT } from '../../../server/sandbox/state.ts';
import { T0, TIMESTAMP_PATTERN, UUID_PATTERN, paymentPath, startHarness, type Harness } from '../../support/sandbox-harness.ts';

let h: Harness;
before(async () => {
  h = await startHarness();
});
after(() => h.close());

const tenant = DEFAULT_ACCOUNT.tenant.id;

async function create(body: Record<string, unknown>) {
  return h.api('POST', PARTNER_PATHS.createPayment, { body: { tenant_id: tenant, ...body } });
}

/** Asserts a 422 naming exactly `fields`. */
function assertInvalid(res: Awaited<ReturnType<typeof create>>, fields: string[]) {
  assert.equal(res.status, 422, res.text);
  const body = PartnerErrorResponse.parse(res.json);
  assert.deepEqual(Object.keys(body.errors ?? {}).sort(), [...fields].sort(), res.text);
  for (const field of fields) assert.match(body.errors![field]![0]!, new RegExp(`^${field.replace('.', '\\.')} `));
}

async function record(reference: string) {
  const res = await h.api('GET', paymentPath(PARTNER_PATHS.getPayment, reference));
  assert.equal(res.status, 200, res.text);
  return PartnerPaymentResponse.parse(res.json).data;
}

async function check(reference: string) {
  const res = await h.api('HEAD', paymentPath(PARTNER_PATHS.checkPayment, reference));
  assert.equal(res.text, '', 'HEAD answers without a body');
  return res.status;
}

describe('4.1 get tenant', () => {
  test('answers {message, data: {id, name}} with a UUID id', async () => {
    const res = await h.api('GET', PARTNER_PATHS.getTenant);
    assert.equal(res.status, 200);
    const data = TenantResponse.parse(res.json).data;
    assert.match(data.id, UUID_PATTERN);
    assert.equal(data.name, DEFAULT_ACCOUNT.tenant.name);
  });
});

describe('4.3 create payment', () => {
  test('with every field: 201 with pix_key, qr_code_url, checkout and a valid dynamic BR Code', async () => {
    const data = await h.createPayment({
      value: 123.45,
      callback: 'https://loja.example/obrigado',
      name: 'Maria Silva',
      document: '529.982.247-25',
      expiration: 600,
      transaction_id: 'pedido-42',
      description: 'Loja Exemplo',
    });
    assert.match(data.external_reference, /^[A-Za-z0-9]+$/);
    assert.equal(data.qr_code_url, `${h.sandbox.url}/qr/${data.external_reference}.svg`);
    assert.equal(data.checkout, `${h.sandbox.url}/checkout/${data.external_reference}`);
    assert.match(data.created_at, TIMESTAMP_PATTERN);
    assert.equal(data.expiration, 600);
    const stored = h.sandbox.state.payments.get(data.external_reference)!;
    assert.equal(stored.transactionId, 'pedido-42');
    assert.equal(stored.callback, 'https://loja.example/obrigado');
  });

  test('the BR Code points at the sandbox and never carries the customer', async () => {
    const data = await h.createPayment({ value: 5, name: 'Maria Silva', document: '52998224725' });
    assert.ok(data.pix_key.includes(`${new URL(h.sandbox.url).host}/pix/v2/${data.external_reference}`));
    assert.equal(data.pix_key.includes('52998224725'), false);
    assert.equal(JSON.stringify(data).includes('52998224725'), false, 'the document is not echoed');
  });

  const { min, max } = LIMITS.paymentValue;
  test(`value: ${min} and ${max} are accepted, one cent beyond each is refused`, async () => {
    await h.createPayment({ value: min });
    await h.createPayment({ value: max });
    await h.createPayment({ value: 0.21 });
    await h.createPayment({ value: 9999.99 });
    assertInvalid(await create({ value: 0.19 }), ['value']);
    assertInvalid(await create({ value: 10_000.01 }), ['value']);
    assertInvalid(await create({ value: 0 }), ['value']);
    assertInvalid(await create({ value: -1 }), ['value']);
  });

  test('value: cents only, a number, required', async () => {
    assertInvalid(await create({ value: 1.001 }), ['value']);
    assertInvalid(await create({ value: '10.00' }), ['value']);
    assertInvalid(await create({ value: null }), ['value']);
    assertInvalid(await create({}), ['value']);
    const res = await create({ value: 1.001 });
    assert.match(res.json.errors.value[0], /two decimals/);
  });

  test("tenant_id: required, and must be this partner's tenant", async () => {
    const missing = await h.api('POST', PARTNER_PATHS.createPayment, { body: { value: 1 } });
    assertInvalid(missing, ['tenant_id']);
    assertInvalid(await create({ value: 1, tenant_id: '00000000-0000-4000-8000-000000000000' }), ['tenant_id']);
    assertInvalid(await create({ value: 1, tenant_id: 7 }), ['tenant_id']);
  });

  test(`description: ${LIMITS.descriptionMaxLength} characters (code points) accepted, one more refused`, async () => {
    await h.createPayment({ description: 'd'.repeat(50) });
    await h.createPayment({ description: '🛒'.repeat(50) });
    // Stricter than the spec (ASSUMPTIONS.md): printed on the proof of payment, so never empty.
    assertInvalid(await create({ value: 1, description: '' }), ['description']);
    assertInvalid(await create({ value: 1, description: 'd'.repeat(51) }), ['description']);
    assertInvalid(await create({ value: 1, description: '🛒'.repeat(51) }), ['description']);
    assertInvalid(await create({ value: 1, description: 5 }), ['description']);
  });

  test('name and document: both or neither', async () => {
    await h.createPayment({});
    await h.createPayment({ name: 'Maria Silva', document: '529.982.247-25' });
    assertInvalid(await create({ value: 1, name: 'Maria Silva' }), ['document']);
    assertInvalid(await create({ value: 1, document: '529.982.247-25' }), ['name']);
    assertInvalid(await create({ value: 1, name: '   ', document: '529.982.247-25' }), ['name']);
  });

  test('document: CPF and CNPJ with valid check digits, with or without punctuation', async () => {
    for (const document of ['529.982.247-25', '52998224725', '11.222.333/0001-81', '11222333000181', '11 222 333 0001 81']) {
      await h.createPayment({ name: 'Cliente', document });
    }
    for (const document of ['529.982.247-26', '5299822472', '111.111.111-11', '11.222.333/0001-82', 'abc', '', '529982247250']) {
      assertInvalid(await create({ value: 1, name: 'Cliente', document }), ['document']);
    }
  });

  test('expiration: default 3600 seconds; a whole positive number of seconds', async () => {
    const data = await h.createPayment({});
    assert.equal(data.expiration, LIMITS.defaultExpirationSeconds);
    await h.createPayment({ expiration: 1 });
    for (const expiration of [0, -5, 1.5, '60']) assertInvalid(await create({ value: 1, expiration }), ['expiration']);
  });

  test('callback: an http(s) URL', async () => {
    await h.createPayment({ callback: 'http://loja.example/volta' });
    for (const callback of ['not a url', 'ftp://loja.example/', 'javascript:alert(1)', 3]) {
      assertInvalid(await create({ value: 1, callback }), ['callback']);
    }
  });

  test('transaction_id: 1 to 100 characters', async () => {
    await h.createPayment({ transaction_id: 't'.repeat(100) });
    assertInvalid(await create({ value: 1, transaction_id: 't'.repeat(101) }), ['transaction_id']);
    assertInvalid(await create({ value: 1, transaction_id: '' }), ['transaction_id']);
  });

  test('unknown fields and bodies that are not objects are refused, naming them', async () => {
    assertInvalid(await create({ value: 1, amount: 1 }), ['amount']);
    for (const body of [[], 'x', 1, null]) {
      const res = await h.api('POST', PARTNER_PATHS.createPayment, { body });
      assertInvalid(res, ['body']);
    }
  });
});

describe('2.1 / 4.5 payment details', () => {
  test('the record has every field of 2.1 with its type, in {message, data}', async () => {
    const created = await h.createPayment({ value: 42.1, callback: 'https://loja.example/ok', transaction_id: 'abc' });
    const res = await h.api('GET', paymentPath(PARTNER_PATHS.getPayment, created.external_reference));
    assert.equal(res.status, 200);
    assert.equal(typeof res.json.message, 'string');
    const data = PartnerPaymentResponse.parse(res.json).data;
    assert.ok(Number.isInteger(data.id));
    assert.equal(data.external_reference, created.external_reference);
    assert.equal(data.value, 42.1);
    assert.equal(data.callback, 'https://loja.example/ok');
    assert.equal(data.type, 'payment');
    assert.ok(Number.isInteger(data.user_id));
    assert.equal(data.status, PARTNER_STATUS.pending);
    assert.equal(data.deeplink, null);
    assert.deepEqual(data.pix_deposit, {
      qr_code_url: created.qr_code_url,
      pix_key: created.pix_key,
      favoured: DEFAULT_ACCOUNT.partner.name,
      external_reference: created.external_reference,
      checkout: created.checkout,
    });
    assert.deepEqual(data.partner, DEFAULT_ACCOUNT.partner);
    assert.match(data.tenant.id, UUID_PATTERN);
    assert.equal(data.tenant.name, DEFAULT_ACCOUNT.tenant.name);
    assert.match(data.created_at, TIMESTAMP_PATTERN);
    assert.ok(Date.parse(data.created_at) >= T0);
  });

  test('callback is null when none was given', async () => {
    const created = await h.createPayment({});
    assert.equal((await record(created.external_reference)).callback, null);
  });

  test('an unknown reference is 404 with a message', async () => {
    const res = await h.api('GET', paymentPath(PARTNER_PATHS.getPayment, 'does-not-exist'));
    assert.equal(res.status, 404);
    assert.ok(PartnerErrorResponse.parse(res.json).message);
  });
});

describe('3 / 4.4 payment states and the HEAD check', () => {
  test(`pending (${PAYMENT_CHECK_HTTP.pending}) until paid (${PAYMENT_CHECK_HTTP.paid})`, async () => {
    const created = await h.createPayment({});
    assert.equal(await check(created.external_reference), PAYMENT_CHECK_HTTP.pending);
    const pay = await h.control('POST', `/payments/${created.external_reference}/pay`);
    assert.deepEqual(pay.json, { reference: created.external_reference, status: PARTNER_STATUS.approved });
    assert.equal(await check(created.external_reference), PAYMENT_CHECK_HTTP.paid);
    assert.equal((await record(created.external_reference)).status, PARTNER_STATUS.approved);
  });

  test(`an unknown reference: ${PAYMENT_CHECK_HTTP.notFound}`, async () => {
    assert.equal(await check('nope'), PAYMENT_CHECK_HTTP.notFound);
  });

  test('the check is HEAD only: GET is 405 with Allow: HEAD', async () => {
    const created = await h.createPayment({});
    const res = await h.api('GET', paymentPath(PARTNER_PATHS.checkPayment, created.external_reference));
    assert.equal(res.status, 405);
    assert.equal(res.headers.allow, 'HEAD');
  });

  test('an unpaid payment stays pending past its expiration and is canceled exactly 1 hour after it', async () => {
    const created = await h.createPayment({ expiration: 120 });
    const reference = created.external_reference;
    await h.advance(120);
    assert.equal((await record(reference)).status, PARTNER_STATUS.pending, 'at expiration');
    await h.advance(LIMITS.cancelAfterExpirationSeconds - 0.001);
    assert.equal((await record(reference)).status, PARTNER_STATUS.pending, '1 ms before the cancellation');
    assert.equal(await check(reference), PAYMENT_CHECK_HTTP.pending);
    await h.advance(0.001);
    assert.equal((await record(reference)).status, PARTNER_STATUS.canceled, 'at expiration + 1 hour');
    assert.equal(await check(reference), PAYMENT_CHECK_HTTP.canceled);
  });

  test('the default expiration (3600 s) cancels 2 hours after creation', async () => {
    const created = await h.createPayment({});
    await h.advance(2 * 3600 - 1);
    assert.equal((await record(created.external_reference)).status, PARTNER_STATUS.pending);
    await h.advance(1);
    assert.equal((await record(created.external_reference)).status, PARTNER_STATUS.canceled);
  });

  test('a late payment within the hour after expiration is still accepted; a canceled one cannot be paid', async () => {
    const late = await h.createPayment({ expiration: 60 });
    const gone = await h.createPayment({ expiration: 60 });
    await h.advance(60 + 1800);
    assert.equal((await h.control('POST', `/payments/${late.external_reference}/pay`)).status, 200);
    await h.advance(1800);
    assert.equal((await record(gone.external_reference)).status, PARTNER_STATUS.canceled);
    const refused = await h.control('POST', `/payments/${gone.external_reference}/pay`);
    assert.equal(refused.status, 409);
    assert.equal(refused.json.error.code, 'conflict');
    assert.equal((await record(late.external_reference)).status, PARTNER_STATUS.approved, 'a paid payment is never canceled');
  });

  test('the control API cancels a pending payment; paying or canceling twice is a 409', async () => {
    const created = await h.createPayment({});
    const cancel = await h.control('POST', `/payments/${created.external_reference}/cancel`);
    assert.deepEqual(cancel.json, { reference: created.external_reference, status: PARTNER_STATUS.canceled });
    assert.equal(await check(created.external_reference), PAYMENT_CHECK_HTTP.canceled);
    assert.equal((await h.control('POST', `/payments/${created.external_reference}/cancel`)).status, 409);
    assert.equal((await h.control('POST', `/payments/${created.external_reference}/pay`)).status, 409);
    assert.equal((await h.control('POST', '/payments/nope/pay')).status, 404);
  });
});

describe('QR image and hosted checkout', () => {
  test('qr_code_url serves an SVG of the code', async () => {
    const created = await h.createPayment({});
    const res = await h.api('GET', new URL(created.qr_code_url).pathname, { token: false });
    assert.equal(res.status, 200);
    assert.equal(res.headers['content-type'], 'image/svg+xml');
    assert.match(res.text, /^<svg/);
  });

  test('checkout shows value, code and status, and its button pays', async () => {
    const created = await h.createPayment({ value: 25.9, callback: 'https://loja.example/ok' });
    const path = new URL(created.checkout).pathname;
    const page = await h.api('GET', path, { token: false });
    assert.equal(page.status, 200);
    assert.match(page.text, /R\$\s?25,90/);
    assert.ok(page.text.includes(created.pix_key));
    assert.match(page.text, /Aguardando pagamento/);
    assert.match(page.text, new RegExp(`action="${created.external_reference}/pay"`));

    const pay = await h.api('POST', `${path}/pay`, { token: false });
    assert.equal(pay.status, 303);
    assert.equal(new URL(pay.headers.location!, `${h.sandbox.url}${path}/pay`).pathname, path);
    const paid = await h.api('GET', path, { token: false });
    assert.match(paid.text, /Pago/);
    assert.ok(paid.text.includes('https://loja.example/ok'), 'a way back to the shop');
    assert.equal(paid.text.includes('<button'), false);
  });

  test('checkout shows expired, then canceled', async () => {
    const created = await h.createPayment({ expiration: 30 });
    const path = new URL(created.checkout).pathname;
    await h.advance(30);
    assert.match((await h.api('GET', path, { token: false })).text, /Expirado/);
    await h.advance(3600);
    assert.match((await h.api('GET', path, { token: false })).text, /Cancelado/);
  });

  test('unknown payments: 404 on both', async () => {
    assert.equal((await h.api('GET', '/qr/nope.svg', { token: false })).status, 404);
    assert.equal((await h.api('GET', '/checkout/nope', { token: false })).status, 404);
  });
});
