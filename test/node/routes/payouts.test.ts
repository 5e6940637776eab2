/**
 * Payouts and refunds over HTTP (server to server, API key, Idempotency-Key): both kinds of transfer,
 * every refusal, idempotency, a lost answer, concurrent refunds, outcomes reaching the merchant's
 * webhook. Real HTTPS to the sandbox, a real SQLite file, a real merchant receiver on a socket.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { CheckoutView, OutcomeEvent } from '../../../src/shared/contract.ts';
import { IDEMPOTENCY_HEADER, TransferList, TransferView, maskPixKey } from '../../../src/shared/payouts.ts';
import { startDevStack, type DevStack } from '../../../server/dev-stack.ts';
import { createLogger } from '../../../server/log.ts';
import { verifyWebhookSignature, SIGNATURE_HEADER } from '../../../server/domain/signature.ts';
import { newTransferId } from '../../../server/domain/payouts.ts';
import { expectError, paidCheckout, stackControl, verifyStatusCodes, waitFor } from '../../support/checks.ts';
import { startReceiver, type Receiver } from '../../support/sandbox-harness.ts';

const ANA = { document: '123.456.789-09', email: 'ana@cliente.example', cpf: '123.456.789-09', phone: '+55 (11) 98765-4321' };
const BRUNO = { document: '234.567.891-73', email: 'bruno@cliente.example' }; // KYC pending
const CARLA = { document: '345.678.912-28', email: 'carla@cliente.example' }; // KYC rejected
const DIEGO = { document: '456.789.123-64', email: 'diego@cliente.example' }; // bank refuses
const ELISA = { document: '567.891.234-82', email: 'elisa@cliente.example' }; // bank cancels
const SECRET = 'whsec-test-payouts';

let stack: DevStack;
let receiver: Receiver;
const logLines: string[] = [];
let orders = 0;

before(async () => {
  receiver = await startReceiver();
  stack = await startDevStack({
    logger: createLogger({ level: 'trace', destination: { write: (line: string) => void logLines.push(line) } }),
    merchantWebhook: { url: receiver.url, secret: SECRET, retryScheduleMs: [20, 100] },
    // Only the partner reaches the intake: a transfer's notification is confirmed even before its create's answer named it.
    webhooks: { secretPath: 'payouts-test-intake-0123456789', sourceIps: [] },
  });
  // Transfers read only the codes payments proved (domain/numbering/status-numbering.ts).
  await verifyStatusCodes(stack);
});
after(async () => {
  await stack.close();
  await receiver.close();
});

async function api(method: string, path: string, body?: unknown, headers: Record<string, string | null> = {}) {
  const h: Record<string, string> = {};
  if (headers.authorization !== null) h.authorization = headers.authorization ?? `Bearer ${stack.apiKey}`;
  if (body !== undefined) h['content-type'] = 'application/json';
  for (const [k, v] of Object.entries(headers)) if (v !== null && k !== 'authorization') h[k] = v;
  const res = await fetch(`${stack.apiUrl}${path}`, { method, headers: h, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await res.text();
  return { res, status: res.status, json: text ? (JSON.parse(text) as unknown) : undefined, text };
}

const post = (path: string, body: unknown, key: string | null = randomUUID()) => api('POST', path, body, key === null ? {} : { [IDEMPOTENCY_HEADER]: key });

function view(result: { status: number; json: unknown }, status: number): TransferView {
  assert.equal(result.status, status, JSON.stringify(result.json));
  return TransferView.parse(result.json);
}

const events = (type: string) => receiver.received.filter((r) => (r.body as OutcomeEvent | undefined)?.type === type).map((r) => r.body as OutcomeEvent);

describe('payouts: POST /transfers', () => {
  test('to a key: 201 pending with the key masked; the bank approves; the merchant is told once, signed, naming the transfer', async () => {
    const created = view(await post('/transfers', { value: 12.34, pix_key: ANA.email, reference: 'seller-42' }), 201);
    assert.equal(created.status, 'pending');
    assert.equal(created.value, 12.34);
    assert.equal(created.pix_key, 'a***@cliente.example');
    assert.equal(created.pix_key_type, 'EMAIL');
    assert.equal(created.reference, 'seller-42');
    assert.equal(created.checkout_id, null);
    assert.match(created.transfer_id, /^tr_[A-Za-z0-9_-]{24}$/);
    assert.ok(created.partner_reference, 'created.partner_reference');
    assert.doesNotMatch(JSON.stringify(created), /ana@cliente/);

    await stackControl(stack, 'POST', `/transfers/${encodeURIComponent(created.partner_reference)}/approve`);
    const approved = await waitFor('the transfer approved', async () => {
      const read = view(await api('GET', `/transfers/${created.transfer_id}`), 200);
      return read.status === 'approved' ? read : undefined;
    });
    assert.equal(approved.transfer_id, created.transfer_id);
    const delivered = await waitFor('the outcome delivered', () => events('transfer.approved').find((e) => e.data.transfer_id === created.transfer_id));
    assert.equal(delivered.data.reference, created.partner_reference);
    assert.equal(delivered.data.transfer_reference, 'seller-42');
    assert.equal(delivered.data.value, 12.34);
    const raw = receiver.received.find((r) => (r.body as OutcomeEvent | undefined)?.id === delivered.id)!;
    assert.ok(
      verifyWebhookSignature(raw.text, raw.headers[SIGNATURE_HEADER.toLowerCase()] as string, SECRET),
      'verifyWebhookSignature(raw.text, raw.headers[SIGNATURE_HEADER.toLowerC',
    );
    await stack.pix.reconciler.runOnce();
    assert.equal(events('transfer.approved').filter((e) => e.id === delivered.id).length, 1, 'once');
  });

  test('solicited for a customer (with the document): pending; the document never comes back nor reaches a log', async () => {
    const created = view(await post('/transfers', { value: 5, pix_key: ANA.cpf, pix_key_type: 'CPF', customer_document: ANA.document }), 201);
    assert.equal(created.status, 'pending');
    assert.equal(created.pix_key, maskPixKey(ANA.cpf, 'CPF'));
    assert.equal(created.pix_key, '123.***.***-09');
    const all = JSON.stringify(created) + logLines.join('\n');
    assert.doesNotMatch(all, /123\.456\.789-09|12345678909/);
    const row = await stack.store.payouts.get(created.transfer_id);
    assert.equal(row?.kind, 'customer');
    assert.equal(row?.customerDocument, null, 'forgotten once the partner answered');
  });

  for (const [label, body, reason] of [
    ['KYC pending', { value: 1, pix_key: BRUNO.email, customer_document: BRUNO.document }, 'kyc_not_approved'],
    ['KYC rejected', { value: 1, pix_key: CARLA.email }, 'kyc_not_approved'],
    ['the key is not the customer’s', { value: 1, pix_key: BRUNO.email, customer_document: ANA.document }, 'key_owner_mismatch'],
    ['a key nobody here owns', { value: 1, pix_key: 'nobody@nowhere.example' }, 'key_owner_mismatch'],
    ['the bank refuses', { value: 1, pix_key: DIEGO.email, customer_document: DIEGO.document }, 'bank_refused'],
  ] as const) {
    test(`refused up front (${label}): 201 refused with reason ${reason}; the merchant hears transfer.refused`, async () => {
      const refused = view(await post('/transfers', body), 201);
      assert.equal(refused.status, 'refused');
      assert.equal(refused.reason, reason);
      assert.equal(refused.partner_reference, null);
      assert.ok(refused.reason_message && refused.reason_message.length > 0, 'refused.reason_message && refused.reason_message.length > 0');
      const event = await waitFor('the refusal delivered', () => events('transfer.refused').find((e) => e.data.transfer_id === refused.transfer_id));
      assert.equal(event.data.status, 'refused');
      assert.equal(event.data.reason, reason);
      assert.equal(OutcomeEvent.safeParse(event).success, true);
    });
  }

  test('the bank cancels later: canceled, told as transfer.canceled', async () => {
    const created = view(await post('/transfers', { value: 3, pix_key: ELISA.email }), 201);
    await stackControl(stack, 'POST', `/transfers/${encodeURIComponent(created.partner_reference!)}/cancel`);
    await waitFor('canceled', async () => view(await api('GET', `/transfers/${created.transfer_id}`), 200).status === 'canceled');
    await waitFor('told', () => events('transfer.canceled').find((e) => e.data.transfer_id === created.transfer_id));
  });

  test('the same Idempotency-Key and body: 200, the same transfer, sent once; another body: 409', async () => {
    const key = randomUUID();
    const body = { value: 7.5, pix_key: ANA.email };
    const partnerCalls = () => stack.sandbox.state.transfers.size;
    const before = partnerCalls();
    const first = view(await post('/transfers', body, key), 201);
    const again = view(await post('/transfers', { pix_key: ANA.email, value: 7.5 }, key), 200);
    assert.equal(again.transfer_id, first.transfer_id);
    assert.equal(partnerCalls(), before + 1, 'the partner received one transfer');
    const error = expectError(await post('/transfers', { value: 7.51, pix_key: ANA.email }, key), 409, 'idempotency_key_reused');
    assert.ok(error.fields?.[IDEMPOTENCY_HEADER], 'error.fields?.[IDEMPOTENCY_HEADER]');
    // Concurrent repeats of one key: one transfer.
    const key2 = randomUUID();
    const results = await Promise.all(Array.from({ length: 5 }, () => post('/transfers', { value: 2, pix_key: ANA.email }, key2)));
    assert.equal(new Set(results.map((r) => TransferView.parse(r.json).transfer_id)).size, 1);
    assert.deepEqual(results.map((r) => r.status).sort(), [200, 200, 200, 200, 201]);
    assert.equal(partnerCalls(), before + 2);
  });

  test('no Idempotency-Key, or a malformed one: 400 naming the header; nothing sent', async () => {
    const before = stack.sandbox.state.transfers.size;
    const missing = expectError(await post('/transfers', { value: 1, pix_key: ANA.email }, null), 400, 'invalid_request');
    assert.equal(missing.fields?.[IDEMPOTENCY_HEADER], 'is required');
    const bad = expectError(await post('/transfers', { value: 1, pix_key: ANA.email }, 'has spaces in it'), 400, 'invalid_request');
    assert.ok(bad.fields?.[IDEMPOTENCY_HEADER], 'bad.fields?.[IDEMPOTENCY_HEADER]');
    assert.equal(stack.sandbox.state.transfers.size, before);
  });

  for (const [label, body, field] of [
    ['below the minimum', { value: 0.19, pix_key: ANA.email }, 'value'],
    ['above the maximum', { value: 49_000.01, pix_key: ANA.email }, 'value'],
    ['fractions of a cent', { value: 1.234, pix_key: ANA.email }, 'value'],
    ['a value as text', { value: '10', pix_key: ANA.email }, 'value'],
    ['no key', { value: 1 }, 'pix_key'],
    ['a key of no type', { value: 1, pix_key: 'not a key' }, 'pix_key'],
    ['a key not of its stated type', { value: 1, pix_key: ANA.email, pix_key_type: 'CPF' }, 'pix_key'],
    ['an unknown key type', { value: 1, pix_key: ANA.email, pix_key_type: 'IBAN' }, 'pix_key_type'],
    ['an invalid document', { value: 1, pix_key: ANA.email, customer_document: '111.111.111-11' }, 'customer_document'],
    ['an unknown field', { value: 1, pix_key: ANA.email, bank: 'x' }, 'bank'],
  ] as const) {
    test(`${label}: 400 naming ${field}, nothing stored or sent`, async () => {
      const before = stack.sandbox.state.transfers.size;
      const error = expectError(await post('/transfers', body), 400, 'invalid_request');
      assert.ok(error.fields?.[field], JSON.stringify(error));
      assert.equal(stack.sandbox.state.transfers.size, before);
    });
  }

  test('no API key, or a wrong one: 401 on every payout route', async () => {
    for (const [method, path] of [
      ['POST', '/transfers'],
      ['GET', '/transfers'],
      ['GET', `/transfers/${newTransferId()}`],
      ['POST', '/checkouts/co_AAAAAAAAAAAAAAAAAAAAAAAA/refunds'],
    ] as const) {
      expectError(await api(method, path, method === 'POST' ? { value: 1, pix_key: ANA.email } : undefined, { authorization: null }), 401, 'unauthorized');
      expectError(await api(method, path, undefined, { authorization: 'Bearer wrong' }), 401, 'unauthorized');
    }
  });

  test('an unknown transfer id: 404; a method the route does not take: 405', async () => {
    expectError(await api('GET', `/transfers/${newTransferId()}`), 404, 'not_found');
    expectError(await api('GET', '/transfers/not-an-id'), 404, 'not_found');
    const put = await api('PUT', '/transfers');
    expectError(put, 405, 'method_not_allowed');
    assert.equal(put.res.headers.get('allow'), 'GET, POST');
  });
});

describe('the partner tells the outcome before the create answers', () => {
  test('the merchant event of a refund names the transfer, its checkout and order (linked by our transaction_id)', async () => {
    const checkoutId = await paidCheckout(stack, 7, 'refund');
    const order = CheckoutView.parse((await api('GET', `/checkouts/${checkoutId}`)).json).order_id;
    const path = '/api/v3.1/wallet/partner/pix-key/transfer';
    // The partner acts at once but its answer is held: meanwhile the bank approves and the notification comes.
    await stackControl(stack, 'POST', '/faults', { kind: 'late_answer', rate: 1, path_prefix: path, latency_ms: 1_500, times: 1 });
    const known = new Set(stack.sandbox.state.transfers.keys());
    const creating = post(`/checkouts/${checkoutId}/refunds`, { value: 2, pix_key: ANA.email });
    const reference = await waitFor('the partner to create the transfer', () => [...stack.sandbox.state.transfers.keys()].find((k) => !known.has(k)));
    await stackControl(stack, 'POST', `/transfers/${encodeURIComponent(reference)}/approve`);
    const told = await waitFor('the outcome delivered', () => events('transfer.approved').find((e) => e.data.reference === reference));
    const created = view(await creating, 201);
    assert.equal(created.partner_reference, reference);
    assert.deepEqual(
      [told.data.transfer_id, told.data.transfer_reference, told.data.checkout_id, told.data.order_id],
      [created.transfer_id, null, checkoutId, order],
    );
    assert.equal(view(await api('GET', `/transfers/${created.transfer_id}`), 200).status, 'approved');
    assert.equal(events('transfer.approved').filter((e) => e.data.reference === reference).length, 1, 'told once');
  });
});

describe('an answer lost: unknown, never sent again', () => {
  test('an accepted transfer whose answer cannot be read: 201 unknown; the same key answers it again without a second call', async () => {
    await stackControl(stack, 'POST', '/faults', { kind: 'malformed_json', rate: 1, path_prefix: '/api/v3.1/wallet/partner/pix-key/transfer', times: 1 });
    const before = stack.sandbox.state.transfers.size;
    const key = randomUUID();
    const lost = view(await post('/transfers', { value: 9, pix_key: ANA.email }, key), 201);
    assert.equal(lost.status, 'unknown');
    assert.equal(lost.reason, 'answer_lost');
    assert.equal(stack.sandbox.state.transfers.size, before + 1, 'the partner did carry it out');
    const again = view(await post('/transfers', { value: 9, pix_key: ANA.email }, key), 200);
    assert.equal(again.status, 'unknown');
    assert.equal(stack.sandbox.state.transfers.size, before + 1, 'not sent again');
    assert.ok(
      logLines.some((line) => line.includes(lost.transfer_id) && line.includes('unknown')),
      'the operator is told, with its id',
    );
  });

  test('a 503 from the partner: unknown too (it may have acted before failing)', async () => {
    await stackControl(stack, 'POST', '/faults', {
      kind: 'server_error',
      rate: 1,
      status: 503,
      path_prefix: '/api/v3.1/wallet/partner/pix-key/transfer',
      times: 1,
    });
    const lost = view(await post('/transfers', { value: 9.5, pix_key: ANA.email }), 201);
    assert.equal(lost.status, 'unknown');
  });

  const TRANSFER_PATH = '/api/v3.1/wallet/partner/pix-key/transfer';
  const FIREWALL_PAGE = '<html><head><title>400 Bad Request</title></head><body><h1>Bad Request</h1><p>Request blocked.</p></body></html>';
  for (const [label, status, body] of [
    ['a 409', 409, null],
    ['a 423', 423, null],
    ["a firewall's 400 with an HTML page", 400, FIREWALL_PAGE],
    ['a 404', 404, null],
    ['a 429', 429, null],
    ['a bare 403', 403, '{"message":"Forbidden."}'],
  ] as const) {
    test(`${label} to the create, no refusal named: 201 unknown, never sent again, the operator told its transaction_id`, async () => {
      stack.sandbox.state.faults.add({ kind: 'server_error', rate: 1, path_prefix: TRANSFER_PATH, latency_ms: null, status, body, times: 1 });
      const key = randomUUID();
      const lost = view(await post('/transfers', { value: 4.5, pix_key: ANA.email }, key), 201);
      assert.deepEqual([lost.status, lost.reason], ['unknown', 'answer_lost']);
      const before = stack.sandbox.state.transfers.size;
      const again = view(await post('/transfers', { value: 4.5, pix_key: ANA.email }, key), 200);
      assert.deepEqual([again.transfer_id, again.status], [lost.transfer_id, 'unknown']);
      assert.equal(stack.sandbox.state.transfers.size, before, 'not sent again');
      const line = logLines.find((l) => l.includes(lost.transfer_id) && l.includes('"level":50'));
      assert.ok(line?.includes(lost.transaction_id) && line.includes(`"status":${status}`), `an error line naming its transaction_id: ${line}`);
    });
  }

  for (const [label, status, body, reason] of [
    ['a 403 whose message names the KYC', 403, '{"message":"The customer KYC is not approved."}', 'refused'],
    ['a 422 naming the fields at fault', 422, '{"errors":{"pix_key":["pix_key is not a valid key"]}}', 'refused'],
    ['a 400 giving a documented reason', 400, '{"message":"No.","code":"bank_refused"}', 'bank_refused'],
  ] as const) {
    test(`${label}: a refusal the partner states, refused (nothing moved)`, async () => {
      stack.sandbox.state.faults.add({ kind: 'server_error', rate: 1, path_prefix: TRANSFER_PATH, latency_ms: null, status, body, times: 1 });
      const refused = view(await post('/transfers', { value: 4.75, pix_key: ANA.email }), 201);
      assert.deepEqual([refused.status, refused.reason], ['refused', reason]);
    });
  }

  test('a payout cut off mid-call by a crash becomes unknown at the next reconciler pass', async () => {
    const id = newTransferId();
    const long = Date.now() - 60 * 60_000;
    await stack.store.payouts.create(
      {
        id,
        idempotencyKey: randomUUID(),
        requestHash: 'x',
        kind: 'key',
        checkoutId: null,
        valueCents: 100,
        pixKey: ANA.email,
        pixKeyType: 'EMAIL',
        customerDocument: null,
        merchantReference: null,
        transactionId: randomUUID(),
        state: 'sending',
        reference: null,
        reason: null,
        reasonMessage: null,
        createdAt: long,
        updatedAt: long,
      },
      2,
    );
    assert.equal(view(await api('GET', `/transfers/${id}`), 200).status, 'pending');
    await stack.pix.reconciler.runOnce();
    assert.equal(view(await api('GET', `/transfers/${id}`), 200).status, 'unknown');
  });
});

describe('the list: GET /transfers', () => {
  test('newest first, paged by cursor, filtered by status', async () => {
    const made: string[] = [];
    for (let i = 0; i < 5; i++) made.push(view(await post('/transfers', { value: 1 + i, pix_key: ANA.email, reference: `page-${i}` }), 201).transfer_id);
    const first = TransferList.parse((await api('GET', '/transfers?limit=2')).json);
    assert.equal(first.data.length, 2);
    assert.deepEqual(
      first.data.map((t) => t.transfer_id),
      [made[4], made[3]],
    );
    assert.ok(first.next_cursor, 'first.next_cursor');
    const second = TransferList.parse((await api('GET', `/transfers?limit=2&cursor=${first.next_cursor}`)).json);
    assert.deepEqual(
      second.data.map((t) => t.transfer_id),
      [made[2], made[1]],
    );
    // Every page to the end, once each.
    const seen = new Set<string>();
    let cursor: string | null = null;
    do {
      const page: TransferList = TransferList.parse((await api('GET', `/transfers?limit=7${cursor ? `&cursor=${cursor}` : ''}`)).json);
      for (const t of page.data) {
        assert.ok(!seen.has(t.transfer_id), 'no transfer on two pages');
        seen.add(t.transfer_id);
      }
      cursor = page.next_cursor;
    } while (cursor);
    for (const id of made) assert.ok(seen.has(id), 'seen.has(id)');
    const refused = TransferList.parse((await api('GET', '/transfers?status=refused&limit=100')).json);
    assert.ok(refused.data.length > 0, 'refused.data.length > 0');
    assert.ok(
      refused.data.every((t) => t.status === 'refused'),
      'refused.data.every((t) => t.status === ’refused’)',
    );
  });

  test('a bad query: 400 naming it', async () => {
    const bad = [
      ['status=paid', 'status'],
      ['limit=0', 'limit'],
      ['limit=101', 'limit'],
      ['cursor=zzzz', 'cursor'],
      ['page=2', 'page'],
    ] as const;
    for (const [query, field] of bad)
      assert.ok(expectError(await api('GET', `/transfers?${query}`), 400, 'invalid_request').fields?.[field], `${query}: 400 naming ${field}`);
  });
});

describe('refunds: POST /checkouts/:id/refunds', () => {
  test('a checkout not paid: 409 checkout_not_paid; an unknown one: 404', async () => {
    const created = await api('POST', '/checkouts', { value: 10, order_id: `unpaid-${process.pid}-${++orders}` });
    const id = CheckoutView.parse(created.json).checkout_id;
    expectError(await post(`/checkouts/${id}/refunds`, { value: 1, pix_key: ANA.email }), 409, 'checkout_not_paid');
    expectError(await post('/checkouts/co_AAAAAAAAAAAAAAAAAAAAAAAA/refunds', { value: 1, pix_key: ANA.email }), 404, 'not_found');
    expectError(await post('/checkouts/nope/refunds', { value: 1, pix_key: ANA.email }), 400, 'invalid_request');
  });

  test('part, then the rest (no value), then nothing is left: 409; the checkout lists its refunds; the merchant is told', async () => {
    const id = await paidCheckout(stack, 30, 'refund');
    const part = view(await post(`/checkouts/${id}/refunds`, { value: 10, pix_key: ANA.email }), 201);
    assert.equal(part.checkout_id, id);
    assert.equal(part.status, 'pending');
    const rest = view(await post(`/checkouts/${id}/refunds`, { pix_key: ANA.email }), 201);
    assert.equal(rest.value, 20);
    const none = expectError(await post(`/checkouts/${id}/refunds`, { value: 0.2, pix_key: ANA.email }), 409, 'refund_exceeds_paid');
    assert.ok(none.fields?.value, 'none.fields?.value');
    const checkout = CheckoutView.parse((await api('GET', `/checkouts/${id}`)).json);
    assert.deepEqual(
      checkout.refunds?.map((r) => [r.transfer_id, r.value]),
      [
        [part.transfer_id, 10],
        [rest.transfer_id, 20],
      ],
    );
    await stackControl(stack, 'POST', `/transfers/${encodeURIComponent(part.partner_reference!)}/approve`);
    const told = await waitFor('the refund told', () => events('transfer.approved').find((e) => e.data.transfer_id === part.transfer_id));
    assert.equal(told.data.checkout_id, id);
    assert.ok(told.data.order_id?.startsWith('refund-'), 'told.data.order_id?.startsWith(’refund-’)');
  });

  test('more than was paid: 409 naming what is left', async () => {
    const id = await paidCheckout(stack, 10, 'refund');
    const error = expectError(await post(`/checkouts/${id}/refunds`, { value: 10.01, pix_key: ANA.email }), 409, 'refund_exceeds_paid');
    assert.match(error.message, /10[.,]00/);
  });

  test('concurrent refunds that would exceed the paid value: only those that fit succeed', async () => {
    const id = await paidCheckout(stack, 100, 'refund');
    const before = stack.sandbox.state.transfers.size;
    const results = await Promise.all(Array.from({ length: 7 }, () => post(`/checkouts/${id}/refunds`, { value: 30, pix_key: ANA.email })));
    const statuses = results.map((r) => r.status).sort();
    assert.deepEqual(statuses, [201, 201, 201, 409, 409, 409, 409], results.map((r) => r.text).join('\n'));
    assert.equal(stack.sandbox.state.transfers.size, before + 3);
    const left = view(await post(`/checkouts/${id}/refunds`, { pix_key: ANA.email }), 201);
    assert.equal(left.value, 10, 'the last 10.00, and no more');
  });

  test('a refused or canceled refund gives its value back; an unknown one does not', async () => {
    const id = await paidCheckout(stack, 20, 'refund');
    const refused = view(await post(`/checkouts/${id}/refunds`, { value: 20, pix_key: DIEGO.email }), 201);
    assert.equal(refused.status, 'refused');
    const canceled = view(await post(`/checkouts/${id}/refunds`, { value: 20, pix_key: ELISA.email }), 201);
    await stackControl(stack, 'POST', `/transfers/${encodeURIComponent(canceled.partner_reference!)}/cancel`);
    await waitFor('canceled', async () => view(await api('GET', `/transfers/${canceled.transfer_id}`), 200).status === 'canceled');
    await stackControl(stack, 'POST', '/faults', { kind: 'malformed_json', rate: 1, path_prefix: '/api/v3.1/wallet/partner/pix-key/transfer', times: 1 });
    const unknown = view(await post(`/checkouts/${id}/refunds`, { value: 15, pix_key: ANA.email }), 201);
    assert.equal(unknown.status, 'unknown');
    expectError(await post(`/checkouts/${id}/refunds`, { value: 5.01, pix_key: ANA.email }), 409, 'refund_exceeds_paid');
    assert.equal(view(await post(`/checkouts/${id}/refunds`, { value: 5, pix_key: ANA.email }), 201).status, 'pending');
  });

  test('the same key for a refund and a payout: 409, not a second transfer', async () => {
    const id = await paidCheckout(stack, 5, 'refund');
    const key = randomUUID();
    view(await post(`/checkouts/${id}/refunds`, { value: 1, pix_key: ANA.email }, key), 201);
    expectError(await post('/transfers', { value: 1, pix_key: ANA.email }, key), 409, 'idempotency_key_reused');
  });
});
