/**
 * Unauthenticated floods of the notification intake: with the intake open (no secret path,
 * no source addresses) a notification about a reference the store does not know never makes the
 * proxy call the partner and takes no place in the queue real notifications need; one naming two
 * references is kept for the operator. Through an authenticated intake a transfer the proxy does not
 * know is still confirmed with the partner, as before. Real sandbox over HTTPS, real SQLite; the
 * partner's slowness is a fault added around the client's calls.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { createLogger } from '../../../server/log.ts';
import { startDevStack, type DevStack } from '../../../server/dev-stack.ts';
import { createClock } from '../../../server/sandbox/clock.ts';
import { startSandbox, type RunningSandbox } from '../../../server/sandbox/server.ts';
import { DEFAULTS } from '../../../server/config/index.ts';
import { stackControl, waitFor } from '../../support/checks.ts';

const T0 = Date.UTC(2030, 0, 1);
const sandboxOptions = {
  clock: createClock(() => T0),
  settleIntervalMs: 0,
  webhooks: { timeoutMs: 5000, retryDelayMs: 5 },
  bank: { answerAfterSeconds: 5, lateAnswerAfterSeconds: 600 },
};

/** The old format's body about `reference`. */
const notification = (reference: string, type: 'payment' | 'transfer' | null = null) =>
  JSON.stringify({ ...(type ? { type } : {}), external_reference: reference, status: 2, value: 1, transaction_id: null, end2end: null, user_id: null });

/** Counts the partner reads of each reference, each one made slow (a partner under load). */
function slowPartner(stack: DevStack, delayMs: number) {
  const asked: string[] = [];
  const getPayment = stack.partner.getPayment.bind(stack.partner);
  const checkTransfer = stack.partner.checkTransfer.bind(stack.partner);
  stack.partner.getPayment = async (reference) => {
    asked.push(reference);
    await sleep(delayMs);
    return getPayment(reference);
  };
  stack.partner.checkTransfer = async (reference) => {
    asked.push(reference);
    await sleep(delayMs);
    return checkTransfer(reference);
  };
  return {
    asked,
    restore() {
      stack.partner.getPayment = getPayment;
      stack.partner.checkTransfer = checkTransfer;
    },
  };
}

describe('an open intake under a flood of made-up references', () => {
  let sandbox: RunningSandbox;
  let stack: DevStack;
  const post = (body: string) =>
    fetch(`${stack.apiUrl}/webhooks/partner`, { method: 'POST', headers: { 'content-type': 'application/json' }, body }).then((r) => r.status);

  before(async () => {
    sandbox = await startSandbox(sandboxOptions);
    // The sandbox sends nothing: every notification here is posted by the test.
    stack = await startDevStack({ sandbox, background: false, registerWebhook: false, logger: createLogger({ level: 'silent' }) });
  });
  after(async () => {
    await stack.close();
    await sandbox.close();
  });

  test('no partner call for a reference the store does not know; a real notification in the middle is applied at once', async () => {
    const reference = (await stack.pix.payments.create({ value: 9 })).reference;
    await stackControl(stack, 'POST', `/payments/${reference}/pay`);
    const partner = slowPartner(stack, 500);
    const flood = Array.from({ length: 240 }, (_, i) => notification(`made-up-${i}`, i % 3 === 0 ? 'transfer' : i % 3 === 1 ? null : 'payment'));
    let appliedAfterMs = Infinity;
    let sent = 0;
    try {
      const real = (async () => {
        // Posted once a third of the flood is in: the slots would be full of made-up references by then.
        await waitFor('a third of the flood', () => sent >= flood.length / 3);
        assert.equal(await post(notification(reference, 'payment')), 202);
        const posted = performance.now();
        await waitFor('the payment final', async () => (await stack.store.payments.get(reference))?.final === true);
        appliedAfterMs = performance.now() - posted;
      })();
      // Twenty at a time, as a client with a pool of connections would.
      for (let i = 0; i < flood.length; i += 20) {
        const statuses = await Promise.all(flood.slice(i, i + 20).map(post));
        assert.deepEqual(new Set(statuses), new Set([202]));
        sent += statuses.length;
      }
      await real;
      await stack.pix.processor.idle();
    } finally {
      partner.restore();
    }
    assert.deepEqual(
      partner.asked.filter((r) => r.startsWith('made-up-')),
      [],
      'the partner was asked about references this proxy does not know',
    );
    assert.ok(partner.asked.includes(reference), 'the real one was confirmed with the partner');
    // Without the gate the made-up references hold the 8 slots for 500 ms each: seconds of delay.
    assert.ok(appliedAfterMs < 2000, `the real notification waited ${Math.round(appliedAfterMs)} ms`);
    const unknown = await stack.store.webhookEvents.listByResult(['unknown_reference'], 10_000);
    assert.equal(unknown.filter((e) => e.rawBody.includes('made-up-')).length, flood.length);
    assert.equal(await stack.store.webhookEvents.countUnprocessed(DEFAULTS.webhookIntake.pendingCap), 0);
  });

  test('a notification naming two different references is kept for the operator, processed as neither', async () => {
    const one = (await stack.pix.payments.create({ value: 3 })).reference;
    const two = (await stack.pix.payments.create({ value: 4 })).reference;
    await stackControl(stack, 'POST', `/payments/${one}/pay`);
    const partner = slowPartner(stack, 0);
    // Not a list of payments (that is split): two references in one record's place.
    const body = JSON.stringify({ event: 'payment.approved', payload: { external_reference: one }, previous: { external_reference: two } });
    try {
      assert.equal(await post(body), 202);
      await stack.pix.processor.idle();
    } finally {
      partner.restore();
    }
    const listed = await stack.store.webhookEvents.listByResult(['ambiguous'], 10);
    assert.ok(listed.some((e) => e.rawBody === body));
    assert.deepEqual(partner.asked, []);
    assert.equal((await stack.store.payments.get(one))!.final, false, 'not applied to either');
  });
});

describe('an authenticated intake (secret path)', () => {
  let sandbox: RunningSandbox;
  let stack: DevStack;
  before(async () => {
    sandbox = await startSandbox(sandboxOptions);
    stack = await startDevStack({ sandbox, background: false, webhooks: { secretPath: 'f00dfeedf00dfeedf00d' }, logger: createLogger({ level: 'silent' }) });
  });
  after(async () => {
    await stack.close();
    await sandbox.close();
  });

  test('a transfer the proxy learns of by webhook is still confirmed with the partner and tracked', async () => {
    const transfer = await stack.partner.transferToKey({ value: 7.5, pix_key: 'ana@cliente.example' });
    assert.equal(await stack.store.transfers.get(transfer.externalReference), null);
    const partner = slowPartner(stack, 0);
    try {
      await stackControl(stack, 'POST', '/clock/advance', { seconds: 10 });
      // Tracked once the partner answered (final too once the numbering is verified: status-numbering.ts).
      await waitFor('the transfer tracked', async () => (await stack.store.transfers.get(transfer.externalReference)) !== null);
    } finally {
      partner.restore();
    }
    assert.ok(partner.asked.includes(transfer.externalReference), 'confirmed with the partner');
  });
});
