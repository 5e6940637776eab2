/** The in-memory partner of domain unit tests (test/support/memory-partner.ts) answers as the PartnerClient interface says. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { parseBrCode } from '../../../src/shared/brcode.ts';
import { PartnerError } from '../../../server/partner/errors.ts';
import { PARTNER_STATUS } from '../../../server/partner/wire.ts';
import { memoryPartner } from '../../support/memory-partner.ts';

const T0 = Date.UTC(2030, 0, 1, 12, 0, 0);

describe('the in-memory partner', () => {
  test('a created payment is pending, with a dynamic BR Code of its value whose CRC checks, and reads back the same', async () => {
    const partner = memoryPartner({ now: () => T0, favoured: 'Loja Teste' });
    const created = await partner.createPayment({ value: 25.9, transaction_id: 'tx-memory-1' });
    assert.deepEqual(created.status, { code: PARTNER_STATUS.pending, word: null });
    assert.equal(created.createdAt, T0);
    assert.equal(created.transactionId, 'tx-memory-1');
    assert.equal(created.favoured, 'Loja Teste');
    const code = parseBrCode(created.pixKey);
    assert.ok(code.ok, 'the code parses and its CRC checks');
    assert.equal(code.ok && code.code.dynamic, true);
    assert.equal(code.ok && code.code.amount, '25.90');

    const details = await partner.getPayment(created.externalReference);
    assert.deepEqual(details, {
      externalReference: created.externalReference,
      pixKey: created.pixKey,
      qrCodeUrl: created.qrCodeUrl,
      checkoutUrl: created.checkoutUrl,
      createdAt: T0,
      status: { code: PARTNER_STATUS.pending, word: null },
      value: 25.9,
      favoured: 'Loja Teste',
    });
    const other = await partner.createPayment({ value: 1 });
    assert.notEqual(other.externalReference, created.externalReference, 'each payment its own reference');
    assert.deepEqual(partner.calls, ['createPayment', 'getPayment', 'createPayment']);
  });

  test('setStatus moves a payment; the check hints follow; null leaves no status to read', async () => {
    const partner = memoryPartner();
    const { externalReference } = await partner.createPayment({ value: 3 });
    assert.deepEqual(await partner.checkPayment(externalReference), { httpStatus: 202, hint: 'pending' });
    partner.setStatus(externalReference, PARTNER_STATUS.approved);
    assert.deepEqual((await partner.getPayment(externalReference)).status, { code: PARTNER_STATUS.approved, word: null });
    assert.deepEqual(await partner.checkPayment(externalReference), { httpStatus: 200, hint: 'paid' });
    partner.setStatus(externalReference, PARTNER_STATUS.canceled, 'canceled');
    assert.deepEqual((await partner.getPayment(externalReference)).status, { code: PARTNER_STATUS.canceled, word: 'canceled' });
    assert.deepEqual(await partner.checkPayment(externalReference), { httpStatus: 410, hint: 'canceled' });
    partner.setStatus(externalReference, null);
    assert.equal((await partner.getPayment(externalReference)).status, null);
  });

  test('an unknown reference: not_found from the reads, an error from setStatus', async () => {
    const partner = memoryPartner();
    assert.deepEqual(await partner.checkPayment('nope'), { httpStatus: 404, hint: 'not_found' });
    for (const read of [partner.getPayment('nope'), partner.checkTransfer('nope')]) {
      await assert.rejects(read, (error) => error instanceof PartnerError && error.kind === 'not_found');
    }
    assert.throws(() => partner.setStatus('nope', PARTNER_STATUS.approved), /no payment or transfer nope/);
  });

  test('answers are copies: changing one changes nothing the partner holds', async () => {
    const partner = memoryPartner();
    const { externalReference } = await partner.createPayment({ value: 3 });
    const read = await partner.getPayment(externalReference);
    read.status!.code = PARTNER_STATUS.approved;
    assert.deepEqual((await partner.getPayment(externalReference)).status, { code: PARTNER_STATUS.pending, word: null });
  });

  test('transfers: to a key (its type read from its form) or for a customer, pending until setStatus, updated on the clock', async () => {
    let clock = T0;
    const partner = memoryPartner({ now: () => clock });
    const toKey = await partner.transferToKey({ value: 7.5, pix_key: 'ana@cliente.example', transaction_id: 'tx-key' });
    assert.equal(toKey.pixKeyType, 'EMAIL');
    assert.deepEqual(toKey.status, { code: PARTNER_STATUS.pending, word: null });
    assert.equal(toKey.transactionId, 'tx-key');
    assert.equal(toKey.isPayment, false);
    const forCustomer = await partner.solicitTransferForCustomer({ customer_document: '12345678909', value: 2, pix_key: '12345678909', pix_key_type: 'CPF' });
    assert.equal(forCustomer.pixKeyType, 'CPF');
    assert.notEqual(forCustomer.externalReference, toKey.externalReference);

    clock += 60_000;
    partner.setStatus(toKey.externalReference, PARTNER_STATUS.approved);
    const checked = await partner.checkTransfer(toKey.externalReference);
    assert.deepEqual(checked.status, { code: PARTNER_STATUS.approved, word: null });
    assert.equal(checked.createdAt, T0);
    assert.equal(checked.updatedAt, T0 + 60_000);
  });

  test('the tenant and the notification URL answer without a network', async () => {
    const partner = memoryPartner({ favoured: 'Loja Teste' });
    await partner.login();
    assert.deepEqual(await partner.getTenant(), { id: 'memory-tenant', name: 'Loja Teste' });
    assert.deepEqual(await partner.setNotificationUrl({ notification_url: 'https://shop.example/hook', notify_type: 2 }), {
      notificationUrl: 'https://shop.example/hook',
      notifyType: 2,
      confirmed: true,
    });
  });
});
