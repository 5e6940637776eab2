/**
 * The money rules both stores call inside their transactions (money/refunds.ts, payout-link.ts,
 * final-state.ts), as pure functions: no database. test/node/store.test.ts proves that each store
 * keeps them under concurrency.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { mayDispute, PAYOUT_STATES_AWAITING_OUTCOME, statusWrite } from '../../../server/money/final-state.ts';
import { transferOutcome } from '../../../server/domain/outcomes.ts';
import { linkTransactionId, payoutLink, settleTransfer } from '../../../server/money/payout-link.ts';
import { decideRefund, REFUND_STATES_WITHOUT_MONEY } from '../../../server/money/refunds.ts';
import { PARTNER_STATUS } from '../../../server/partner/wire.ts';
import type { PayoutRecord, TransferRecord } from '../../../server/store/store.ts';

describe('refunds: what is left', () => {
  test('a value within what is left is taken as asked', () => {
    assert.deepEqual(decideRefund(300, 1000, 0), { valueCents: 300 });
    assert.deepEqual(decideRefund(700, 1000, 300), { valueCents: 700 });
  });
  test('0 means the rest', () => {
    assert.deepEqual(decideRefund(0, 1000, 0), { valueCents: 1000 });
    assert.deepEqual(decideRefund(0, 1000, 250), { valueCents: 750 });
  });
  test('nothing paid: not_paid, nothing refundable, whatever was asked', () => {
    assert.deepEqual(decideRefund(100, 0, 0), { problem: 'not_paid', refundableCents: 0 });
    assert.deepEqual(decideRefund(0, 0, 0), { problem: 'not_paid', refundableCents: 0 });
  });
  test('more than is left: exceeds, with what is left', () => {
    assert.deepEqual(decideRefund(701, 1000, 300), { problem: 'exceeds', refundableCents: 700 });
    assert.deepEqual(decideRefund(1, 1000, 1000), { problem: 'exceeds', refundableCents: 0 });
  });
  test('the rest of nothing left, or a negative value, exceeds (never a refund of 0)', () => {
    assert.deepEqual(decideRefund(0, 1000, 1000), { problem: 'exceeds', refundableCents: 0 });
    assert.deepEqual(decideRefund(-5, 1000, 0), { problem: 'exceeds', refundableCents: 1000 });
  });
  test('refunded beyond what was paid (a payment reversed by a dispute): nothing left, never below 0', () => {
    assert.deepEqual(decideRefund(0, 500, 800), { problem: 'exceeds', refundableCents: 0 });
  });
  test('only refused and canceled refunds took no money', () => {
    assert.deepEqual([...REFUND_STATES_WITHOUT_MONEY].sort(), ['canceled', 'refused']);
  });
});

describe('final states', () => {
  test('a compare-and-set that did not take changes nothing, final or not', () => {
    assert.equal(statusWrite(false, true), 'unchanged');
    assert.equal(statusWrite(false, false), 'unchanged');
  });
  test('only the write that made a record final writes its outcome', () => {
    assert.equal(statusWrite(true, true), 'made_final');
    assert.equal(statusWrite(true, false), 'changed');
  });
  test('a payout takes its transfer outcome while unanswered, accepted or lost; never once final', () => {
    assert.deepEqual([...PAYOUT_STATES_AWAITING_OUTCOME].sort(), ['pending', 'sending', 'unknown']);
    for (const final of ['approved', 'canceled', 'refused']) assert.ok(!(PAYOUT_STATES_AWAITING_OUTCOME as readonly string[]).includes(final));
  });
  test('only a final payment can be disputed', () => {
    assert.equal(mayDispute({ final: true }), true);
    assert.equal(mayDispute({ final: false }), false);
    assert.equal(mayDispute(null), false);
    assert.equal(mayDispute(undefined), false);
  });
});

const transfer = (over: Partial<TransferRecord> = {}): TransferRecord => ({
  reference: 'ext-transfer-1',
  partnerStatus: PARTNER_STATUS.approved,
  final: true,
  valueCents: 1250,
  createdAt: 1_700_000_000_000,
  updatedAt: 1_700_000_060_000,
  transactionId: 'tx-ours-1',
  ...over,
});
const payout = { id: 'tr_payout1', merchantReference: 'refund-7', checkoutId: 'co_1' } satisfies Pick<PayoutRecord, 'id' | 'merchantReference' | 'checkoutId'>;

describe('the payout-transfer link', () => {
  test("a transfer is tracked with the payout's own transaction_id first, else the one it carried, else none", () => {
    assert.equal(linkTransactionId({ transactionId: 'ours' }, { transactionId: 'read' }), 'ours');
    assert.equal(linkTransactionId(null, { transactionId: 'read' }), 'read');
    assert.equal(linkTransactionId(undefined, {}), null);
    assert.equal(linkTransactionId(null, { transactionId: null }), null);
  });
  test('the link names the payout, its merchant reference, its checkout and order', () => {
    assert.deepEqual(payoutLink(payout, 'order-9'), { transferId: 'tr_payout1', merchantReference: 'refund-7', checkoutId: 'co_1', orderId: 'order-9' });
  });
  test('an approved transfer of a payout: the event names the payout, the payout is approved', () => {
    const settled = settleTransfer(transfer(), { record: payout, orderId: 'order-9' }, transferOutcome);
    assert.equal(settled.payoutState, 'approved');
    assert.equal(settled.outcome?.type, 'transfer.approved');
    assert.equal(settled.outcome?.data.transfer_id, 'tr_payout1');
    assert.equal(settled.outcome?.data.transfer_reference, 'refund-7');
    assert.equal(settled.outcome?.data.order_id, 'order-9');
    assert.equal(settled.outcome?.data.value, 12.5);
  });
  test('a canceled transfer cancels its payout', () => {
    const settled = settleTransfer(transfer({ partnerStatus: PARTNER_STATUS.canceled }), { record: payout, orderId: null }, transferOutcome);
    assert.equal(settled.payoutState, 'canceled');
    assert.equal(settled.outcome?.type, 'transfer.canceled');
  });
  test('a transfer the proxy did not start: its event, no payout state', () => {
    const settled = settleTransfer(transfer(), null, transferOutcome);
    assert.equal(settled.payoutState, null);
    assert.equal(settled.outcome?.data.transfer_id, undefined);
  });
  test('no outcome (not final yet): nothing written, the payout keeps its state', () => {
    const settled = settleTransfer(transfer({ partnerStatus: PARTNER_STATUS.pending, final: false }), { record: payout, orderId: null }, transferOutcome);
    assert.deepEqual([settled.outcome, settled.payoutState, settled.relinked()], [null, null, null]);
  });
  test('the event told with the payout keeps the id of the one told without it (restated, not a second event)', () => {
    const without = settleTransfer(transfer(), null, transferOutcome).outcome;
    const withPayout = settleTransfer(transfer(), { record: payout, orderId: null }, transferOutcome).outcome;
    assert.equal(without?.id, withPayout?.id);
    assert.notDeepEqual(without, withPayout);
  });
  test('told again linked, after the one without its payout was delivered: the same outcome naming the payout, under an id of its own', () => {
    const settled = settleTransfer(transfer(), { record: payout, orderId: 'order-9' }, transferOutcome);
    const relinked = settled.relinked();
    assert.notEqual(relinked?.id, settled.outcome?.id);
    assert.deepEqual(relinked?.data, settled.outcome?.data);
    assert.equal(relinked?.id, settleTransfer(transfer(), { record: payout, orderId: 'order-9' }, transferOutcome).relinked()?.id, 'the same id every time');
    assert.equal(settleTransfer(transfer(), null, transferOutcome).relinked(), null, 'nothing to link without a payout');
  });
});
