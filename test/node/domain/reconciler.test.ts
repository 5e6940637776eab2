/**
 * Partner faults (10% 5xx, timeouts, slow answers) during a run of 200 payments: every one ends in
 * its true state, through webhooks, their confirmations and the reconciler. Real sandbox with its
 * fault injection, frozen clock moved by the test. Then the reconciler's own rules over thousands of
 * payments, with the in-memory partner (no sandbox: it only answers there).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createApp } from '../../../server/app.ts';
import { DEFAULTS } from '../../../server/config/index.ts';
import { startDevStack, type DevStack } from '../../../server/dev-stack.ts';
import { createLogger } from '../../../server/log.ts';
import type { PartnerClient } from '../../../server/partner/client.ts';
import { PARTNER_STATUS } from '../../../server/partner/wire.ts';
import { createClock } from '../../../server/sandbox/clock.ts';
import { CANCELED_MARGIN_MS } from '../../../server/domain/numbering/status-numbering.ts';
import { startSandbox, type RunningSandbox } from '../../../server/sandbox/server.ts';
import { openSqliteStore } from '../../../server/store/sqlite/sqlite-store.ts';
import { stackControl } from '../../support/checks.ts';
import { memoryPartner } from '../../support/memory-partner.ts';
import { paymentRecord } from '../../support/records.ts';

const T0 = Date.UTC(2030, 0, 1);
let sandbox: RunningSandbox;
let stack: DevStack;

const control = (method: string, path: string, body?: unknown) => stackControl(stack, method, path, body);

before(async () => {
  sandbox = await startSandbox({ clock: createClock(() => T0), settleIntervalMs: 0, webhooks: { timeoutMs: 5000, retryDelayMs: 5 }, faultSeed: 11 });
  stack = await startDevStack({
    sandbox,
    background: false,
    partnerTimeoutMs: 1000,
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
  await control('POST', '/faults', { kind: 'latency', rate: 0.05, path_prefix: reads, latency_ms: 1500 });
  await control('POST', '/faults', { kind: 'latency', rate: 0.1, path_prefix: reads, latency_ms: 50 });

  // 100 paid, 100 left to the service's automatic cancellation (the spec's only one: an hour past
  // expiry; a cancellation before it would prove the status numbering wrong).
  for (const [i, ref] of refs.entries()) {
    if (i < 100) await control('POST', `/payments/${ref}/pay`);
  }
  // Let every webhook arrive (their confirmations may fail under the faults: the reconciler heals).
  await sandbox.state.webhooks.idle();
  await stack.pix.processor.idle();

  // Past the latest plausible cancellation (proofWindows: the longer of the expiration and the default hour, the hour, a margin), where a canceled code first proves itself.
  await control('POST', '/clock/advance', { seconds: 2 * 3600 + CANCELED_MARGIN_MS / 1000 + 120 });
  let passes = 0;
  for (;;) {
    const open = await stack.store.payments.nonFinal(1000);
    if (open.length === 0) break;
    assert.ok(++passes <= 50, `still open after 50 passes: ${open.length}`);
    // A pass's bound, or an hour: past the cancellation a payment whose reads failed is parked and read
    // again only hourly (DEFAULTS.reconcile.parkedEveryMs), and under these faults some reads fail.
    await control('POST', '/clock/advance', { seconds: Math.max(stack.pix.reconciler.boundMs, DEFAULTS.reconcile.parkedEveryMs) / 1000 });
    await stack.pix.reconciler.runOnce();
  }
  await control('DELETE', '/faults');
  for (const ref of refs) {
    const truth = sandbox.state.payments.get(ref)!.status;
    const record = (await stack.store.payments.get(ref))!;
    assert.equal(record.partnerStatus, truth, `${ref} in its true state`);
    assert.equal(record.final, true);
  }
  const statuses = refs.map((r) => sandbox.state.payments.get(r)!.status);
  assert.equal(statuses.filter((s) => s === 2).length, 100);
  assert.equal(statuses.filter((s) => s === 3).length, 100);
});

describe('reconciler starvation: thousands of undecidable payments', () => {
  const EVERY = 60_000;
  const H = 3_600_000;

  test('5,001 payments whose reads decide nothing never hide a newer one whose webhook was lost; once long past their cancellation they are parked and reported', async () => {
    const store = openSqliteStore({ dataDir: ':memory:' });
    const lines: string[] = [];
    let clock = T0;
    // The partner answers these payments' reads without a status we can read (a fault in the transport): each read decides nothing.
    const undecidable = new Set<string>();
    // No network needed: the reconciler's rules are under test, the partner only answers (test/support/memory-partner.ts).
    const real = memoryPartner({ now: () => T0 });
    const partner: PartnerClient = {
      ...real,
      getPayment: (reference) =>
        undecidable.has(reference)
          ? Promise.resolve({
              externalReference: reference,
              pixKey: null,
              qrCodeUrl: null,
              checkoutUrl: null,
              createdAt: null,
              status: null,
              value: null,
              favoured: null,
            })
          : real.getPayment(reference),
    };
    // No notification URL is registered: the partner's webhooks are lost.
    const app = createApp({
      partner,
      store,
      now: () => clock,
      logger: createLogger({ level: 'warn', destination: { write: (line: string) => void lines.push(line) } }),
      reconcile: { everyMs: EVERY },
    });
    try {
      for (let n = 0; n < 5_001; n++) {
        const reference = `undecidable-${String(n).padStart(5, '0')}`;
        undecidable.add(reference);
        await store.payments.insert(paymentRecord(reference, T0 - 30 * 60_000 + n));
      }
      // A newer payment, paid, whose webhook never comes.
      const newer = await app.pix.payments.create({ value: 3 });
      real.setStatus(newer.reference, PARTNER_STATUS.approved);
      assert.equal((await real.getPayment(newer.reference)).status?.code, 2, 'paid at the partner');

      clock += EVERY + 1_000;
      let passes = 0;
      while (!(await store.payments.get(newer.reference))?.final) {
        assert.ok(++passes <= 2, `the newer payment still open after ${passes - 1} passes`);
        await app.pix.reconciler.runOnce();
        clock += 5_000;
      }
      assert.equal((await store.payments.get(newer.reference))?.partnerStatus, 2, 'found paid');
      // Every undecidable one was read, each once, and goes to the back of the line.
      const report = await app.pix.reconciler.runOnce();
      assert.equal(report.checked, 0, 'nothing due 10 s after every payment was read');

      // Long past their automatic cancellation, still undecided: parked, read hourly, reported.
      clock = T0 + 30 * 60_000 + H + 16 * 60_000;
      // Their last read is over an hour old: read once more, a batch (5,000) a pass.
      assert.equal((await app.pix.reconciler.runOnce()).checked, 5_000);
      clock += 5_000;
      assert.equal((await app.pix.reconciler.runOnce()).checked, 1);
      assert.equal(app.pix.reconciler.parkedPayments(), 5_001);
      clock += 5 * 60_000;
      assert.equal((await app.pix.reconciler.runOnce()).checked, 0, 'parked: not read again every minute');
      assert.ok(
        lines.some((line) => line.includes('"parked":5001')),
        'a log line counts them',
      );
      const ready = (await (await app.request('/ready')).json()) as { warnings?: string[] };
      assert.ok(
        ready.warnings?.some((w) => w.startsWith('5001 payments are still open')),
        JSON.stringify(ready.warnings),
      );
      clock += H;
      assert.equal((await app.pix.reconciler.runOnce()).checked, 5_000, 'read again an hour later');
    } finally {
      await app.pix.stop();
      await store.close();
    }
  });
});
