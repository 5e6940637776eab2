/**
 * The widget parses the proxy's answers with zod-free guards (isPaymentView, isErrorBody) to keep
 * zod out of its bundle; the proxy keeps the zod schemas. These samples prove the two agree.
 */
import { expect } from '@open-wc/testing';
import { PaymentView } from '../../src/shared/contract.ts';
import { ErrorBody } from '../../src/shared/errors.ts';
import { isErrorBody, isPaymentView } from '../../src/shared/wire.ts';

const view = {
  reference: 'abc-123',
  status: 'pending',
  value: 10.5,
  brcode: '000201...',
  qr_code_url: 'https://x/qr.svg',
  checkout_url: 'https://x/checkout',
  created_at: '2025-01-01T00:00:00.000Z',
  expires_at: '2025-01-01T01:00:00.000Z',
  server_time: '2025-01-01T00:00:01.000Z',
};

const viewSamples: unknown[] = [
  view,
  { ...view, status: 'paid' },
  { ...view, status: 'expired' },
  { ...view, status: 'canceled' },
  { ...view, extra: 'ignored' },
  { ...view, value: 0 },
  { ...view, value: -1 },
  { ...view, status: 'refunded' },
  { ...view, status: 'PAID' },
  { ...view, status: undefined },
  { ...view, value: '10.5' },
  { ...view, value: NaN },
  { ...view, value: Infinity },
  { ...view, value: null },
  { ...view, brcode: 12 },
  { ...view, reference: null },
  null,
  undefined,
  'paid',
  42,
  [],
  [view],
  {},
  // The optional fields: absent, null where allowed, their type, or anything else.
  { ...view, favoured: 'LOJA X', paid_at: '2025-01-01T00:10:00.000Z', renewable: true },
  { ...view, favoured: null, paid_at: null, renewable: false },
  { ...view, favoured: 12 },
  { ...view, favoured: {} },
  { ...view, paid_at: 0 },
  { ...view, paid_at: true },
  { ...view, renewable: null },
  { ...view, renewable: 'yes' },
];
for (const key of Object.keys(view)) {
  const { [key]: _, ...without } = view as Record<string, unknown>;
  viewSamples.push(without, { ...view, [key]: {} }, { ...view, [key]: [] }, { ...view, [key]: true });
}

const errorSamples: unknown[] = [
  { error: { code: 'not_found', message: 'x' } },
  { error: { code: 'invalid_request', message: 'x', fields: { value: 'bad' } } },
  { error: { code: 'invalid_request', message: 'x', fields: {} } },
  { error: { code: 'x', message: 'y', fields: undefined } },
  { error: { code: 'x', message: 'y', extra: 1 } },
  { error: { code: 'x', message: 'y', fields: { a: 1 } } },
  { error: { code: 'x', message: 'y', fields: ['a'] } },
  { error: { code: 'x', message: 'y', fields: null } },
  { error: { code: 1, message: 'y' } },
  { error: { message: 'y' } },
  { error: { code: 'x' } },
  { error: 'x' },
  { error: null },
  { error: [] },
  null,
  [],
  'error',
  {},
];

describe('contract guards agree with the zod schemas', () => {
  it(`PaymentView on ${viewSamples.length} samples`, () => {
    const disagreements = viewSamples.filter((sample) => PaymentView.safeParse(sample).success !== isPaymentView(sample));
    expect(disagreements).to.deep.equal([]);
    expect(viewSamples.filter(isPaymentView).length, 'valid samples exist').to.equal(9);
  });

  it(`ErrorBody on ${errorSamples.length} samples`, () => {
    const disagreements = errorSamples.filter((sample) => ErrorBody.safeParse(sample).success !== isErrorBody(sample));
    expect(disagreements).to.deep.equal([]);
    expect(errorSamples.filter(isErrorBody).length).to.equal(5);
  });
});
