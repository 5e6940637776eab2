/**
 * Returns are first-class: an authenticated notification that states a return of a paid
 * payment records the returned amount beside it (the payment stays paid, the history kept), sends a
 * signed `payment.returned`, shows `returned` in the checkout's view, lowers what may be refunded (a
 * returned amount is never refunded again: the double refund the issue found), warns in /ready and
 * counts in the metrics. Against the real sandbox over HTTPS, a real SQLite file.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { CheckoutView, OutcomeEvent } from '../../../src/shared/contract.ts';
import { startDevStack, type DevStack } from '../../../server/dev-stack.ts';
import { DomainError } from '../../../server/domain/errors.ts';
import { createLogger } from '../../../server/log.ts';
import { parseStatusCodes } from '../../../server/partner/status-codes.ts';
import { createClock } from '../../../server/sandbox/clock.ts';
import { startSandbox, type RunningSandbox } from '../../../server/sandbox/server.ts';
import { stackControl, verifyStatusCodes, waitFor } from '../../support/checks.ts';

const T0 = Date.UTC(2030, 0, 1);
const SECRET_PATH = 'feedc0defeedc0defeedc0de';

describe('a return of a paid payment', () => {
  let sandbox: RunningSandbox;
  let stack: DevStack;
  const events: OutcomeEvent[] = [];
  const post = (body: unknown, path = SECRET_PATH) =>
    fetch(`${stack.apiUrl}/webhooks/partner/${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }).then(
      (r) => r.status,
    );

  before(async () => {
    sandbox = await startSandbox({ clock: createClock(() => T0), settleIntervalMs: 0, webhooks: { timeoutMs: 5000, retryDelayMs: 5 } });
    stack = await startDevStack({
      sandbox,
      background: false,
      registerWebhook: false,
      webhooks: { secretPath: SECRET_PATH },
      onOutcome: (event) => events.push(event),
      logger: createLogger({ level: 'silent' }),
    });
    await verifyStatusCodes(stack);
  });
  after(async () => {
    await stack.close();
    await sandbox.close();
  });

  /** The merchant's API (its key), in process. */
  async function merchant(method: string, path: string, body?: unknown) {
    const res = await stack.app.request(`/api${path}`, {
      method,
      headers: { authorization: `Bearer ${stack.apiKey}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, json: (await res.json()) as Record<string, unknown> & { error?: { code: string } } };
  }
  let orders = 0;
  /** A checkout with its first payment issued, not paid. */
  async function issuedCheckout(value: number) {
    const created = await merchant('POST', '/checkouts', { value, order_id: `order-returns-${++orders}` });
    assert.equal(created.status, 201, JSON.stringify(created.json));
    const checkoutId = String(created.json.checkout_id);
    const issued = await stack.app.request(`/api/checkouts/${checkoutId}/payment`, { method: 'POST' });
    const reference = String(((await issued.json()) as { reference: string }).reference);
    return { checkoutId, reference };
  }
  /** A checkout of `value` reais, paid and recorded paid. */
  async function paidCheckout(value: number) {
    const { checkoutId, reference } = await issuedCheckout(value);
    const payment = { reference };
    await stackControl(stack, 'POST', `/payments/${payment.reference}/pay`);
    await stack.pix.payments.reads.confirm(payment.reference);
    assert.equal((await stack.store.payments.get(payment.reference))?.final, true);
    return { checkoutId, reference };
  }
  const refund = (checkoutId: string, value: number | undefined, key: string) =>
    stack.pix.payouts.refund(checkoutId, { ...(value !== undefined ? { value } : {}), pix_key: 'ana@cliente.example' }, key);

  test('recorded beside the paid payment, told once, shown, and never refunded again', async () => {
    const { checkoutId, reference } = await paidCheckout(10);
    // The central bank's shape: a list of payments, each with its returns; the one in progress does not count.
    const body = {
      pix: [
        {
          external_reference: reference,
          valor: '10.00',
          devolucoes: [
            { valor: '4.00', status: 'DEVOLVIDO' },
            { valor: '3.00', status: 'EM_PROCESSAMENTO' },
          ],
        },
      ],
    };
    assert.equal(await post(body), 202);
    await waitFor('the return recorded', async () => (await stack.store.payments.get(reference))?.returnedCents === 400);
    const payment = (await stack.store.payments.get(reference))!;
    assert.deepEqual([payment.final, payment.partnerStatus], [true, 2], 'still paid: the final state is not rewritten');
    assert.deepEqual(
      (await stack.store.payments.returnsOf(reference)).map((r) => [r.returnedCents, r.source]),
      [[400, 'notification']],
    );
    const told = events.filter((e) => e.type === 'payment.returned');
    assert.equal(told.length, 1);
    assert.deepEqual(OutcomeEvent.parse(told[0]).data, {
      reference,
      status: 'returned',
      value: 10,
      returned_value: 4,
      checkout_id: checkoutId,
      order_id: told[0]!.data.order_id,
    });
    const view = CheckoutView.parse((await merchant('GET', `/checkouts/${checkoutId}`)).json);
    assert.deepEqual([view.status, view.returned], ['paid', { value: 4, references: [reference] }]);

    // The same return again (a copy, the partner's retry) is nothing new; a later, larger total is.
    assert.equal(await post(body), 202);
    await stack.pix.processor.idle();
    assert.equal(events.filter((e) => e.type === 'payment.returned').length, 1);

    // The double refund the issue found: only what was not returned may be refunded.
    await assert.rejects(refund(checkoutId, 10, 'refund-all'), (error: unknown) => error instanceof DomainError && error.kind === 'refund_exceeds');
    const rest = await refund(checkoutId, undefined, 'refund-rest');
    assert.equal(rest.transfer.value, 6);

    // Returned whole later (MED): the rest is returned too, and nothing is left to refund.
    assert.equal(await post({ event: 'payment.returned', data: { external_reference: reference, returned_value: 10 } }), 202);
    await waitFor('the second return recorded', async () => (await stack.store.payments.get(reference))?.returnedCents === 1000);
    assert.deepEqual(
      events.filter((e) => e.type === 'payment.returned').map((e) => e.data.returned_value),
      [4, 10],
    );
  });

  test('/ready names it, and the metrics count it', async () => {
    const ready = (await (await stack.app.request('/ready')).json()) as { warnings?: string[] };
    assert.ok(
      ready.warnings?.some((w) => /returns? of paid payments in the last 24 hours/.test(w)),
      JSON.stringify(ready),
    );
    const { text } = await stack.pix.metrics.scrape();
    assert.match(text, /^pix_checkout_payment_returns_total 2$/m);
    assert.match(text, /^pix_checkout_outcome_events_total\{type="payment.returned"\} 2$/m);
  });

  test('of a payment not paid, nothing is recorded; a wrong secret path never reaches the intake', async () => {
    const { reference } = await paidCheckout(5);
    const unpaid = (await issuedCheckout(5)).reference;
    assert.equal(await post({ event: 'pix.devolvido', data: { external_reference: unpaid } }), 202);
    await stack.pix.processor.idle();
    assert.equal((await stack.store.payments.get(unpaid))?.returnedCents, undefined);
    // A wrong secret path never reaches the intake at all.
    assert.equal(await post({ event: 'pix.devolvido', data: { external_reference: reference } }, 'not-the-secret-path-000'), 404);
    await stack.pix.processor.idle();
    assert.equal((await stack.store.payments.get(reference))?.returnedCents, undefined);
  });
});

describe("the sandbox's own notifications: batched, and a return after payment", () => {
  let stack: DevStack;
  before(async () => {
    // The sandbox notifies the proxy through its secret path: an authenticated intake.
    stack = await startDevStack({ background: false, webhooks: { secretPath: SECRET_PATH }, logger: createLogger({ level: 'silent' }) });
    await verifyStatusCodes(stack);
  });
  after(() => stack.close());

  test('a batch of payments paid is split and applied; a return the sandbox notifies is recorded', async () => {
    await stackControl(stack, 'PUT', '/webhooks/batching', { window_ms: 60_000 });
    const [a, b] = [await stack.pix.payments.create({ value: 3 }), await stack.pix.payments.create({ value: 4 })];
    for (const p of [a, b]) await stackControl(stack, 'POST', `/payments/${p.reference}/pay`);
    await stackControl(stack, 'POST', '/webhooks/batching/flush');
    await waitFor(
      'both paid',
      async () => (await stack.store.payments.get(a.reference))?.final === true && (await stack.store.payments.get(b.reference))?.final === true,
    );
    await stackControl(stack, 'PUT', '/webhooks/batching', { window_ms: 0 });
    await stackControl(stack, 'POST', `/payments/${a.reference}/return`, { value: 1.25 });
    await waitFor('the return recorded', async () => (await stack.store.payments.get(a.reference))?.returnedCents === 125);
  });
});

describe('a return told by a code listed returned (the expiring dialect, PIX_STATUS_CODES naming returned=6)', () => {
  let stack: DevStack;
  before(async () => {
    // An open intake: a notification's words are no evidence; only the partner's code can say returned.
    stack = await startDevStack({
      background: false,
      dialect: 'expiring',
      statusCodes: parseStatusCodes('pending=1,approved=2,expired=3,canceled=4,returned=6')!,
      transferStatusCodes: parseStatusCodes('pending=11,approved=12,canceled=13')!,
      logger: createLogger({ level: 'silent' }),
    });
  });
  after(() => stack.close());

  test('a paid payment notified again reads the returned code: the return is recorded (its amount unstated by a code: the whole payment)', async () => {
    const payment = await stack.pix.payments.create({ value: 8 });
    await stackControl(stack, 'POST', `/payments/${payment.reference}/pay`);
    await waitFor('paid', async () => (await stack.store.payments.get(payment.reference))?.final === true);
    await stackControl(stack, 'POST', `/payments/${payment.reference}/return`, { value: 2 });
    await waitFor('the return recorded', async () => (await stack.store.payments.get(payment.reference))?.returnedCents === 800);
    assert.deepEqual(
      (await stack.store.payments.returnsOf(payment.reference)).map((r) => r.source),
      ['status'],
    );
    assert.equal(stack.pix.numbering.report().codes.returned, 'verified');
  });
});
