/**
 * Conformance, transfers: spec 2.3 (key formats), 3 (refusals up front; pending until the bank
 * answers, sometimes late; approved or canceled), 4.6 (both operations), 4.7 (check) and the transfer
 * limits of section 8, against the sandbox over real HTTPS. The test customers are TEST_CUSTOMERS
 * (README.md): one per outcome.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { LIMITS } from '../../../src/shared/limits.ts';
import {
  PARTNER_PATHS,
  PARTNER_STATUS,
  PartnerErrorResponse,
  PartnerTransferResponse,
  TRANSFER_REFUSAL_HTTP,
  TRANSFER_REFUSAL_REASONS,
  type TransferRefusalReason,
} from '../../../server/partner/wire.ts';
import { PIX_KEY_TYPES } from '../../../src/shared/pix-keys.ts';
import { TEST_CUSTOMERS } from '../../../server/sandbox/customers.ts';
import { TIMESTAMP_PATTERN, paymentPath, startHarness, type Harness } from '../../support/sandbox-harness.ts';

let h: Harness;
before(async () => {
  h = await startHarness();
});
after(() => h.close());

/** The harness's bank timing (sandbox seconds). */
const ANSWER_AFTER = 60;
const LATE_ANSWER_AFTER = 7200;

const customer = (name: string) => TEST_CUSTOMERS.find((c) => c.name.startsWith(name))!;
const ana = customer('Ana'); // approved, bank approves
const bruno = customer('Bruno'); // KYC pending
const carla = customer('Carla'); // KYC rejected
const diego = customer('Diego'); // bank refuses up front
const elisa = customer('Elisa'); // bank cancels later
const fabio = customer('Fabio'); // bank answers late
const gama = customer('Gama'); // a company (CNPJ)

function solicit(body: Record<string, unknown>) {
  return h.api('POST', PARTNER_PATHS.solicitTransferForCustomer, { body });
}
function toKey(body: Record<string, unknown>) {
  return h.api('POST', PARTNER_PATHS.transferToKey, { body });
}
const anaBody = (extra: Record<string, unknown> = {}) => ({
  customer_document: ana.document,
  value: 10,
  pix_key: ana.keys.EMAIL,
  pix_key_type: 'EMAIL',
  ...extra,
});

async function accepted(res: Awaited<ReturnType<typeof solicit>>) {
  assert.equal(res.status, 201, res.text);
  const data = PartnerTransferResponse.parse(res.json).data;
  assert.equal(data.status, PARTNER_STATUS.pending);
  assert.equal(data.type, 'transfer');
  assert.equal(data.end2end, null);
  assert.match(data.created_at, TIMESTAMP_PATTERN);
  assert.match(data.updated_at, TIMESTAMP_PATTERN);
  return data;
}

function refused(res: Awaited<ReturnType<typeof solicit>>, reason: TransferRefusalReason, fields?: string[]) {
  assert.equal(res.status, TRANSFER_REFUSAL_HTTP[reason], res.text);
  const body = PartnerErrorResponse.parse(res.json);
  assert.equal(body.reason, reason);
  assert.ok(body.message.length > 0);
  if (fields) assert.deepEqual(Object.keys(body.errors ?? {}).sort(), [...fields].sort(), res.text);
  for (const c of TEST_CUSTOMERS) assert.equal(res.text.includes(c.document), false, 'no document in an error');
  return body;
}

async function checkTransfer(reference: string) {
  const res = await h.api('GET', paymentPath(PARTNER_PATHS.checkTransfer, reference));
  assert.equal(res.status, 200, res.text);
  return PartnerTransferResponse.parse(res.json).data;
}

describe('2.3 key formats', () => {
  const valid: [string, string][] = [
    ['CPF', ana.keys.CPF!],
    ['CPF', '12345678909'],
    ['EMAIL', ana.keys.EMAIL!],
    ['EMAIL', 'ANA@Cliente.Example'],
    ['TELEFONE', ana.keys.TELEFONE!],
    ['TELEFONE', '+5511987654321'],
    ['CHAVE_ALEATORIA', ana.keys.CHAVE_ALEATORIA!],
    ['CHAVE_ALEATORIA', ana.keys.CHAVE_ALEATORIA!.toUpperCase()],
  ];
  for (const [type, key] of valid) {
    test(`${type} ${key}: accepted (the key is the customer's, in any of its written forms)`, async () => {
      await accepted(await solicit(anaBody({ pix_key: key, pix_key_type: type })));
    });
  }

  const invalid: [string, string][] = [
    ['CPF', '123.456.789-00'],
    ['CPF', '1234567890'],
    ['CPF', '123456789090'],
    ['CPF', '111.111.111-11'],
    ['CPF', 'ana@cliente.example'],
    ['EMAIL', 'ana.cliente.example'],
    ['EMAIL', 'ana@cliente'],
    ['EMAIL', 'ana @cliente.example'],
    ['EMAIL', `${'a'.repeat(70)}@cliente.example`],
    ['TELEFONE', '11987654321'],
    ['TELEFONE', '+551198765432'],
    ['TELEFONE', '+55119876543210'],
    ['TELEFONE', '+1 11 98765 4321'],
    ['CHAVE_ALEATORIA', '16dc6117204d4fbf8573ffe03328f598'],
    ['CHAVE_ALEATORIA', '16dc6117-204d-4fbf-8573-ffe03328f59'],
    ['CHAVE_ALEATORIA', 'zzdc6117-204d-4fbf-8573-ffe03328f598'],
    ['EMAIL', ''],
  ];
  for (const [type, key] of invalid) {
    test(`${type} ${JSON.stringify(key)}: 422 invalid_data naming pix_key`, async () => {
      refused(await solicit(anaBody({ pix_key: key, pix_key_type: type })), 'invalid_data', ['pix_key']);
    });
  }

  test('pix_key_type must be one of the four types', async () => {
    for (const type of ['CNPJ', 'cpf', 'PHONE', '', 1]) refused(await solicit(anaBody({ pix_key_type: type })), 'invalid_data', ['pix_key_type']);
    assert.deepEqual(PIX_KEY_TYPES, ['CPF', 'EMAIL', 'TELEFONE', 'CHAVE_ALEATORIA']);
  });

  test('transfer to a key: the key type is read from its form, every type works', async () => {
    for (const type of PIX_KEY_TYPES) {
      const data = await accepted(await toKey({ value: 1, pix_key: ana.keys[type] }));
      assert.equal(data.pix_key_type, type);
    }
    for (const key of ['not a key', '123.456.789-00', '+5511', '']) refused(await toKey({ value: 1, pix_key: key }), 'invalid_data', ['pix_key']);
  });
});

describe('4.6 and 8: values', () => {
  const { min, max } = LIMITS.transferValue;
  test(`${min} and ${max} are accepted; one cent beyond each, fractions of a cent and non-numbers are refused`, async () => {
    for (const value of [min, 0.21, 48_999.99, max]) await accepted(await solicit(anaBody({ value })));
    for (const value of [0.19, 49_000.01, 0, -10, 1.005, '10', null]) refused(await solicit(anaBody({ value })), 'invalid_data', ['value']);
    for (const value of [min, max]) await accepted(await toKey({ value, pix_key: ana.keys.EMAIL }));
    for (const value of [0.19, 49_000.01]) refused(await toKey({ value, pix_key: ana.keys.EMAIL }), 'invalid_data', ['value']);
  });

  test('a transfer above the payment maximum (10,000) but within 49,000 is fine', async () => {
    await accepted(await solicit(anaBody({ value: 10_000.01 })));
  });
});

describe('4.6 invalid data', () => {
  test('every required field of solicit-for-customer; unknown fields; transaction_id bounds', async () => {
    refused(await solicit({}), 'invalid_data', ['customer_document', 'pix_key', 'pix_key_type', 'value']);
    refused(await solicit(anaBody({ customer_document: '123.456.789-00' })), 'invalid_data', ['customer_document']);
    refused(await solicit(anaBody({ extra: 1 })), 'invalid_data', ['extra']);
    refused(await solicit(anaBody({ transaction_id: '' })), 'invalid_data', ['transaction_id']);
    refused(await solicit(anaBody({ transaction_id: 'x'.repeat(101) })), 'invalid_data', ['transaction_id']);
    const kept = await accepted(await solicit(anaBody({ transaction_id: 'x'.repeat(100) })));
    assert.equal(kept.transaction_id, 'x'.repeat(100));
  });

  test('transfer to a key takes no document or key type', async () => {
    refused(await toKey({}), 'invalid_data', ['pix_key', 'value']);
    refused(await toKey({ value: 1, pix_key: ana.keys.EMAIL, pix_key_type: 'EMAIL' }), 'invalid_data', ['pix_key_type']);
    refused(await toKey({ value: 1, pix_key: ana.keys.EMAIL, customer_document: ana.document }), 'invalid_data', ['customer_document']);
  });
});

describe('4.6 refusals up front', () => {
  test('every refusal reason is exercised here', () => {
    assert.deepEqual([...TRANSFER_REFUSAL_REASONS].sort(), ['bank_refused', 'invalid_data', 'key_owner_mismatch', 'kyc_not_approved']);
  });

  test('key_owner_mismatch: the key belongs to another customer, or to nobody', async () => {
    refused(await solicit(anaBody({ pix_key: elisa.keys.EMAIL })), 'key_owner_mismatch');
    refused(await solicit(anaBody({ pix_key: 'ninguem@cliente.example' })), 'key_owner_mismatch');
    refused(await solicit(anaBody({ customer_document: '529.982.247-25' })), 'key_owner_mismatch', undefined);
    refused(await solicit(anaBody({ pix_key: ana.keys.CPF, pix_key_type: 'CPF', customer_document: elisa.document })), 'key_owner_mismatch');
    refused(await toKey({ value: 1, pix_key: 'ninguem@cliente.example' }), 'key_owner_mismatch');
  });

  test('kyc_not_approved: pending and rejected KYC, on both operations', async () => {
    for (const who of [bruno, carla]) {
      const body = refused(await solicit({ customer_document: who.document, value: 5, pix_key: who.keys.EMAIL, pix_key_type: 'EMAIL' }), 'kyc_not_approved');
      assert.match(body.message, new RegExp(who.kyc));
      refused(await toKey({ value: 5, pix_key: who.keys.CPF }), 'kyc_not_approved');
    }
  });

  test("bank_refused: the customer's bank refuses up front", async () => {
    refused(await solicit({ customer_document: diego.document, value: 5, pix_key: diego.keys.CPF, pix_key_type: 'CPF' }), 'bank_refused');
    refused(await toKey({ value: 5, pix_key: diego.keys.EMAIL }), 'bank_refused');
  });

  test('invalid data is checked before ownership, KYC and bank', async () => {
    refused(await solicit({ customer_document: bruno.document, value: 0.1, pix_key: bruno.keys.EMAIL, pix_key_type: 'EMAIL' }), 'invalid_data', ['value']);
    refused(await solicit({ customer_document: diego.document, value: 5, pix_key: 'x', pix_key_type: 'EMAIL' }), 'invalid_data', ['pix_key']);
  });

  test('a company (CNPJ) customer can receive a transfer', async () => {
    await accepted(await solicit({ customer_document: gama.document, value: 5, pix_key: gama.keys.EMAIL, pix_key_type: 'EMAIL' }));
  });

  test('a refused transfer leaves no record', async () => {
    const before = h.sandbox.state.transfers.size;
    refused(await toKey({ value: 5, pix_key: diego.keys.EMAIL }), 'bank_refused');
    assert.equal(h.sandbox.state.transfers.size, before);
  });
});

describe('3 / 4.7 waiting for the bank', () => {
  test(`approved exactly ${ANSWER_AFTER} s (sandbox time) after it was accepted, with an end-to-end id`, async () => {
    const created = await accepted(await solicit(anaBody({ value: 12.34, transaction_id: 'saque-1' })));
    await h.advance(ANSWER_AFTER - 0.001);
    assert.equal((await checkTransfer(created.external_reference)).status, PARTNER_STATUS.pending);
    await h.advance(0.001);
    const done = await checkTransfer(created.external_reference);
    assert.equal(done.status, PARTNER_STATUS.approved);
    assert.match(done.end2end!, /^E\d{8}\d{12}[a-z0-9]{11}$/);
    assert.equal(done.end2end!.length, 32);
    assert.equal(done.value, 12.34);
    assert.equal(done.transaction_id, 'saque-1');
    assert.equal(done.pix_key, ana.keys.EMAIL);
    assert.equal(done.pix_key_type, 'EMAIL');
    assert.ok(Date.parse(done.updated_at) > Date.parse(done.created_at));
  });

  test('a bank that cancels: canceled after the usual delay, with no end-to-end id', async () => {
    const created = await accepted(await solicit({ customer_document: elisa.document, value: 5, pix_key: elisa.keys.CPF, pix_key_type: 'CPF' }));
    await h.advance(ANSWER_AFTER);
    const done = await checkTransfer(created.external_reference);
    assert.equal(done.status, PARTNER_STATUS.canceled);
    assert.equal(done.end2end, null);
  });

  test(`a late bank: still pending after the usual delay, approved at ${LATE_ANSWER_AFTER} s`, async () => {
    const created = await accepted(await toKey({ value: 5, pix_key: fabio.keys.TELEFONE }));
    await h.advance(ANSWER_AFTER);
    assert.equal((await checkTransfer(created.external_reference)).status, PARTNER_STATUS.pending);
    await h.advance(LATE_ANSWER_AFTER - ANSWER_AFTER - 0.001);
    assert.equal((await checkTransfer(created.external_reference)).status, PARTNER_STATUS.pending);
    await h.advance(0.001);
    assert.equal((await checkTransfer(created.external_reference)).status, PARTNER_STATUS.approved);
  });

  test('the control API makes a pending transfer succeed or fail now; a final one is a 409', async () => {
    const one = await accepted(await solicit(anaBody()));
    const two = await accepted(await toKey({ value: 3, pix_key: fabio.keys.CPF }));
    const approve = await h.control('POST', `/transfers/${one.external_reference}/approve`);
    assert.deepEqual(approve.json, { reference: one.external_reference, status: PARTNER_STATUS.approved });
    const cancel = await h.control('POST', `/transfers/${two.external_reference}/cancel`);
    assert.deepEqual(cancel.json, { reference: two.external_reference, status: PARTNER_STATUS.canceled });
    assert.equal((await checkTransfer(one.external_reference)).status, PARTNER_STATUS.approved);
    assert.equal((await checkTransfer(two.external_reference)).status, PARTNER_STATUS.canceled);
    await h.advance(LATE_ANSWER_AFTER);
    assert.equal((await checkTransfer(two.external_reference)).status, PARTNER_STATUS.canceled, 'the bank does not answer again');
    assert.equal((await h.control('POST', `/transfers/${one.external_reference}/cancel`)).status, 409);
    assert.equal((await h.control('POST', '/transfers/nope/approve')).status, 404);
  });

  test('the check of an unknown transfer is 404; a payment reference is not a transfer', async () => {
    assert.equal((await h.api('GET', paymentPath(PARTNER_PATHS.checkTransfer, 'nope'))).status, 404);
    const payment = await h.createPayment({});
    assert.equal((await h.api('GET', paymentPath(PARTNER_PATHS.checkTransfer, payment.external_reference))).status, 404);
  });
});

describe('the customer registry (control API)', () => {
  /** A customer whose KYC is approved, with one e-mail key. */
  const addCustomer = (document: string, name: string, email: string) =>
    h.control('POST', '/customers', { document, name, kyc: 'approved', keys: { EMAIL: email } });

  test('lists the test customers with KYC, bank behaviour and keys', async () => {
    const res = await h.control('GET', '/customers');
    assert.equal(res.status, 200);
    assert.equal(res.json.customers.length >= TEST_CUSTOMERS.length, true);
    const listed = res.json.customers.find((c: { name: string }) => c.name === ana.name);
    assert.deepEqual(listed, ana);
  });

  test('adds a customer, whose keys then work', async () => {
    const add = await addCustomer('529.982.247-25', 'Maria Nova', 'maria@nova.example');
    assert.equal(add.status, 201, add.text);
    await accepted(await toKey({ value: 1, pix_key: 'maria@nova.example' }));
    const again = await h.control('POST', '/customers', { document: '52998224725', name: 'Outra', kyc: 'approved', keys: {} });
    assert.equal(again.status, 409);
    const takenKey = await h.control('POST', '/customers', { document: '11.222.333/0001-81', name: 'Outra', kyc: 'approved', keys: { EMAIL: ana.keys.EMAIL } });
    assert.equal(takenKey.status, 409);
    const bad = await h.control('POST', '/customers', { document: '1', name: '', kyc: 'maybe', keys: { CPF: 'x', PHONE: '1' } });
    assert.equal(bad.status, 400);
    assert.deepEqual(Object.keys(bad.json.error.fields).sort(), ['document', 'keys.CPF', 'keys.PHONE', 'kyc', 'name'].sort());
  });

  test('companies with alphanumeric CNPJs are told apart by their letters and found in any case', async () => {
    // Both are valid and share every digit: only their letters tell them apart.
    const first = await addCustomer('12.ABC.345/01DE-35', 'Alfa LTDA', 'alfa@cnpj.example');
    assert.equal(first.status, 201, first.text);
    const second = await addCustomer('12AMC34501DE35', 'Beta LTDA', 'beta@cnpj.example');
    assert.equal(second.status, 201, second.text);
    const again = await h.control('POST', '/customers', { document: '12.abc.345/01de-35', name: 'Outra', kyc: 'approved', keys: {} });
    assert.equal(again.status, 409, again.text);
    await accepted(await solicit({ customer_document: '12.amc.345/01de-35', value: 5, pix_key: 'beta@cnpj.example', pix_key_type: 'EMAIL' }));
    refused(await solicit({ customer_document: '12amc34501de35', value: 5, pix_key: 'alfa@cnpj.example', pix_key_type: 'EMAIL' }), 'key_owner_mismatch');
  });
});
