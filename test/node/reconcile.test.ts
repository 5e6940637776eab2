/**
 * Partner faults (10% 5xx, timeouts, slow answers) during a run of 200 payments: every one ends in
 * its true state, through webhooks, their confirmations and the reconciler. Real sandbox with its
 * fault injection, frozen clock moved by the test.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startDevStack, type DevStack } from '../../server/dev-stack.ts';
import { createLogger } from '../../server/log.ts';
import { createClock } from '../../server/sandbox/clock.ts';
import { startSandbox, type RunningSandbox } from '../../server/sandbox/server.ts';
import { stackControl } from '../support/checks.ts';

const T0 = Date.UTC(2030, 0, 1);
let sandbox: RunningSandbox;
let stack: DevStack;

const control = (method: string, path: string, body?: unknown) => stackControl(stack, method, path, body);

before(async () => {
  sandbox = await startSandbox({ clock: createClock(() => T0), settleIntervalMs: 0, webhooks: { timeoutMs: 5000, retryDelayMs: 5 }, faultSeed: 11 });
  stack = await startDevStack({
    sandbox,
    background: false,
    partnerTimeoutMs: 250,
    staleAfterMs: 60_000,
    watchIntervalMs: 60_000,
    logger: createLogger({ level: 'silent' }),
  });
});
after(async () => {
  await stack.close();
  await sandbox.close();
});

test('200 payments under partner faults all end in their true state', async () => {
  const refs: string[] = [];
  for (let i = 0; i < 200; i += 20)
    refs.push(...(await Promise.all(Array.from({ length: 20 }, async () => (await stack.pix.payments.create({ value: 2 })).reference))));

  // Faults on every partner read from now on: 10% 5xx, 5% no answer (connection cut), 5% slower
  // than the client's deadline (a timeout), 10% slow but in time.
  const reads = '/api/v2/wallet/partner/transactions/';
  await control('POST', '/faults', { kind: 'server_error', rate: 0.1, path_prefix: reads, status: 503 });
  await control('POST', '/faults', { kind: 'drop_connection', rate: 0.05, path_prefix: reads });
  await control('POST', '/faults', { kind: 'latency', rate: 0.05, path_prefix: reads, latency_ms: 400 });
  await control('POST', '/faults', { kind: 'latency', rate: 0.1, path_prefix: reads, latency_ms: 50 });

  // 100 paid, 100 left to the service's automatic cancellation (the spec's only one: an hour past
  // expiry; a cancellation before it would prove the status numbering wrong).
  for (const [i, ref] of refs.entries()) {
    if (i < 100) await control('POST', `/payments/${ref}/pay`);
  }
  // Let every webhook arrive (their confirmations may fail under the faults: the reconciler heals).
  await sandbox.state.webhooks.idle();
  await stack.pix.processor.idle();

  await control('POST', '/clock/advance', { seconds: 2 * 3600 + 120 });
  let passes = 0;
  for (;;) {
    const open = await stack.store.nonFinalPayments(1000);
    if (open.length === 0) break;
    assert.ok(++passes <= 50, `still open after 50 passes: ${open.length}`);
    await control('POST', '/clock/advance', { seconds: stack.pix.reconciler.boundMs / 1000 });
    await stack.pix.reconciler.runOnce();
  }
  await control('DELETE', '/faults');
  for (const ref of refs) {
    const truth = sandbox.state.payments.get(ref)!.status;
    const record = (await stack.store.getPayment(ref))!;
    assert.equal(record.partnerStatus, truth, `${ref} in its true state`);
    assert.equal(record.final, true);
  }
  const statuses = refs.map((r) => sandbox.state.payments.get(r)!.status);
  assert.equal(statuses.filter((s) => s === 2).length, 100);
  assert.equal(statuses.filter((s) => s === 3).length, 100);
});
