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
