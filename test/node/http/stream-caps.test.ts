/**
 * Caps on open status streams (unauthenticated floods): per client address and per
 * payment, past either 429 `too_many_streams` (the widget then polls: EventSource gives up on any
 * answer but a 200 event stream, test/browser/status.test.ts "falls back to polling when the proxy
 * refuses the stream"). Over real sockets against the sandbox; clients told apart by X-Forwarded-For
 * through one trusted proxy.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ErrorBody } from '../../../src/shared/errors.ts';
import { PaymentView } from '../../../src/shared/contract.ts';
import { startDevStack, type DevStack } from '../../../server/dev-stack.ts';
import { createLogger } from '../../../server/log.ts';
import { StreamSlots } from '../../../server/http/stream-slots.ts';
import { waitFor } from '../../support/checks.ts';

let stack: DevStack;
const open: AbortController[] = [];
before(async () => {
  stack = await startDevStack({ streamsPerClient: 3, streamsPerPayment: 5, trustedProxies: 1, logger: createLogger({ level: 'silent' }) });
});
after(async () => {
  for (const controller of open) controller.abort();
  await stack.close();
});

async function createPayment(): Promise<string> {
  const res = await fetch(`${stack.apiUrl}/payments`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"value":7.5}' });
  assert.equal(res.status, 201);
  return PaymentView.parse(await res.json()).reference;
}

/** Opens a stream of `reference` as `client`; a 200 is held open (its first event read) until aborted. */
async function stream(reference: string, client: string): Promise<{ status: number; code?: string; controller: AbortController }> {
  const controller = new AbortController();
  const res = await fetch(`${stack.apiUrl}/payments/${reference}/events`, { headers: { 'x-forwarded-for': client }, signal: controller.signal });
  if (res.status !== 200) return { status: res.status, code: ErrorBody.parse(await res.json()).error.code, controller };
  open.push(controller);
  const reader = res.body!.getReader();
  await reader.read();
  return { status: 200, controller };
}

describe('open status streams are capped', () => {
  test('per client address: past the cap 429 too_many_streams; another address is not affected; a closed stream frees its place', async () => {
    const references = await Promise.all([1, 2, 3, 4].map(createPayment));
    const held = [];
    for (const reference of references.slice(0, 3)) held.push(await stream(reference, '198.51.100.1'));
    assert.deepEqual(
      held.map((s) => s.status),
      [200, 200, 200],
    );
    const refused = await stream(references[3]!, '198.51.100.1');
    assert.deepEqual([refused.status, refused.code], [429, 'too_many_streams']);
    assert.equal((await stream(references[3]!, '198.51.100.2')).status, 200);
    held[0]!.controller.abort();
    await waitFor('a place freed', async () => {
      const again = await stream(references[3]!, '198.51.100.1');
      return again.status === 200;
    });
  });

  test('per payment: past the cap 429, whatever the address', async () => {
    const reference = await createPayment();
    const held = [];
    for (let i = 0; i < 5; i++) held.push(await stream(reference, `203.0.113.${i + 1}`));
    assert.deepEqual(new Set(held.map((s) => s.status)), new Set([200]));
    const refused = await stream(reference, '203.0.113.99');
    assert.deepEqual([refused.status, refused.code], [429, 'too_many_streams']);
    held[2]!.controller.abort();
    await waitFor('a place freed', async () => (await stream(reference, '203.0.113.99')).status === 200);
  });

  test('a stream refused by its first read (unknown reference) takes no place', async () => {
    for (let i = 0; i < 10; i++) assert.equal((await stream('unknownref', '192.0.2.1')).status, 404);
    const references = await Promise.all([1, 2, 3].map(createPayment));
    for (const reference of references) assert.equal((await stream(reference, '192.0.2.1')).status, 200);
  });
});

describe('StreamSlots', () => {
  test('counts per client and per payment, releases once, 0 is no cap', () => {
    const slots = new StreamSlots({ perClient: 2, perPayment: 3 });
    const a = slots.take('c1', 'p1');
    const b = slots.take('c1', 'p2');
    assert.deepEqual(slots.take('c1', 'p3'), { refused: 'client' });
    assert.ok('release' in a && 'release' in b);
    a.release();
    a.release();
    assert.equal(slots.open('c1'), 1);
    assert.ok('release' in slots.take('c2', 'p2'));
    assert.ok('release' in slots.take('c3', 'p2'));
    assert.deepEqual(slots.take('c4', 'p2'), { refused: 'payment' });
    assert.equal(slots.open(undefined, 'p2'), 3);
    const free = new StreamSlots({ perClient: 0, perPayment: 0 });
    for (let i = 0; i < 1000; i++) assert.ok('release' in free.take('c', 'p'));
  });
});
