/**
 * What many suites check the same way: a wait that is a guard (never a timing), a rejection that
 * must be a PartnerError, an answer that must be the shared error body, the dev stack's control API
 * (its sandbox under /sandbox), and a checkout paid there as a customer would pay it.
 */
import { CANCELED_MARGIN_MS } from '../../server/domain/numbering/status-numbering.ts';
import assert from 'node:assert/strict';
import { CheckoutView, PaymentView } from '../../src/shared/contract.ts';
import { ErrorBody } from '../../src/shared/errors.ts';
import type { DevStack } from '../../server/dev-stack.ts';
import { PartnerError } from '../../server/partner/errors.ts';

/** Counts the dev stack's reads of payments at the partner from now on. */
export function countReads(stack: DevStack): { calls: () => number } {
  let calls = 0;
  const read = stack.partner.getPayment.bind(stack.partner);
  stack.partner.getPayment = (reference) => {
    calls++;
    return read(reference);
  };
  return { calls: () => calls };
}

/** Resolves with the first truthy value `check` gives; fails only if none comes within the guard. */
export async function waitFor<T>(what: string, check: () => T | undefined | false | Promise<T | undefined | false>, guardMs = 20_000): Promise<T> {
  const deadline = Date.now() + guardMs;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) assert.fail(`gave up waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** The error of class `kind` that `promise` rejects with; fails when it resolves or rejects with anything else. */
export async function rejectsWith<E extends Error>(promise: Promise<unknown>, kind: abstract new (...args: never[]) => E): Promise<E> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof kind, `a ${kind.name}, got ${String(error)}`);
    return error;
  }
  assert.fail(`expected a ${kind.name}`);
}

/** The PartnerError `promise` rejects with; fails when it resolves or rejects with anything else. */
export const rejection = (promise: Promise<unknown>): Promise<PartnerError> => rejectsWith(promise, PartnerError);

/** The error of an answer read as `{res, json}`: the status and code expected, the shared body, a message in words. */
export function expectError(result: { res: Response; json: unknown }, status: number, code: string): ErrorBody['error'] {
  assert.equal(result.res.status, status, JSON.stringify(result.json));
  const body = ErrorBody.parse(result.json);
  assert.equal(body.error.code, code);
  assert.ok(body.error.message.length > 0, 'an error message in words');
  return body.error;
}

/** The dev stack's control API, JSON in and out, a 2xx required. */
export async function stackControl(stack: DevStack, method: string, path: string, body?: unknown): Promise<any> {
  const res = await fetch(`${stack.url}/sandbox/_sandbox${path}`, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  assert.ok(res.ok, `${method} ${path}: ${res.status} ${text}`);
  return text ? JSON.parse(text) : undefined;
}

let paidOrders = 0;

/**
 * A checkout of `value` reais created by the merchant's server (API key) with a new order id that
 * starts with `orderPrefix`, its payment paid in the sandbox as a customer would pay it, and known
 * paid to the proxy: answers the checkout's id.
 */
export async function paidCheckout(stack: DevStack, value: number, orderPrefix = 'paid'): Promise<string> {
  const orderId = `${orderPrefix}-${process.pid}-${++paidOrders}`;
  const merchant = { authorization: `Bearer ${stack.apiKey}` };
  const created = await fetch(`${stack.apiUrl}/checkouts`, {
    method: 'POST',
    headers: { ...merchant, 'content-type': 'application/json' },
    body: JSON.stringify({ value, order_id: orderId }),
  });
  const text = await created.text();
  assert.equal(created.status, 201, text);
  const id = CheckoutView.parse(JSON.parse(text)).checkout_id;
  const payment = PaymentView.parse(await (await fetch(`${stack.apiUrl}/checkouts/${id}/payment`, { method: 'POST' })).json());
  await stackControl(stack, 'POST', `/payments/${encodeURIComponent(payment.reference)}/pay`);
  await waitFor('the checkout paid', async () => {
    const read = await fetch(`${stack.apiUrl}/checkouts/${id}`, { headers: merchant });
    return CheckoutView.parse(await read.json()).status === 'paid';
  });
  return id;
}

/**
 * Makes every status code of a dev stack prove itself (domain/numbering/status-numbering.ts), as a partner's
 * first hours would: a new payment verifies pending, one paid in time approved, and one the sandbox
 * cancels an hour past its expiry canceled, read well past that hour (counted from the longer of the
 * expiration asked and the spec's default, plus a margin: proofWindows). Moves the sandbox clock past it.
 */
export async function verifyStatusCodes(stack: DevStack): Promise<void> {
  const { payments, numbering } = stack.pix;
  const paid = await payments.create({ value: 1 });
  const canceled = await payments.create({ value: 1 });
  await stackControl(stack, 'POST', `/payments/${encodeURIComponent(paid.reference)}/pay`);
  await payments.reads.confirm(paid.reference);
  await waitFor('the approved code verified', () => numbering.report().codes.approved === 'verified');
  const now = Date.parse((await stackControl(stack, 'GET', '/clock')).now);
  // Past the latest plausible cancellation: the longer of the expiration asked and the default (3600 s), the hour, the margin.
  const hourPast = Date.parse(canceled.expires_at) + 2 * 3600_000 + CANCELED_MARGIN_MS;
  await stackControl(stack, 'POST', '/clock/advance', { seconds: Math.ceil((hourPast - now) / 1000) + 1 });
  await payments.reads.confirm(canceled.reference);
  await waitFor('every status code verified', () => numbering.report().state === 'verified');
}
