/**
 * The browser's view of a payment and its JSON (server/domain/payments/view.ts) come from one field
 * list: the fast read path's bytes are exactly `JSON.stringify(view())`, for every kind of record and
 * across the reads that share one cached serialization.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { PaymentView } from '../../../src/shared/contract.ts';
import { PaymentViews } from '../../../server/domain/payments/view.ts';
import { PARTNER_STATUS } from '../../../server/partner/wire.ts';
import { paymentRecord } from '../../support/records.ts';

const at = Date.UTC(2026, 0, 2, 3, 4, 5);

const records = {
  pending: paymentRecord('pending', at),
  'expired (pending past its expiry)': paymentRecord('expired', at - 7_200_000),
  paid: paymentRecord('paid', at, { partnerStatus: PARTNER_STATUS.approved, final: true, updatedAt: at + 1234 }),
  canceled: paymentRecord('canceled', at, { partnerStatus: PARTNER_STATUS.canceled, final: true }),
  'favoured, and text that JSON escapes': paymentRecord('quoted', at, { favoured: 'Loja "Ação" \\ \n', brcode: '0002\u2028' }),
  'an unreadable created_at': paymentRecord('bad-time', at, { createdAt: Number.NaN }),
  'an odd value': paymentRecord('cents', at, { valueCents: 1 }),
};

describe('the payment view and its JSON', () => {
  for (const [name, record] of Object.entries(records)) {
    it(`${name}: json() is JSON.stringify(view()), byte for byte`, () => {
      let now = at;
      const views = new PaymentViews(() => now);
      const view = views.view(record);
      assert.equal(views.json(record), JSON.stringify(view));
      assert.ok(PaymentView.safeParse(view).success, 'the view satisfies the shared contract');
      // The cached serialization, read again a moment later: only status and server_time change.
      now += 5000;
      assert.equal(views.json(record), JSON.stringify(views.view(record)));
    });
  }

  it('keeps the keys in the contract order, paid_at only for a paid record', () => {
    const views = new PaymentViews(() => at);
    const view = views.view(records.paid);
    assert.deepEqual(Object.keys(view), [
      'reference',
      'status',
      'value',
      'brcode',
      'qr_code_url',
      'checkout_url',
      'created_at',
      'expires_at',
      'favoured',
      'paid_at',
      'server_time',
    ]);
    assert.equal(view.paid_at, new Date(at + 1234).toISOString());
    assert.equal(views.view(records.pending).paid_at, null);
    assert.equal(views.view(records['expired (pending past its expiry)']).status, 'expired');
    assert.equal(views.view(records['an unreadable created_at']).created_at, new Date(0).toISOString());
  });

  it('refuses a status the proxy does not know, in both forms', () => {
    const views = new PaymentViews(() => at);
    const odd = paymentRecord('odd', at, { partnerStatus: 99 });
    assert.throws(() => views.view(odd), { name: 'DomainError', kind: 'unknown_status' });
    assert.throws(() => views.json(odd), { name: 'DomainError', kind: 'unknown_status' });
  });
});
