/**
 * The partner's notifications against the real sandbox: its webhooks reach the proxy's endpoint over real sockets, the
 * store is a real SQLite file, the merchant's receiver a real HTTP server. Time is the sandbox's
 * frozen clock, moved by the tests; the reconciler and the delivery worker are driven with runOnce().
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import Database from 'libsql';
import { createLogger } from '../../../server/log.ts';
import { startDevStack, type DevStack } from '../../../server/dev-stack.ts';
import { createClock } from '../../../server/sandbox/clock.ts';
import { CANCELED_MARGIN_MS } from '../../../server/domain/numbering/status-numbering.ts';
import { startSandbox, type RunningSandbox } from '../../../server/sandbox/server.ts';
import { verifyWebhookSignature } from '../../../server/domain/signature.ts';
import { DB_FILE_NAME } from '../../../server/store/sqlite/sqlite-store.ts';
import type { OutcomeEvent } from '../../../server/domain/outcomes.ts';
import { stackControl, waitFor } from '../../support/checks.ts';

const T0 = Date.UTC(2030, 0, 1);
const SECRET = 'whsec_test_0123456789abcdef0123456789abcdef';

/** The merchant's backend: verifies, deduplicates by event id, counts duplicates. */
export interface Receiver {
  url: string;
  events: Map<string, OutcomeEvent>;
  duplicates: number;
  badSignatures: number;
  failWith: number | null;
  close(): Promise<void>;
}

export async function startReceiver(secret = SECRET): Promise<Receiver> {
  const r = { events: new Map<string, OutcomeEvent>(), duplicates: 0, badSignatures: 0, failWith: null as number | null };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (r.failWith) return void res.writeHead(r.failWith).end();
      const raw = Buffer.concat(chunks).toString('utf8');
      if (!verifyWebhookSignature(raw, req.headers['pix-checkout-signature'] as string, secret)) {
        r.badSignatures++;
        return void res.writeHead(400).end();
      }
      const event = JSON.parse(raw) as OutcomeEvent;
      assert.equal(req.headers['pix-checkout-event-id'], event.id);
      if (r.events.has(event.id)) r.duplicates++;
      else r.events.set(event.id, event);
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return Object.assign(r, {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks/pix`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  });
}

/** A guard, not a timing: fails only if the condition never comes. */

let sandbox: RunningSandbox;
let stack: DevStack;
let receiver: Receiver;
let db: Database.Database;
const emitted: OutcomeEvent[] = [];

const control = (method: string, path: string, body?: unknown) => stackControl(stack, method, path, body);
const create = async (value = 10) => (await stack.pix.payments.create({ value })).reference;
const stored = (reference: string) => stack.store.payments.get(reference);
const eventRows = (reference: string) =>
  (db.prepare('SELECT result FROM webhook_events WHERE raw_body LIKE ? ORDER BY id').all(`%${reference}%`) as { result: string | null }[]).map((r) => r.result);
const processed = (reference: string, n: number) => async () => eventRows(reference).filter((r) => r !== null).length >= n;
const postWebhook = (body: string, path = '/api/webhooks/partner', headers: Record<string, string> = {}) =>
  fetch(stack.url + path, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });

describe('webhooks from the partner, and what the proxy does with them', () => {
  before(async () => {
    receiver = await startReceiver();
    sandbox = await startSandbox({
      clock: createClock(() => T0),
      settleIntervalMs: 0,
      webhooks: { timeoutMs: 5000, retryDelayMs: 5 },
      bank: { answerAfterSeconds: 5, lateAnswerAfterSeconds: 600 },
      faultSeed: 7,
    });
    stack = await startDevStack({
      sandbox,
      background: false,
      watchIntervalMs: 60_000,
      staleAfterMs: 60_000,
      merchantWebhook: { url: receiver.url, secret: SECRET, retryScheduleMs: [1000, 2000, 4000, 8000] },
      onOutcome: (event) => emitted.push(event),
      logger: createLogger({ level: 'silent' }),
    });
    db = new Database(join(stack.dataDir, DB_FILE_NAME), { readonly: true });
  });
  after(async () => {
    db.close();
    await stack.close();
    await sandbox.close();
    await receiver.close();
  });

  test('a payment is paid: stored, confirmed, streamed at once, passed on signed, once', async () => {
    const reference = await create(12.34);
    const stream = await fetch(`${stack.apiUrl}/payments/${reference}/events`);
    const reader = stream.body!.getReader();
    let seen = '';
    const first = await reader.read();
    seen += new TextDecoder().decode(first.value);
    assert.match(seen, /"status":"pending"/);

    await control('POST', `/payments/${reference}/pay`);
    // The watcher polls every 60 s: only the webhook's push can bring "paid" this soon.
    while (!seen.includes('"status":"paid"')) {
      const { value, done } = await reader.read();
      assert.equal(done, false, 'the stream ended before paid');
      seen += new TextDecoder().decode(value);
    }
    await reader.cancel();
    assert.equal((await stored(reference))!.final, true);
    await waitFor('the event processed', processed(reference, 1));
    assert.deepEqual(eventRows(reference), ['applied']);

    await stack.pix.notifier!.runOnce();
    const event = [...receiver.events.values()].find((e) => e.data.reference === reference);
    assert.ok(event, 'the merchant got it');
    assert.equal(event.type, 'payment.paid');
    assert.equal(event.data.value, 12.34);
    assert.equal(receiver.badSignatures, 0);
    await waitFor('the in-process event', () => emitted.some((e) => e.id === event.id));
  });

  test('a payment paid after the widget showed it expired is recorded and passed on', async () => {
    const reference = await create();
    await control('POST', '/clock/advance', { seconds: 3600 + 60 });
    const view = await (await fetch(`${stack.apiUrl}/payments/${reference}`)).json();
    assert.equal(view.status, 'expired');
    await control('POST', `/payments/${reference}/pay`);
    await waitFor('the event processed', processed(reference, 1));
    assert.equal((await (await fetch(`${stack.apiUrl}/payments/${reference}`)).json()).status, 'paid');
    await stack.pix.notifier!.runOnce();
    assert.ok([...receiver.events.values()].some((e) => e.data.reference === reference && e.type === 'payment.paid'));
  });

  test('every webhook dropped: the reconciler knows every outcome within its bound; duplicates and reordering change nothing', async () => {
    const fault = await control('POST', '/faults', { kind: 'drop_webhook', rate: 1 });
    const refs = await Promise.all(Array.from({ length: 12 }, () => create(5)));
    // The partner cancels only an hour past expiry (spec 3): the open ones are canceled by its clock.
    const [paid, open] = [refs.slice(0, 6), refs.slice(6)];
    for (const r of paid) await control('POST', `/payments/${r}/pay`);
    const ofRefs = async () => (await control('GET', '/webhooks/deliveries')).deliveries.filter((d: any) => refs.includes(d.external_reference));
    assert.equal((await ofRefs()).length, 6);
    for (const r of refs) assert.equal((await stored(r))!.final, false, 'nothing known yet');

    // Within the bound: the clock moves by it, one pass runs.
    await control('POST', '/clock/advance', { seconds: stack.pix.reconciler.boundMs / 1000 });
    await stack.pix.reconciler.runOnce();
    for (const r of paid) assert.equal((await stored(r))!.partnerStatus, 2, `${r} paid`);
    for (const r of open) assert.equal((await stored(r))!.final, false);

    // The open ones are canceled by the service 1 h after expiry; no webhook tells of it either. A
    // canceled code proves itself once read well past that hour (proofWindows: a margin more).
    await control('POST', '/clock/advance', { seconds: 2 * 3600 + CANCELED_MARGIN_MS / 1000 });
    await stack.pix.reconciler.runOnce();
    for (const r of open) assert.equal((await stored(r))!.partnerStatus, 3, `${r} canceled at last`);
    const deliveries = await ofRefs();
    assert.equal(deliveries.length, 12);
    assert.ok(deliveries.every((d: any) => d.state === 'dropped'));

    await stack.pix.notifier!.runOnce();
    const ours = () => [...receiver.events.values()].filter((e) => refs.includes(e.data.reference));
    assert.equal(ours().length, 12);
    const duplicatesBefore = receiver.duplicates;

    // Duplicates: every event sent again (same event ids), now that webhooks get through.
    await control('DELETE', `/faults/${fault.fault.id}`);
    const events = [...new Set(deliveries.map((d: any) => d.event_id as string))];
    for (const id of events) await control('POST', `/webhooks/events/${String(id)}/resend`);
    await waitFor('the resends processed', async () => refs.every((r) => eventRows(r).filter((x) => x !== null).length >= 1));
    for (const r of refs) assert.deepEqual(eventRows(r), ['already_final']);

    // Reordering, and a body that lies: "approved" for a canceled payment changes nothing.
    const lie = { type: 'payment', external_reference: open[0], status: 2, value: 5, transaction_id: null, end2end: null, user_id: null };
    assert.equal((await postWebhook(JSON.stringify(lie))).status, 202);
    await waitFor('the lie processed', processed(open[0]!, 2));
    assert.equal((await stored(open[0]!))!.partnerStatus, 3);
    // ...and "approved" for a payment still pending is not believed: the partner says pending. The
    // notification is kept (unprocessed, `waiting`) and confirmed again soon, not consumed.
    const pending = await create(5);
    assert.equal((await postWebhook(JSON.stringify({ ...lie, external_reference: pending }))).status, 202);
    await waitFor('the lie processed', processed(pending, 1));
    assert.deepEqual(eventRows(pending), ['waiting']);
    assert.ok(
      (await stack.store.webhookEvents.unprocessed(1000)).some((e) => e.rawBody.includes(pending)),
      'still unprocessed',
    );
    assert.equal((await stored(pending))!.final, false);

    await stack.pix.notifier!.runOnce();
    assert.equal(ours().length, 12);
    assert.equal(receiver.duplicates, duplicatesBefore);
  });

  test('a transfer the proxy sent is confirmed by webhook and passed on; one it does not know is not asked about (open intake)', async () => {
    const sent = await stack.pix.payouts.transfer({ value: 7.5, pix_key: 'ana@cliente.example' }, 'open-intake-transfer');
    const reference = sent.transfer.partner_reference!;
    // Sent by someone else (the partner's panel): through an open intake, anyone could name it.
    const stranger = await stack.partner.transferToKey({ value: 3.25, pix_key: 'ana@cliente.example' });
    const checked: string[] = [];
    const checkTransfer = stack.partner.checkTransfer.bind(stack.partner);
    stack.partner.checkTransfer = (ref) => (checked.push(ref), checkTransfer(ref));
    try {
      await control('POST', '/clock/advance', { seconds: 10 });
      await waitFor('the transfer final', async () => (await stack.store.transfers.get(reference))?.final === true);
      assert.equal((await stack.store.transfers.get(reference))!.partnerStatus, 2);
      await waitFor('the stranger settled', () => eventRows(stranger.externalReference).includes('unknown_reference'));
    } finally {
      stack.partner.checkTransfer = checkTransfer;
    }
    assert.equal(checked.includes(stranger.externalReference), false, 'the partner was asked about a transfer the proxy does not know');
    assert.equal(await stack.store.transfers.get(stranger.externalReference), null);
    await stack.pix.notifier!.runOnce();
    assert.ok([...receiver.events.values()].some((e) => e.type === 'transfer.approved' && e.data.reference === reference));
  });

  test('notifications it cannot use are kept and acknowledged (a 4xx would lose them), applied to nothing, listed for the operator', async () => {
    const finalBefore = (db.prepare('SELECT COUNT(*) AS n FROM payments WHERE final = 1').get() as { n: number }).n;
    const outboxBefore = (db.prepare('SELECT COUNT(*) AS n FROM outbox').get() as { n: number }).n;
    const malformedBody = '{"type": "payment", ';
    const malformed = await postWebhook(malformedBody);
    assert.equal(malformed.status, 202);
    const noReference = await postWebhook(JSON.stringify({ hello: 'world' }));
    assert.equal(noReference.status, 202);
    const unknownRef = await postWebhook(
      JSON.stringify({ type: 'payment', external_reference: 'not-ours', status: 2, value: 1, transaction_id: null, end2end: null, user_id: null }),
    );
    assert.equal(unknownRef.status, 202);
    await waitFor('the unknown reference processed', () => {
      const row = db.prepare("SELECT result FROM webhook_events WHERE raw_body LIKE '%not-ours%'").get() as { result: string | null } | undefined;
      return row?.result === 'unknown_reference';
    });
    const huge = await postWebhook(JSON.stringify({ pad: 'x'.repeat(70_000) }));
    assert.equal(huge.status, 413);
    assert.equal((await fetch(`${stack.apiUrl}/webhooks/partner`)).status, 405);
    // Kept whole, for the operator: the unreadable ones, and the one about a reference not ours.
    const listed = await stack.store.webhookEvents.listByResult(['unreadable', 'unknown_reference'], 100);
    assert.ok(listed.some((e) => e.result === 'unreadable' && e.rawBody === malformedBody));
    assert.ok(listed.some((e) => e.result === 'unreadable' && e.rawBody === JSON.stringify({ hello: 'world' })));
    assert.ok(listed.some((e) => e.result === 'unknown_reference' && e.rawBody.includes('not-ours')));
    assert.equal((db.prepare('SELECT COUNT(*) AS n FROM payments WHERE final = 1').get() as { n: number }).n, finalBefore);
    assert.equal((db.prepare('SELECT COUNT(*) AS n FROM outbox').get() as { n: number }).n, outboxBefore);
    assert.equal((await fetch(`${stack.url}/health`)).status, 200);
  });

  test('a notification in another dialect (form-encoded, other words and field names) is stored, confirmed and applied', async () => {
    const reference = await create(4);
    await control('POST', `/payments/${reference}/pay`);
    const form = new URLSearchParams({ event: 'PAYMENT_PAID', reference, value: '4.00' }).toString();
    const answer = await postWebhook(form, '/api/webhooks/partner', { 'content-type': 'application/x-www-form-urlencoded' });
    assert.equal(answer.status, 202);
    await waitFor('the payment final', async () => (await stored(reference))?.final === true);
    assert.equal((await stored(reference))!.partnerStatus, 2);
  });

  test('a notification listing several payments is split: each stored, confirmed with the partner and applied', async () => {
    // The sandbox's own notifications stop (the last tests of this suite): only ours can apply them.
    await control('DELETE', '/notification-url');
    const [paid1, paid2, open] = [await create(3), await create(4), await create(5)];
    await control('POST', `/payments/${paid1}/pay`);
    await control('POST', `/payments/${paid2}/pay`);
    // The way partners batch them (the central bank's `{"pix": [...]}`); the third is still pending.
    const body = { pix: [paid1, paid2, open].map((reference) => ({ external_reference: reference, status: 2, valor: '1.00' })) };
    assert.equal((await postWebhook(JSON.stringify(body))).status, 202);
    await waitFor('both paid', async () => (await stored(paid1))?.final === true && (await stored(paid2))?.final === true);
    assert.deepEqual([(await stored(paid1))!.partnerStatus, (await stored(paid2))!.partnerStatus], [2, 2]);
    // Each confirmed: the pending one's "2" in the body is not believed.
    await waitFor('the pending one processed', processed(open, 1));
    assert.equal((await stored(open))!.final, false);
    // One row each (the sandbox's own notifications aside), the list cut to its item.
    const split = db.prepare(`SELECT raw_body, result FROM webhook_events WHERE raw_body LIKE '{"pix":[%' AND raw_body LIKE ? ORDER BY id`);
    for (const reference of [paid1, paid2]) {
      const rows = split.all(`%${reference}%`) as { raw_body: string; result: string }[];
      assert.deepEqual(
        rows.map((r) => [(JSON.parse(r.raw_body) as { pix: unknown[] }).pix.length, r.result]),
        [[1, 'applied']],
      );
    }
  });

  test('a notification naming only our transaction id (txid) is matched to its payment', async () => {
    const reference = await create(6);
    await control('POST', `/payments/${reference}/pay`);
    const { transactionId } = (await stored(reference))!;
    assert.equal((await postWebhook(JSON.stringify({ pix: [{ txid: transactionId, valor: '6.00' }] }))).status, 202);
    await waitFor('the payment final', async () => (await stored(reference))?.final === true);
    const ours = () =>
      db.prepare(`SELECT result FROM webhook_events WHERE raw_body LIKE '{"pix":[%' AND raw_body LIKE ?`).all(`%${transactionId}%`) as {
        result: string | null;
      }[];
    await waitFor('processed', async () => ours()[0]?.result != null);
    assert.deepEqual(
      ours().map((r) => r.result),
      ['applied'],
    );
    // A transaction id that is none of ours: kept for the operator, nobody asked.
    assert.equal((await postWebhook(JSON.stringify({ txid: 'not-one-of-ours' }))).status, 202);
    const unknown = db.prepare("SELECT result FROM webhook_events WHERE raw_body LIKE '%not-one-of-ours%'").all() as { result: string | null }[];
    assert.deepEqual(
      unknown.map((r) => r.result),
      ['unknown_reference'],
    );
  });
});

describe('webhook source restriction and secret path', () => {
  let guarded: DevStack;
  const secretPath = 'a1b2c3d4e5f6a7b8c9d0';
  before(async () => {
    guarded = await startDevStack({
      background: false,
      registerWebhook: true,
      webhooks: { secretPath, sourceIps: ['203.0.113.7'] },
      trustedProxies: 1,
      logger: createLogger({ level: 'silent' }),
    });
  });
  after(() => guarded.close());

  test('wrong source is 403, wrong secret 404, the right ones reach the checks', async () => {
    const body = JSON.stringify({ type: 'payment', external_reference: 'x', status: 2, value: 1, transaction_id: null, end2end: null, user_id: null });
    const send = (path: string, xff?: string) =>
      fetch(guarded.url + path, { method: 'POST', headers: { 'content-type': 'application/json', ...(xff ? { 'x-forwarded-for': xff } : {}) }, body });
    const wrongSource = await send(`/api/webhooks/partner/${secretPath}`, '198.51.100.1');
    assert.equal(wrongSource.status, 403);
    assert.equal((await wrongSource.json()).error.code, 'forbidden');
    assert.equal((await send('/api/webhooks/partner/wrong-secret-segment', '203.0.113.7')).status, 404);
    assert.equal((await send('/api/webhooks/partner', '203.0.113.7')).status, 404);
    // Right source and secret: stored (an unknown reference here, kept for the operator).
    assert.equal((await send(`/api/webhooks/partner/${secretPath}`, '203.0.113.7')).status, 202);
    assert.equal(guarded.webhookUrl, `${guarded.url}/api/webhooks/partner/${secretPath}`);
  });
});
