/**
 * A payment create that ends with no payment gives one log line (per transaction), at error only
 * when the partner may have acted: a 500 after the request reached it is at error, a refused
 * connection (nothing sent) at warn; and the line says what the customer got. The request's own
 * line (a 503) is at warn, so a partner outage is not an error line per failed call times three.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { CheckoutView } from '../../../src/shared/contract.ts';
import { startDevStack, startSandbox, type DevStack, type RunningSandbox } from '../../../server/dev-stack.ts';
import { createLogger } from '../../../server/log.ts';
import { PARTNER_PATHS } from '../../../server/partner/wire.ts';

interface Line {
  level: number;
  msg: string;
  req_id?: string;
  path?: string;
  status?: number;
  transaction_id?: string;
  customer?: string;
  partner_may_have_acted?: boolean;
}

let sandbox: RunningSandbox;
let stack: DevStack;
const lines: Line[] = [];
let orders = 0;

before(async () => {
  sandbox = await startSandbox();
  stack = await startDevStack({
    sandbox,
    logger: createLogger({ level: 'info', destination: { write: (line: string) => void lines.push(JSON.parse(line) as Line) } }),
  });
});
after(async () => {
  await stack.close();
  await sandbox.close().catch(() => undefined);
});

async function newCheckout(): Promise<CheckoutView> {
  const res = await stack.app.request('/api/checkouts', {
    method: 'POST',
    headers: { authorization: `Bearer ${stack.apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ value: 12.5, order_id: `logs-${process.pid}-${++orders}` }),
  });
  assert.equal(res.status, 201);
  return CheckoutView.parse(await res.json());
}

/** The page's first call for the checkout's payment, and every log line of that request (its req_id). */
async function payFor(checkout: CheckoutView): Promise<{ status: number; code: string | undefined; lines: Line[] }> {
  const path = `/api/checkouts/${checkout.checkout_id}/payment`;
  const res = await stack.app.request(path, { method: 'POST' });
  const body = (await res.json()) as { error?: { code: string } };
  const request = lines.find((line) => line.msg === 'request' && line.path === path);
  assert.ok(request?.req_id, 'the request was logged');
  return { status: res.status, code: body.error?.code, lines: lines.filter((line) => line.req_id === request.req_id) };
}

const ERROR = 50;
const WARN = 40;

describe('a payment create that fails: one line per transaction', () => {
  test('the partner answers 500 after receiving it: one error line, the outcome unknown, the customer answered 503', async () => {
    const checkout = await newCheckout();
    sandbox.state.faults.add({ kind: 'server_error', rate: 1, path_prefix: PARTNER_PATHS.createPayment, latency_ms: null, status: 500, times: 1 });
    const { status, code, lines: mine } = await payFor(checkout);
    assert.deepEqual([status, code], [503, 'upstream_unavailable']);
    const errors = mine.filter((line) => line.level >= ERROR);
    assert.equal(errors.length, 1, JSON.stringify(mine));
    assert.equal(errors[0]!.msg, 'payment creation outcome unknown: reconcile by transaction_id');
    assert.equal(errors[0]!.partner_may_have_acted, true);
    assert.match(errors[0]!.customer ?? '', /answered 503/);
    // The transaction the sandbox received is the one named.
    const sent = [...sandbox.state.payments.values()].map((p) => p.transactionId);
    assert.ok(errors[0]!.transaction_id && !sent.includes(errors[0]!.transaction_id), 'the 500 created nothing in the sandbox; the line names our id');
    assert.equal(mine.find((line) => line.msg === 'request')?.level, WARN, 'the 503 request line is a warning');
  });

  test('a create that works logs no failure (the check above can tell)', async () => {
    const { status, lines: mine } = await payFor(await newCheckout());
    assert.equal(status, 201);
    assert.equal(mine.filter((line) => line.level >= WARN).length, 0, JSON.stringify(mine.filter((line) => line.level >= WARN)));
  });

  test('the partner refuses connections (its port closed): one warn line per create, no error line, the customer answered 503', async () => {
    // Logged in and the tenant known (the creates above), then the partner goes away.
    const checkouts = [await newCheckout(), await newCheckout()];
    await sandbox.close();
    // Kept-alive connections the sandbox closed are dropped by the client as it notices (a request
    // written on one first is reset: it may have been read); reads until the port refuses outright.
    for (let i = 0; i < 20; i++) {
      const error = (await stack.partner.getPayment('settle').catch((e: unknown) => e)) as Error;
      if (/ECONNREFUSED/.test(error.message)) break;
    }
    for (const checkout of checkouts) {
      const { status, code, lines: mine } = await payFor(checkout);
      assert.deepEqual([status, code], [503, 'upstream_unavailable']);
      assert.deepEqual(
        mine.filter((line) => line.level >= ERROR),
        [],
        'no error line',
      );
      const failures = mine.filter((line) => line.msg === 'payment not created: the request never reached the partner service');
      assert.equal(failures.length, 1, JSON.stringify(mine));
      assert.equal(failures[0]!.level, WARN);
      assert.equal(failures[0]!.partner_may_have_acted, false);
      assert.match(failures[0]!.customer ?? '', /answered 503/);
      assert.ok(failures[0]!.transaction_id, 'named by its transaction_id');
      assert.equal(mine.length, 2, `the failure and the request, nothing else: ${JSON.stringify(mine)}`);
    }
  });
});
