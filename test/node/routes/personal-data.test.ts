/**
 * Personal data through the proxy's routes with PIX_DATA_KEY set: a checkout's customer is sealed in
 * the store at creation and opened to issue its code (the partner gets it whole), its views never
 * carry it, an erased checkout keeps answering in the same shape, and a customer stored under another
 * key does not stop the payment. Real HTTPS to the sandbox, a real SQLite file.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { CheckoutView, PaymentView } from '../../../src/shared/contract.ts';
import { startDevStack, type DevStack } from '../../../server/dev-stack.ts';
import { PersonalData, PersonalDataCipher } from '../../../server/domain/personal-data.ts';
import { createLogger } from '../../../server/log.ts';
import { checkoutRecord } from '../../support/records.ts';

const KEY = Buffer.alloc(32, 5).toString('base64');
const DOCUMENT = '529.982.247-25';
let stack: DevStack;
let orders = 0;
const logLines: string[] = [];

before(async () => {
  stack = await startDevStack({ dataKey: KEY, logger: createLogger({ level: 'trace', destination: { write: (line: string) => void logLines.push(line) } }) });
});
after(async () => {
  await stack.close();
});

async function call(method: string, path: string, body?: unknown, merchant = true) {
  const headers: Record<string, string> = {};
  if (merchant) headers.authorization = `Bearer ${stack.apiKey}`;
  if (body !== undefined) headers['content-type'] = 'application/json';
  const res = await stack.app.request(`/api${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await res.text();
  return { status: res.status, text, json: text ? (JSON.parse(text) as unknown) : undefined };
}

const newOrder = () => `order-pd-${process.pid}-${++orders}`;

test('the customer is sealed at rest, opened for the partner, never in a view or a log', async () => {
  const created = await call('POST', '/checkouts', { value: 49.9, order_id: newOrder(), name: 'Maria Silva', document: DOCUMENT });
  assert.equal(created.status, 201, created.text);
  const checkout = CheckoutView.parse(created.json);
  const stored = await stack.store.checkouts.get(checkout.checkout_id);
  assert.match(stored?.document ?? '', /^v1:/);
  assert.match(stored?.name ?? '', /^v1:/);
  assert.equal(stored?.documentHash, new PersonalDataCipher(KEY).documentHash(DOCUMENT));

  const paid = await call('POST', `/checkouts/${checkout.checkout_id}/payment`, undefined, false);
  const payment = PaymentView.parse(paid.json);
  assert.deepEqual(stack.sandbox.state.payments.get(payment.reference)?.customer, { name: 'Maria Silva', document: DOCUMENT });
  for (const text of [created.text, paid.text, ...logLines]) assert.doesNotMatch(text, /Maria Silva|529\.982|52998224725/);
});

test('an erased checkout answers in the same shape; a customer sealed under another key does not stop its payment', async () => {
  const created = CheckoutView.parse((await call('POST', '/checkouts', { value: 12, order_id: newOrder(), name: 'Ana', document: '111.444.777-35' })).json);
  const personal = new PersonalData({
    store: stack.store,
    cipher: new PersonalDataCipher(KEY),
    retentionDays: 180,
    now: Date.now,
    log: createLogger({ level: 'silent' }),
  });
  assert.deepEqual(await personal.erase('11144477735'), { checkouts: 1, payouts: 0, inFlight: 0 });
  const view = await call('GET', `/checkouts/${created.checkout_id}`);
  assert.equal(view.status, 200);
  assert.deepEqual(CheckoutView.parse(view.json), created);
  const payment = PaymentView.parse((await call('POST', `/checkouts/${created.checkout_id}/payment`, undefined, false)).json);
  assert.equal(stack.sandbox.state.payments.get(payment.reference)?.customer ?? null, null, 'erased: issued without customer data');

  // Stored by an instance with another key: the code is issued without it, and the problem logged without the value.
  const other = new PersonalDataCipher(Buffer.alloc(32, 6).toString('hex'));
  const id = 'co_OTHERKEYCUSTOMERAAAAAAAA';
  await stack.store.checkouts.create(checkoutRecord({ id, orderId: newOrder(), name: other.seal('Bia'), document: other.seal('11144477735') }));
  const issued = await call('POST', `/checkouts/${id}/payment`, undefined, false);
  assert.equal(issued.status < 300, true, issued.text);
  assert.equal(stack.sandbox.state.payments.get(PaymentView.parse(issued.json).reference)?.customer ?? null, null);
  const line = logLines.find((l) => l.includes('could not be opened'));
  assert.ok(line, 'the problem is logged');
  assert.doesNotMatch(line, /Bia|11144477735/);
});
