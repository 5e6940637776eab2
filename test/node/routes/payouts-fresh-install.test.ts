/**
 * A fresh install's first payout settles. Transfers have their own numbering
 * (PIX_TRANSFER_STATUS_CODES), verified apart from the payments' (which never settle a transfer):
 * against the project's own sandbox, with the secret path and the new notification format, and no
 * payment ever paid or canceled, a payout the bank approves is approved within seconds, and one it
 * cancels is canceled. Real HTTPS to the sandbox, a real SQLite file.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { IDEMPOTENCY_HEADER, TransferView } from '../../../src/shared/payouts.ts';
import { startDevStack, type DevStack } from '../../../server/dev-stack.ts';
import { createLogger } from '../../../server/log.ts';
import { stackControl, waitFor } from '../../support/checks.ts';

const ANA = 'ana@cliente.example';
const ELISA = { document: '567.891.234-82', email: 'elisa@cliente.example' }; // her bank cancels

let stack: DevStack;
before(async () => {
  stack = await startDevStack({
    logger: createLogger({ level: 'silent' }),
    webhooks: { secretPath: 'fresh-install-intake-0123456789', sourceIps: [] },
    registerWebhook: { notifyType: 2 },
  });
});
after(() => stack.close());

async function payout(body: unknown): Promise<TransferView> {
  const res = await fetch(`${stack.apiUrl}/transfers`, {
    method: 'POST',
    headers: { authorization: `Bearer ${stack.apiKey}`, 'content-type': 'application/json', [IDEMPOTENCY_HEADER]: randomUUID() },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  assert.equal(res.status, 201, text);
  return TransferView.parse(JSON.parse(text));
}

async function statusOf(id: string): Promise<string> {
  const res = await fetch(`${stack.apiUrl}/transfers/${id}`, { headers: { authorization: `Bearer ${stack.apiKey}` } });
  return TransferView.parse(await res.json()).status;
}

describe('a fresh install settles its first payouts', () => {
  test("no payment code verified, the payments' codes never used: the first payout approved, another canceled, each told by the partner", async () => {
    assert.equal(stack.pix.numbering.report().codes.approved, 'unverified', 'no payment was ever paid');
    const approved = await payout({ value: 12.5, pix_key: ANA });
    assert.equal(approved.status, 'pending');
    await stackControl(stack, 'POST', `/transfers/${encodeURIComponent(approved.partner_reference!)}/approve`);
    await waitFor('the first payout approved', async () => (await statusOf(approved.transfer_id)) === 'approved');

    const canceled = await payout({ value: 3, pix_key: ELISA.email, customer_document: ELISA.document });
    await stackControl(stack, 'POST', '/clock/advance', { seconds: 10 });
    await waitFor('the payout the bank canceled, canceled', async () => (await statusOf(canceled.transfer_id)) === 'canceled');

    const report = stack.pix.numbering.report();
    assert.equal(report.codes.approved, 'unverified', "the payments' codes are still unproved: they settled nothing");
    assert.equal(report.transfers.codes.approved, 'verified');
    assert.equal(report.transfers.codes.canceled, 'verified');
  });
});
