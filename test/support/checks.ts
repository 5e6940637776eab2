/**
 * What many suites check the same way: a wait that is a guard (never a timing), a rejection that
 * must be a PartnerError, and the dev stack's control API (its sandbox under /sandbox).
 */
import assert from 'node:assert/strict';
import type { DevStack } from '../../server/dev-stack.ts';
import { PartnerError } from '../../server/partner/errors.ts';

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

/** The PartnerError `promise` rejects with; fails when it resolves or rejects with anything else. */
export async function rejection(promise: Promise<unknown>): Promise<PartnerError> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof PartnerError, `a PartnerError, got ${String(error)}`);
    return error;
  }
  assert.fail('expected a rejection');
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

/**
 * Makes every status code of a dev stack prove itself (domain/status-numbering.ts), as a partner's
 * first hours would: a new payment verifies pending, one paid in time approved, and one the sandbox
 * cancels an hour past its expiry canceled. Moves the sandbox clock past that hour.
 */
export async function verifyStatusCodes(stack: DevStack): Promise<void> {
  const { payments, numbering } = stack.pix;
  const paid = await payments.create({ value: 1 });
  const canceled = await payments.create({ value: 1 });
  await stackControl(stack, 'POST', `/payments/${encodeURIComponent(paid.reference)}/pay`);
  await payments.confirm(paid.reference);
  await waitFor('the approved code verified', () => numbering.report().codes.approved === 'verified');
  const now = Date.parse((await stackControl(stack, 'GET', '/clock')).now);
  const hourPast = Date.parse(canceled.expires_at) + 3600_000;
  await stackControl(stack, 'POST', '/clock/advance', { seconds: Math.ceil((hourPast - now) / 1000) + 1 });
  await payments.confirm(canceled.reference);
  await waitFor('every status code verified', () => numbering.report().state === 'verified');
}
