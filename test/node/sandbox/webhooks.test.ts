/**
 * Conformance, notifications: spec 4.8 (notification URL and notify_type) and 6 (a webhook on every
 * final outcome of a payment or a transfer, both formats, delivered on any 2xx, retried 2 more times,
 * re-sendable), against the sandbox over real HTTPS, with receivers on real HTTP ports.
 */
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import { LIMITS } from '../../../src/shared/limits.ts';
import {
  NOTIFY_TYPE,
  NewWebhookPayload,
  NotificationUrlResponse,
  OldWebhookPayload,
  PARTNER_PATHS,
  PARTNER_STATUS,
  PartnerErrorResponse,
  type NotifyType,
} from '../../../server/partner/wire.ts';
import { readNotification } from '../../../server/partner/notification.ts';
import { TEST_CUSTOMERS } from '../../../server/sandbox/customers.ts';
import type { WebhookDelivery } from '../../../server/sandbox/webhooks.ts';
import { TIMESTAMP_PATTERN, startHarness, startReceiver, waitFor, type Harness, type Receiver } from '../../support/sandbox-harness.ts';

let h: Harness;
const receivers: Receiver[] = [];
before(async () => {
  h = await startHarness();
});
beforeEach(async () => {
  await h.control('DELETE', '/notification-url');
});
after(async () => {
  await h.close();
  await Promise.all(receivers.map((r) => r.close()));
});

const ATTEMPTS = 1 + LIMITS.webhookRetries;
const ana = TEST_CUSTOMERS.find((c) => c.name.startsWith('Ana'))!;
const elisa = TEST_CUSTOMERS.find((c) => c.name.startsWith('Elisa'))!;

async function receiver(answer?: Receiver['answer']): Promise<Receiver> {
  const r = await startReceiver(answer);
  receivers.push(r);
  return r;
}

async function register(url: string, notifyType?: NotifyType) {
  const res = await h.api('PATCH', PARTNER_PATHS.notificationUrl, {
    body: notifyType === undefined ? { notification_url: url } : { notification_url: url, notify_type: notifyType },
  });
  assert.equal(res.status, 200, res.text);
  return NotificationUrlResponse.parse(res.json).data;
}

/** The deliveries of a reference once none is still sending (every attempt made). */
async function settledDeliveries(reference: string, count = 1): Promise<WebhookDelivery[]> {
  return waitFor(`${count} finished deliveries for ${reference}`, async () => {
    const res = await h.control('GET', `/webhooks/deliveries?external_reference=${reference}`);
    const deliveries = res.json.deliveries as WebhookDelivery[];
    return deliveries.length >= count && deliveries.every((d) => d.state !== 'sending') && deliveries;
  });
}

async function paidPayment() {
  const created = await h.createPayment({ value: 19.9, transaction_id: 'pedido-7' });
  assert.equal((await h.control('POST', `/payments/${created.external_reference}/pay`)).status, 200);
  return created.external_reference;
}

/** A transfer to the customer owning `key` (Ana's bank approves, Elisa's cancels). */
async function transfer(key = ana.keys.EMAIL!) {
  const res = await h.api('POST', PARTNER_PATHS.transferToKey, { body: { value: 7.5, pix_key: key, transaction_id: 'saque-9' } });
  assert.equal(res.status, 201, res.text);
  return res.json.data.external_reference as string;
}

describe('4.8 notification URL', () => {
  test('registers a URL; notify_type defaults to the old format', async () => {
    const data = await register('https://loja.example/webhooks/pix');
    assert.deepEqual(data, { notification_url: 'https://loja.example/webhooks/pix', notify_type: NOTIFY_TYPE.old });
    assert.equal((await register('http://loja.example/hook', NOTIFY_TYPE.new)).notify_type, NOTIFY_TYPE.new);
    assert.equal((await register('http://loja.example/hook', NOTIFY_TYPE.old)).notify_type, NOTIFY_TYPE.old);
  });

  test('refuses a bad URL, an unknown notify_type, missing or unknown fields (422 naming them)', async () => {
    const cases: [unknown, string[]][] = [
      [{}, ['notification_url']],
      [{ notification_url: 'not a url' }, ['notification_url']],
      [{ notification_url: 'ftp://loja.example/' }, ['notification_url']],
      [{ notification_url: 42 }, ['notification_url']],
      [{ notification_url: 'https://loja.example/', notify_type: 3 }, ['notify_type']],
      [{ notification_url: 'https://loja.example/', notify_type: '1' }, ['notify_type']],
      [{ notification_url: 'https://loja.example/', secret: 'x' }, ['secret']],
    ];
    for (const [body, fields] of cases) {
      const res = await h.api('PATCH', PARTNER_PATHS.notificationUrl, { body });
      assert.equal(res.status, 422, res.text);
      assert.deepEqual(Object.keys(PartnerErrorResponse.parse(res.json).errors ?? {}), fields);
    }
  });
});

describe('6 events, old format (notify_type 1)', () => {
  test('a paid payment: one POST, JSON, parsing as the old format', async () => {
    const r = await receiver();
    await register(r.url, NOTIFY_TYPE.old);
    const reference = await paidPayment();
    const [delivery] = await settledDeliveries(reference);
    assert.equal(delivery!.state, 'delivered');
    assert.equal(r.received.length, 1);
    const hook = r.received[0]!;
    assert.match(String(hook.headers['content-type']), /^application\/json/);
    const payload = OldWebhookPayload.parse(hook.body);
    assert.equal(payload.type, 'payment');
    assert.equal(payload.external_reference, reference);
    assert.equal(payload.status, PARTNER_STATUS.approved);
    assert.equal(payload.value, 19.9);
    assert.equal(payload.transaction_id, 'pedido-7');
    assert.equal(payload.end2end, null, 'not used for payments');
    assert.equal(payload.user_id, null, 'only for wallet payments');
    // As the proxy reads it: the old format says its outcome only with a code.
    assert.deepEqual(readNotification(hook.body), {
      reference,
      referenceField: 'external_reference',
      kind: 'payment',
      outcome: null,
      status: { code: PARTNER_STATUS.approved, word: null },
      eventId: null,
      returned: null,
    });
  });

  test('a payment canceled 1 hour after expiration: exactly one event, however often time moves', async () => {
    const r = await receiver();
    await register(r.url);
    const created = await h.createPayment({ expiration: 60 });
    await h.advance(60 + 3600 - 1);
    assert.equal(r.received.length, 0);
    await h.advance(1);
    await h.api('GET', `/api/v2/wallet/partner/transactions/${created.external_reference}`);
    await h.advance(3600);
    h.sandbox.state.settleDue();
    const deliveries = await settledDeliveries(created.external_reference);
    assert.equal(deliveries.length, 1);
    assert.equal(r.received.length, 1);
    assert.deepEqual(readNotification(r.received[0]!.body), {
      reference: created.external_reference,
      referenceField: 'external_reference',
      kind: 'payment',
      outcome: null,
      status: { code: PARTNER_STATUS.canceled, word: null },
      eventId: null,
      returned: null,
    });
    assert.equal(OldWebhookPayload.parse(r.received[0]!.body).status, PARTNER_STATUS.canceled);
  });

  test('transfers: approved (with end2end) and canceled', async () => {
    const r = await receiver();
    await register(r.url, NOTIFY_TYPE.old);
    const approved = await transfer();
    const canceled = await transfer(elisa.keys.EMAIL);
    await h.advance(60);
    await settledDeliveries(approved);
    await settledDeliveries(canceled);
    const byRef = new Map(r.received.map((w) => [w.body.external_reference as string, OldWebhookPayload.parse(w.body)]));
    assert.equal(byRef.get(approved)!.type, 'transfer');
    assert.equal(byRef.get(approved)!.status, PARTNER_STATUS.approved);
    assert.match(byRef.get(approved)!.end2end!, /^E/);
    assert.equal(byRef.get(approved)!.transaction_id, 'saque-9');
    assert.equal(byRef.get(canceled)!.status, PARTNER_STATUS.canceled);
    assert.equal(readNotification(r.received.find((w) => w.body.external_reference === canceled)!.body)?.kind, 'transfer');
  });
});

describe('6 events, new format (notify_type 2)', () => {
  test('payments and transfers, approved and canceled, parse as the new format', async () => {
    const r = await receiver();
    await register(r.url, NOTIFY_TYPE.new);
    const paid = await paidPayment();
    const unpaid = await h.createPayment({});
    assert.equal((await h.control('POST', `/payments/${unpaid.external_reference}/cancel`)).status, 200);
    const approved = await transfer();
    const canceled = await transfer(elisa.keys.EMAIL);
    await h.advance(60);
    for (const reference of [paid, unpaid.external_reference, approved, canceled]) await settledDeliveries(reference);
    const events = r.received.map((w) => NewWebhookPayload.parse(w.body));
    const eventOf = (reference: string) => events.find((e) => e.data.external_reference === reference)!;
    assert.equal(eventOf(paid).event, 'payment.approved');
    assert.equal(eventOf(unpaid.external_reference).event, 'payment.canceled');
    assert.equal(eventOf(approved).event, 'transfer.approved');
    assert.equal(eventOf(canceled).event, 'transfer.canceled');
    assert.equal(eventOf(paid).data.status, PARTNER_STATUS.approved);
    assert.equal(eventOf(unpaid.external_reference).data.status, PARTNER_STATUS.canceled);
    assert.match(eventOf(paid).occurred_at, TIMESTAMP_PATTERN);
    assert.equal(new Set(events.map((e) => e.id)).size, events.length, 'every event has its own id');
    for (const w of r.received) {
      // As the proxy reads it: the new format says its outcome in words, with its event id.
      const parsed = readNotification(w.body);
      assert.equal(parsed?.outcome, (w.body.event as string).split('.')[1]);
      assert.equal(parsed?.eventId, w.body.id);
    }
  });
});

describe('6 delivery: retries, timeouts, resends', () => {
  test(`a receiver that always answers 500 gets exactly ${ATTEMPTS} attempts, then the sandbox gives up`, async () => {
    const r = await receiver(() => 500);
    await register(r.url);
    const reference = await paidPayment();
    const [delivery] = await settledDeliveries(reference);
    assert.equal(delivery!.state, 'failed');
    assert.deepEqual(
      delivery!.attempts.map((a) => [a.number, a.status, a.delivered]),
      [
        [1, 500, false],
        [2, 500, false],
        [3, 500, false],
      ],
    );
    assert.equal(r.received.length, ATTEMPTS);
    assert.deepEqual(
      r.received.map((w) => w.text),
      Array(ATTEMPTS).fill(r.received[0]!.text),
      'the same payload each time',
    );
  });

  test('any 2xx counts as delivered: 500, then 204 stops after 2 attempts', async () => {
    const r = await receiver((n) => (n === 1 ? 500 : 204));
    await register(r.url);
    const reference = await paidPayment();
    const [delivery] = await settledDeliveries(reference);
    assert.equal(delivery!.state, 'delivered');
    assert.equal(delivery!.attempts.length, 2);
    assert.equal(r.received.length, 2);
  });

  test('3xx and 4xx are not delivered either', async () => {
    const r = await receiver((n) => (n === 1 ? 302 : n === 2 ? 404 : 201));
    await register(r.url);
    const reference = await paidPayment();
    const [delivery] = await settledDeliveries(reference);
    assert.deepEqual(
      delivery!.attempts.map((a) => a.status),
      [302, 404, 201],
    );
    assert.equal(delivery!.state, 'delivered');
  });

  test(`a receiver that never answers times out ${ATTEMPTS} times`, async () => {
    const own = await startHarness({ webhooks: { timeoutMs: 100, retryDelayMs: 5 } });
    try {
      const r = await receiver(() => 'hang');
      await own.api('PATCH', PARTNER_PATHS.notificationUrl, { body: { notification_url: r.url } });
      const created = await own.createPayment({});
      await own.control('POST', `/payments/${created.external_reference}/pay`);
      const delivery = await waitFor('the given-up delivery', () => own.sandbox.state.webhooks.deliveries.find((d) => d.state === 'failed'));
      assert.deepEqual(
        delivery.attempts.map((a) => a.error),
        ['timeout', 'timeout', 'timeout'],
      );
      assert.equal(r.received.length, ATTEMPTS);
    } finally {
      await own.close();
    }
  });

  test(`nobody listening: ${ATTEMPTS} failed connections`, async () => {
    const r = await receiver();
    const url = r.url;
    await r.close();
    await register(url);
    const reference = await paidPayment();
    const [delivery] = await settledDeliveries(reference);
    assert.equal(delivery!.state, 'failed');
    assert.deepEqual(
      delivery!.attempts.map((a) => a.error),
      ['connection_failed', 'connection_failed', 'connection_failed'],
    );
  });

  test('no notification URL: nothing is sent, and it is recorded as not sent', async () => {
    const reference = await paidPayment();
    const [delivery] = await settledDeliveries(reference);
    assert.equal(delivery!.state, 'not_sent');
    assert.equal(delivery!.url, null);
    assert.deepEqual(delivery!.attempts, []);
  });

  test('resend: the same event again, to the URL and in the format registered now', async () => {
    const first = await receiver();
    await register(first.url, NOTIFY_TYPE.new);
    const reference = await paidPayment();
    const [original] = await settledDeliveries(reference);
    const second = await receiver();
    await register(second.url, NOTIFY_TYPE.new);
    const resend = await h.control('POST', `/webhooks/events/${original!.event_id}/resend`);
    assert.equal(resend.status, 202);
    assert.equal(resend.json.delivery.trigger, 'resend');
    const deliveries = await settledDeliveries(reference, 2);
    assert.equal(deliveries[1]!.state, 'delivered');
    assert.equal(second.received.length, 1);
    assert.equal(second.received[0]!.body.id, first.received[0]!.body.id, 'the same event id, so receivers can deduplicate');
    assert.deepEqual(second.received[0]!.body, first.received[0]!.body);
    assert.equal((await h.control('POST', '/webhooks/events/evt_nope/resend')).status, 404);
  });

  test('the delivery list filters by event', async () => {
    const r = await receiver();
    await register(r.url);
    const reference = await paidPayment();
    const [delivery] = await settledDeliveries(reference);
    const res = await h.control('GET', `/webhooks/deliveries?event_id=${delivery!.event_id}`);
    assert.deepEqual(
      res.json.deliveries.map((d: WebhookDelivery) => d.id),
      [delivery!.id],
    );
    assert.equal(delivery!.url, r.url);
    assert.equal(delivery!.format, 'old');
    assert.deepEqual(delivery!.payload, r.received[0]!.body);
    assert.match(delivery!.attempts[0]!.at, TIMESTAMP_PATTERN);
  });
});

describe('returns and batched notifications', () => {
  test('a paid payment returned: the payment stays paid, and a notification states everything returned so far', async () => {
    const r = await receiver();
    await register(r.url, NOTIFY_TYPE.new);
    const reference = await paidPayment();
    await settledDeliveries(reference);
    assert.equal((await h.control('POST', `/payments/${reference}/return`, { value: 5 })).status, 200);
    const second = await h.control('POST', `/payments/${reference}/return`);
    assert.deepEqual(second.json, { reference, returned: 19.9 }, 'the rest, without a value');
    const refused = await h.control('POST', `/payments/${reference}/return`, { value: 1 });
    assert.equal(refused.status, 409, 'nothing is left to return');
    const deliveries = await settledDeliveries(reference, 3);
    assert.deepEqual(
      deliveries.map((d) => readNotification(d.payload)?.returned ?? null),
      [null, { cents: 500 }, { cents: 1990 }],
    );
    const read = await h.api('GET', `/api/v2/wallet/partner/transactions/${reference}`);
    assert.equal(read.json.data.status, PARTNER_STATUS.approved, 'still paid');
    const unpaid = await h.createPayment({ value: 3 });
    assert.equal((await h.control('POST', `/payments/${unpaid.external_reference}/return`)).status, 409, 'an unpaid payment has nothing to return');
  });

  test('batching on: outcomes due together are sent in one POST listing them, each readable on its own', async () => {
    const r = await receiver();
    await register(r.url, NOTIFY_TYPE.old);
    // A window no test reaches: the batch is sent when flushed (no timing involved).
    assert.deepEqual((await h.control('PUT', '/webhooks/batching', { window_ms: 60_000 })).json, { window_ms: 60_000 });
    try {
      const [a, b] = [await h.createPayment({ value: 1 }), await h.createPayment({ value: 2 })];
      await h.control('POST', `/payments/${a.external_reference}/pay`);
      await h.control('POST', `/payments/${b.external_reference}/pay`);
      assert.equal(r.received.length, 0, 'held');
      assert.deepEqual((await h.control('POST', '/webhooks/batching/flush')).json, { sent: true });
      await settledDeliveries(b.external_reference);
      assert.equal(r.received.length, 1, 'one POST');
      const body = r.received[0]!.body as { pix: unknown[] };
      assert.deepEqual(
        body.pix.map((item) => readNotification(item)?.reference),
        [a.external_reference, b.external_reference],
      );
    } finally {
      await h.control('PUT', '/webhooks/batching', { window_ms: 0 });
    }
    assert.equal((await h.control('PUT', '/webhooks/batching', { window_ms: -1 })).status, 400);
  });
});
