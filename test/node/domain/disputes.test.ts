/**
 * Disputes, and explicit outcomes never consumed and lost. Against the real
 * sandbox over HTTPS, a real SQLite file, a real merchant receiver; the intake is authenticated by a
 * secret path, so a notification's words count there (and only there).
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { CheckoutView, OutcomeEvent } from '../../../src/shared/contract.ts';
import { ErrorBody } from '../../../src/shared/errors.ts';
import { IDEMPOTENCY_HEADER } from '../../../src/shared/payouts.ts';
import { startDevStack, startSandbox, type DevStack, type RunningSandbox } from '../../../server/dev-stack.ts';
import { createLogger } from '../../../server/log.ts';
import { notificationBody, readNotification } from '../../../server/partner/notification.ts';
import { PARTNER_STATUS } from '../../../server/partner/wire.ts';
import { stackControl, verifyStatusCodes, waitFor } from '../../support/checks.ts';
import { startReceiver, type Receiver } from '../../support/sandbox-harness.ts';

const SECRET_PATH = 'disputes0123456789abcdef';
const ANA = 'ana@cliente.example';

let sandbox: RunningSandbox;
let stack: DevStack;
let receiver: Receiver;
const logLines: { level: number; msg: string; reference?: string }[] = [];
const dataDir = mkdtempSync(join(tmpdir(), 'pix-disputes-'));
let orders = 0;

const logger = () =>
  createLogger({ level: 'info', destination: { write: (line: string) => void logLines.push(JSON.parse(line) as (typeof logLines)[number]) } });
const startStack = () =>
  startDevStack({
    sandbox,
    dataDir,
    background: false,
    webhooks: { secretPath: SECRET_PATH },
    logger: logger(),
    merchantWebhook: { url: receiver.url, secret: 'whsec-test-disputes', retryScheduleMs: [20, 100] },
  });

before(async () => {
  receiver = await startReceiver();
  sandbox = await startSandbox();
  stack = await startStack();
  // Every code proven first (a canceled payment is read as canceled only once its code is).
  await verifyStatusCodes(stack);
});
after(async () => {
  await stack.close();
  await sandbox.close();
  await receiver.close();
  rmSync(dataDir, { recursive: true, force: true });
});

async function api(method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(`${stack.apiUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${stack.apiKey}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, json: text ? (JSON.parse(text) as unknown) : undefined };
}
const refund = (id: string) => api('POST', `/checkouts/${id}/refunds`, { value: 1, pix_key: ANA }, { [IDEMPOTENCY_HEADER]: randomUUID() });
/** A notification through the authenticated (secret path) intake. */
const notify = (reference: string, event: string) =>
  fetch(stack.webhookUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ event, external_reference: reference }) });
const results = async (reference: string) =>
  (await stack.store.webhookEvents.listByResult(['applied', 'already_final', 'disputed', 'waiting', 'not_confirmed', 'contradicted'], 1000))
    .filter((e) => e.rawBody.includes(reference))
    .map((e) => e.result);
const disputedEvents = (reference: string) =>
  receiver.received.map((r) => r.body as OutcomeEvent).filter((e) => e?.type === 'payment.disputed' && e.data.reference === reference);

/** A checkout whose payment is issued; `then` pays or cancels it in the sandbox, and the proxy learns it. */
async function checkoutWith(then: 'pay' | 'cancel' | null): Promise<{ id: string; reference: string }> {
  const created = await api('POST', '/checkouts', { value: 20, order_id: `dispute-${process.pid}-${++orders}` });
  assert.equal(created.status, 201, JSON.stringify(created.json));
  const id = CheckoutView.parse(created.json).checkout_id;
  const { reference } = (await (await fetch(`${stack.apiUrl}/checkouts/${id}/payment`, { method: 'POST' })).json()) as { reference: string };
  if (then) {
    if (then === 'pay') await stackControl(stack, 'POST', `/payments/${encodeURIComponent(reference)}/pay`);
    // The partner cancels a payment only an hour past its expiry (spec 3): its clock is moved there.
    else await stackControl(stack, 'POST', '/clock/advance', { seconds: 2 * 3600 + 60 });
    await stack.pix.payments.reads.confirm(reference);
    await waitFor('the payment final here', async () => (await stack.store.payments.get(reference))?.final);
  }
  return { id, reference };
}

describe('disputes: a final payment an authenticated notification contradicts', () => {
  test('paid, then "canceled": an error, /ready lists it (still 200), payment.disputed once, refunds 409 until resolved; the status stands', async () => {
    const { id, reference } = await checkoutWith('pay');
    assert.equal((await notify(reference, 'payment.canceled')).status, 202);
    await waitFor('the dispute', async () => (await results(reference)).includes('disputed'));
    // The partner sends it again: the same dispute, no second event.
    assert.equal((await notify(reference, 'payment.canceled')).status, 202);
    await waitFor('the copy processed', async () => (await results(reference)).filter((r) => r === 'disputed').length === 2);

    const stored = await stack.store.payments.get(reference);
    assert.deepEqual([stored?.partnerStatus, stored?.final], [PARTNER_STATUS.approved, true], 'a final status never changes');
    assert.ok(
      logLines.some((l) => l.level >= 50 && l.reference === reference && /payment disputed/.test(l.msg)),
      'an error line names it',
    );
    const ready = await fetch(`${stack.url}/ready`);
    assert.equal(ready.status, 200);
    const warnings = ((await ready.json()) as { warnings?: string[] }).warnings ?? [];
    assert.ok(
      warnings.some((w) => w.includes(reference) && /disputed/.test(w)),
      JSON.stringify(warnings),
    );
    const view = CheckoutView.parse((await api('GET', `/checkouts/${id}`)).json);
    assert.deepEqual([view.status, view.disputed], ['paid', true]);

    const refused = await refund(id);
    assert.equal(refused.status, 409, JSON.stringify(refused.json));
    assert.equal(ErrorBody.parse(refused.json).error.code, 'disputed');

    await stack.pix.notifier!.runOnce();
    const told = await waitFor('the merchant told', () => disputedEvents(reference).length > 0 && disputedEvents(reference));
    assert.equal(new Set(told.map((e) => e.id)).size, 1, 'one event for the dispute');
    assert.deepEqual([told[0]!.data.status, told[0]!.data.recorded_status, told[0]!.data.notified_status], ['disputed', 'paid', 'canceled']);
    assert.equal(told[0]!.data.checkout_id, id);
    assert.equal((await stack.store.outbox.list()).filter((e) => e.type === 'payment.disputed' && e.reference === reference).length, 1);

    // An operator checked with the partner and resolves it: refunds are accepted again, the view says nothing.
    assert.ok(await stack.pix.disputes.resolve(reference, 'checked: paid, a partner glitch'));
    assert.equal(CheckoutView.parse((await api('GET', `/checkouts/${id}`)).json).disputed, undefined);
    assert.equal((await refund(id)).status, 201);
  });

  test('canceled, then "approved": disputed the other way round', async () => {
    const { id, reference } = await checkoutWith('cancel');
    assert.equal((await notify(reference, 'payment.approved')).status, 202);
    await waitFor('the dispute', async () => (await results(reference)).includes('disputed'));
    assert.equal((await stack.store.payments.get(reference))?.partnerStatus, PARTNER_STATUS.canceled);
    const [open] = (await stack.pix.disputes.open()).filter((d) => d.reference === reference);
    assert.deepEqual([open?.recordedStatus, open?.notified, open?.checkoutId], [PARTNER_STATUS.canceled, 'approved', id]);
  });

  test('words that agree with the final status, or from an unauthenticated intake, raise nothing', async () => {
    const { id, reference } = await checkoutWith('pay');
    assert.equal((await notify(reference, 'payment.approved')).status, 202);
    await waitFor('processed', async () => (await results(reference)).includes('already_final'));
    // Stored, not believed: an open intake's "canceled" (the processor is told it is unauthenticated).
    const raw = JSON.stringify({ event: 'payment.canceled', external_reference: reference });
    const eventId = await stack.store.webhookEvents.add(raw, Date.now());
    const event = readNotification(notificationBody(raw, 'application/json'));
    assert.equal(event?.outcome, 'canceled', 'words the processor would believe from an authenticated intake');
    await stack.pix.processor.process(eventId, raw, { event, authenticated: false });
    await waitFor('processed', async () => (await results(reference)).filter((r) => r === 'already_final').length === 2);
    assert.deepEqual(
      (await stack.pix.disputes.open()).filter((d) => d.reference === reference),
      [],
    );
    assert.equal(CheckoutView.parse((await api('GET', `/checkouts/${id}`)).json).disputed, undefined);
  });
});

describe('explicit outcomes are never consumed and lost', () => {
  test('"approved" while the partner still says pending is kept, confirmed again soon, and applied once the partner agrees', async () => {
    const { reference } = await checkoutWith(null);
    // The partner's own notification of the payment is lost: only the kept one can bring it.
    const fault = await stackControl(stack, 'POST', '/faults', { kind: 'drop_webhook', rate: 1 });
    try {
      assert.equal((await notify(reference, 'payment.approved')).status, 202);
      await waitFor('kept', async () => (await results(reference)).includes('waiting'));
      assert.equal((await stack.store.payments.get(reference))?.final, false);
      assert.ok(
        (await stack.store.webhookEvents.unprocessed(1000)).some((e) => e.rawBody.includes(reference)),
        'unprocessed',
      );
      await stackControl(stack, 'POST', `/payments/${encodeURIComponent(reference)}/pay`);
      // Not the reconciler (not running here): the kept notification's next try.
      await waitFor('applied', async () => (await results(reference)).includes('applied'), 15_000);
      assert.equal((await stack.store.payments.get(reference))?.partnerStatus, PARTNER_STATUS.approved);
    } finally {
      await stackControl(stack, 'DELETE', `/faults/${fault.fault.id}`);
    }
  });

  test('"approved" while the partner is down is kept and confirmed again once it answers', async () => {
    const { reference } = await checkoutWith(null);
    // Its own notification is lost; the partner has it paid, then stops answering reads.
    await stackControl(stack, 'POST', '/faults', { kind: 'drop_webhook', rate: 1 });
    await stackControl(stack, 'POST', `/payments/${encodeURIComponent(reference)}/pay`);
    const down = await stackControl(stack, 'POST', '/faults', {
      kind: 'server_error',
      rate: 1,
      path_prefix: '/api/v2/wallet/partner/transactions/',
      status: 503,
    });
    try {
      assert.equal((await notify(reference, 'payment.approved')).status, 202);
      await waitFor('kept', async () => (await results(reference)).includes('waiting'));
      assert.equal((await stack.store.payments.get(reference))?.final, false);
      await stackControl(stack, 'DELETE', `/faults/${down.fault.id}`);
      await waitFor('applied', async () => (await results(reference)).includes('applied'), 15_000);
      assert.equal((await stack.store.payments.get(reference))?.partnerStatus, PARTNER_STATUS.approved);
    } finally {
      await stackControl(stack, 'DELETE', '/faults');
    }
  });

  test('a kept one survives a restart: the next start takes it up, as authenticated, and applies it', async () => {
    const { reference } = await checkoutWith(null);
    const fault = await stackControl(stack, 'POST', '/faults', { kind: 'drop_webhook', rate: 1 });
    try {
      assert.equal((await notify(reference, 'payment.approved')).status, 202);
      await waitFor('kept', async () => (await results(reference)).includes('waiting'));
      await stack.close();
      stack = await startStack();
      await stackControl(stack, 'POST', `/payments/${encodeURIComponent(reference)}/pay`);
      const [kept] = (await stack.store.webhookEvents.claimUnprocessed(1000, Date.now())).filter((e) => e.rawBody.includes(reference));
      assert.equal(kept?.authenticated, true, 'its words still count');
      await stack.pix.processor.drain();
      await waitFor('applied', async () => (await results(reference)).includes('applied'), 15_000);
      assert.equal((await stack.store.payments.get(reference))?.partnerStatus, PARTNER_STATUS.approved);
    } finally {
      await stackControl(stack, 'DELETE', `/faults/${fault.fault.id}`);
    }
  });
});

describe('explicit outcomes the partner contradicts', () => {
  let own: DevStack;
  const lines: { level: number; msg: string; reference?: string }[] = [];
  before(async () => {
    // Its own stack: the contradiction makes the numbering a mismatch for the rest of its run.
    own = await startDevStack({
      sandbox,
      background: false,
      registerWebhook: false,
      webhooks: { secretPath: SECRET_PATH },
      logger: createLogger({ level: 'warn', destination: { write: (line: string) => void lines.push(JSON.parse(line) as (typeof lines)[number]) } }),
    });
  });
  after(() => own.close());

  test('"canceled" kept while pending, then the partner\'s verified code says paid: settled `contradicted`, logged at error, nothing applied', async () => {
    const { reference } = (await (
      await fetch(`${own.apiUrl}/payments`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"value":3}' })
    ).json()) as { reference: string };
    assert.equal(own.pix.numbering.report().codes.pending, 'verified', 'its new payment verified the pending code');
    const sent = await fetch(own.webhookUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ event: 'payment.canceled', external_reference: reference }),
    });
    assert.equal(sent.status, 202);
    const rows = async () =>
      (await own.store.webhookEvents.listByResult(['waiting', 'contradicted'], 100)).filter((e) => e.rawBody.includes(reference)).map((e) => e.result);
    await waitFor('kept', async () => (await rows()).includes('waiting'));
    // The partner has it paid (no notification of its own reaches this stack): the next try finds the contradiction.
    assert.equal(sandbox.state.pay(sandbox.state.payments.get(reference)!).ok, true);
    await waitFor('contradicted', async () => (await rows()).includes('contradicted'), 15_000);
    assert.equal((await own.store.payments.get(reference))?.final, false, 'neither the words nor the code decided');
    assert.ok(
      lines.some((l) => l.level >= 50 && l.reference === reference && /contradicted/.test(l.msg)),
      'an error line names it',
    );
  });
});
