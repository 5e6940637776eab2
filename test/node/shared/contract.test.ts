import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { CreatePaymentRequest, PaymentView } from '../../../src/shared/contract.ts';
import { invalidRequest, parseInput } from '../../../src/shared/errors.ts';
import { LIMITS, isCents } from '../../../src/shared/limits.ts';
import { CreatePartnerPaymentRequest, SolicitTransferRequest } from '../../../server/partner/wire.ts';

function fieldsOf(input: unknown): Record<string, string> | null {
  const result = parseInput(CreatePaymentRequest, input);
  return result.success ? null : (result.body.error.fields ?? {});
}

describe('payment value (0.20 to 10,000.00, cents)', () => {
  for (const value of [0.2, 0.21, 1, 10.5, 9999.99, 10_000]) {
    test(`${value} is accepted`, () => assert.equal(fieldsOf({ value }), null));
  }
  const cases: [unknown, string][] = [
    [0.19, 'must be at least 0.20'],
    [0, 'must be at least 0.20'],
    [-5, 'must be at least 0.20'],
    [10_000.01, 'must be at most 10,000.00'],
    [1e21, 'must be at most 10,000.00'],
    [10.555, 'must be an amount with at most two decimals'],
    ['10.50', 'must be a number'],
    [null, 'must be a number'],
    [Number.NaN, 'must be a number'],
  ];
  for (const [value, problem] of cases) {
    test(`${String(value)} is refused: value ${problem}`, () => assert.equal(fieldsOf({ value })?.value, problem));
  }
  test('a missing value is named', () => assert.deepEqual(fieldsOf({}), { value: 'is required' }));
  test('float noise is still cents', () => {
    assert.equal(isCents(0.1 + 0.2), true);
    assert.equal(isCents(0.29), true);
    assert.equal(isCents(0.295), false);
  });
});

describe('description (at most 50 characters)', () => {
  test('50 characters are accepted, counted as code points', () => {
    assert.equal(fieldsOf({ value: 1, description: 'x'.repeat(LIMITS.descriptionMaxLength) }), null);
    assert.equal(fieldsOf({ value: 1, description: '🙂'.repeat(50) }), null);
  });
  test('51 characters are refused', () => {
    assert.deepEqual(fieldsOf({ value: 1, description: 'x'.repeat(51) }), { description: 'must be at most 50 characters' });
  });
  test('a number is refused', () => {
    assert.deepEqual(fieldsOf({ value: 1, description: 12 }), { description: 'must be a string' });
  });
});

describe('name and document go together or not at all', () => {
  test('both are accepted', () => assert.equal(fieldsOf({ value: 1, name: 'Maria Silva', document: '529.982.247-25' }), null));
  test('neither is accepted', () => assert.equal(fieldsOf({ value: 1 }), null));
  test('name alone is refused, naming document', () => {
    assert.deepEqual(fieldsOf({ value: 1, name: 'Maria Silva' }), { document: 'is required when name is given' });
  });
  test('document alone is refused, naming name', () => {
    assert.deepEqual(fieldsOf({ value: 1, document: '52998224725' }), { name: 'is required when document is given' });
  });
  test('a document with a wrong check digit is refused', () => {
    assert.deepEqual(fieldsOf({ value: 1, name: 'Maria', document: '529.982.247-24' }), { document: 'must be a valid CPF or CNPJ' });
  });
  test('a CNPJ is accepted', () => assert.equal(fieldsOf({ value: 1, name: 'Loja', document: '11.222.333/0001-81' }), null));
  test('an alphanumeric CNPJ is accepted, with or without punctuation', () => {
    assert.equal(fieldsOf({ value: 1, name: 'Loja', document: '12.ABC.345/01DE-35' }), null);
    assert.equal(fieldsOf({ value: 1, name: 'Loja', document: '12ABC34501DE35' }), null);
  });
  test('an alphanumeric CNPJ in lower case is accepted and upper-cased', () => {
    const parsed = parseInput(CreatePaymentRequest, { value: 1, name: 'Loja', document: '12.abc.345/01de-35' });
    assert.equal(parsed.success && parsed.data.document, '12.ABC.345/01DE-35');
  });
  test('an alphanumeric CNPJ with a wrong check digit or a letter in its place is refused', () => {
    for (const document of ['12.ABC.345/01DE-36', '12.ABC.345/01DE-3A', '12.ABC.345/01DE-3', '12ABC34501DE350']) {
      assert.deepEqual(fieldsOf({ value: 1, name: 'Loja', document }), { document: 'must be a valid CPF or CNPJ' }, document);
    }
  });
  test('a blank name is refused', () => {
    assert.deepEqual(fieldsOf({ value: 1, name: '  ', document: '52998224725' }), { name: 'must not be empty' });
  });
});

describe('unknown and malformed input', () => {
  test('an unknown field is named', () => assert.deepEqual(fieldsOf({ value: 1, amount: 2 }), { amount: 'is not a known field' }));
  test('an array body is refused as a whole', () => assert.deepEqual(fieldsOf([1]), { body: 'must be an object' }));
  test('every problem is listed at once', () => {
    const result = parseInput(CreatePaymentRequest, { value: 0.1, description: 'x'.repeat(60), name: 'A' });
    assert.equal(result.success, false);
    const body = result.success ? invalidRequest([]) : result.body;
    assert.equal(body.error.code, 'invalid_request');
    assert.deepEqual(Object.keys(body.error.fields ?? {}).sort(), ['description', 'document', 'value']);
    assert.match(body.error.message, /value must be at least 0\.20/);
  });
});

describe('the partner request reuses the same rules', () => {
  const base = { value: 1, tenant_id: 't' };
  test('value bounds are the same', () => {
    assert.equal(CreatePartnerPaymentRequest.safeParse({ ...base, value: 0.19 }).success, false);
    assert.equal(CreatePartnerPaymentRequest.safeParse({ ...base, value: 10_000 }).success, true);
  });
  test('pairing is the same', () => {
    assert.equal(CreatePartnerPaymentRequest.safeParse({ ...base, name: 'Maria' }).success, false);
  });
  test('documents are the same: an alphanumeric CNPJ goes out upper-cased, a bad one never goes out', () => {
    assert.equal(CreatePartnerPaymentRequest.safeParse({ ...base, name: 'Loja', document: '12abc34501de35' }).data?.document, '12ABC34501DE35');
    assert.equal(CreatePartnerPaymentRequest.safeParse({ ...base, name: 'Loja', document: '12ABC34501DE36' }).success, false);
    const transfer = { value: 10, pix_key: 'ana@cliente.example', pix_key_type: 'EMAIL' };
    assert.equal(SolicitTransferRequest.safeParse({ ...transfer, customer_document: '12.abc.345/01de-35' }).data?.customer_document, '12.ABC.345/01DE-35');
    assert.equal(SolicitTransferRequest.safeParse({ ...transfer, customer_document: '12.ABC.345/01DE-53' }).success, false);
  });
  test('expiration must be whole positive seconds', () => {
    assert.equal(CreatePartnerPaymentRequest.safeParse({ ...base, expiration: 0 }).success, false);
    assert.equal(CreatePartnerPaymentRequest.safeParse({ ...base, expiration: 1.5 }).success, false);
    assert.equal(CreatePartnerPaymentRequest.safeParse({ ...base, expiration: 60 }).success, true);
  });
});

describe('payment view', () => {
  const view = {
    reference: 'r1',
    status: 'pending',
    value: 1,
    brcode: 'x',
    qr_code_url: 'u',
    checkout_url: 'c',
    created_at: '2026-01-01T00:00:00.000Z',
    expires_at: '2026-01-01T01:00:00.000Z',
    server_time: '2026-01-01T00:00:01.000Z',
  };
  test('a view parses', () => assert.equal(PaymentView.safeParse(view).success, true));
  test('an unknown status does not parse (never shown as success)', () => {
    assert.equal(PaymentView.safeParse({ ...view, status: 'approved' }).success, false);
  });
});
