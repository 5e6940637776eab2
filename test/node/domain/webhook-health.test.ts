/**
 * Partner reads follow the webhooks' health: the rules on a fake clock, then the proxy over the
 * sandbox (real HTTPS) with its notifications arriving, and lost.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { DEFAULTS } from '../../../server/config/index.ts';
import { startDevStack, type DevStack } from '../../../server/dev-stack.ts';
import { WebhookHealth, type ReadMode } from '../../../server/domain/webhooks/health.ts';
import { createLogger } from '../../../server/log.ts';

const HOUR = 3_600_000;

function health() {
  let now = 1_000_000;
  const changes: ReadMode[] = [];
  const lines: string[] = [];
  const log = createLogger({ level: 'info', destination: { write: (line: string) => void lines.push(line) } });
  const h = new WebhookHealth(
    { ...DEFAULTS.partnerReads },
    2000,
    () => now,
    log,
    (mode) => changes.push(mode),
  );
  return {
    h,
    changes,
    lines,
    advance: (ms: number) => (now += ms),
    now: () => now,
  };
}

describe('the webhooks’ health (rules)', () => {
  test('polling until a notification about one of our payments arrives; then the trusted pace, away from expiry and cancellation', () => {
    const { h, changes, advance, now, lines } = health();
    const far = now() + HOUR;
    assert.equal(h.mode(), 'polling');
    assert.equal(h.trusted(far, now()), false, 'no notification yet');
    assert.equal(h.report().reason, 'no notification from the partner yet');
    h.notified('a');
    assert.deepEqual([h.mode(), changes], ['webhooks', ['webhooks']]);
    assert.equal(h.trusted(far, now()), true);
    assert.equal(h.report().fresh_ms, 10_000);
    assert.equal(h.trusted(now() + 30_000, now()), false, 'within a minute of its expiry: the fallback pace');
    assert.equal(h.trusted(now() - HOUR + 30_000, now()), false, 'within a minute of the automatic cancellation, an hour after expiry');
    assert.equal(h.trusted(now() - 30 * 60_000, now()), true, 'expired half an hour ago: a late payment is notified too');
    assert.ok(
      lines.some((line) => line.includes('"reads":"webhooks"')),
      'the change is logged',
    );
    // Nothing for ten minutes: not "arriving" any more.
    advance(DEFAULTS.partnerReads.recentMs + 1);
    assert.equal(h.mode(), 'polling');
    assert.match(h.report().reason, /no notification from the partner in the last 10 min/);
    assert.deepEqual(changes, ['webhooks', 'polling']);
  });

  test('outcomes our reads found first and whose notification never came: three make it poll again', () => {
    const { h, advance } = health();
    h.notified('a');
    for (const ref of ['x', 'y']) h.foundByRead(ref);
    advance(DEFAULTS.partnerReads.graceMs);
    assert.deepEqual([h.mode(), h.report().missed], ['webhooks', 2], 'two are not enough');
    h.foundByRead('z');
    advance(DEFAULTS.partnerReads.graceMs);
    h.notified('b');
    assert.deepEqual([h.mode(), h.report().missed], ['polling', 3]);
    assert.match(h.report().reason, /3 outcomes never notified/);
    // Ten minutes later the evidence is old; notifications still arrive: the trusted pace again.
    advance(DEFAULTS.partnerReads.recentMs + 1);
    h.notified('c');
    assert.deepEqual([h.mode(), h.report().missed], ['webhooks', 0]);
  });

  test('late notifications count, on-time ones do not; a read that follows its notification is no evidence', () => {
    const { h, advance } = health();
    h.notified('a');
    // Our read found it first; its notification came 1 s later: on time.
    h.foundByRead('p1');
    advance(1000);
    h.notified('p1');
    // The notification came first, then a read (its confirmation) recorded the outcome: not found first.
    h.notified('p2');
    h.foundByRead('p2');
    advance(DEFAULTS.partnerReads.graceMs + 1);
    assert.deepEqual([h.report().late, h.report().missed, h.mode()], [0, 0, 'webhooks']);
    for (const ref of ['l1', 'l2', 'l3']) {
      h.foundByRead(ref);
      advance(DEFAULTS.partnerReads.lateMs + 1);
      h.notified(ref);
    }
    assert.deepEqual([h.report().late, h.mode()], [3, 'polling']);
  });
});

describe('the webhooks’ health (the proxy over the sandbox)', () => {
  let stack: DevStack;
  before(async () => {
    stack = await startDevStack({ logger: createLogger({ level: 'silent' }) });
  });
  after(async () => {
    await stack.close();
  });
  const readsMode = () => stack.pix.reads.report();
  const create = async () =>
    (
      (await (await fetch(`${stack.apiUrl}/payments`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"value":4}' })).json()) as {
        reference: string;
      }
    ).reference;
  let reads = 0;
  const counting = () => {
    const original = stack.partner.getPayment.bind(stack.partner);
    stack.partner.getPayment = (reference) => {
      reads++;
      return original(reference);
    };
  };

  test('notifications arriving: a pending payment is asked about at most every 10 s; lost ones: every 2 s again', async () => {
    counting();
    assert.equal(readsMode().mode, 'polling', 'nothing heard yet');
    // A payment paid: its notification arrives and is processed.
    const first = await create();
    stack.sandbox.state.pay(stack.sandbox.state.payments.get(first)!);
    for (let i = 0; i < 200 && !(await stack.store.payments.get(first))?.final; i++) await new Promise((resolve) => setTimeout(resolve, 25));
    assert.equal(readsMode().mode, 'webhooks');

    const pending = await create();
    const read = async () => ((await (await fetch(`${stack.apiUrl}/payments/${pending}`)).json()) as { status: string }).status;
    const before = reads;
    for (let second = 0; second < 9; second++) {
      stack.sandbox.state.clock.advance(1000);
      assert.equal(await read(), 'pending');
    }
    assert.equal(reads - before, 0, 'nine reads over nine seconds: the stored status, no partner call');
    stack.sandbox.state.clock.advance(1500);
    assert.equal(await read(), 'pending');
    assert.equal(reads - before, 1, 'past 10 s: one call');

    // The partner stops notifying: outcomes found by our own reads, never notified.
    stack.sandbox.state.faults.add({ kind: 'drop_webhook', rate: 1, path_prefix: null, status: null, latency_ms: null });
    for (let i = 0; i < 3; i++) {
      const reference = await create();
      stack.sandbox.state.pay(stack.sandbox.state.payments.get(reference)!);
      stack.sandbox.state.clock.advance(DEFAULTS.partnerReads.trustedMs);
      assert.equal(((await (await fetch(`${stack.apiUrl}/payments/${reference}`)).json()) as { status: string }).status, 'paid');
    }
    stack.sandbox.state.clock.advance(DEFAULTS.partnerReads.graceMs);
    const report = readsMode();
    assert.deepEqual([report.mode, report.missed], ['polling', 3], JSON.stringify(report));
    const now = reads;
    stack.sandbox.state.clock.advance(2000);
    assert.equal(await read(), 'pending');
    assert.equal(reads - now, 1, 'polling again: a read older than 2 s asks the partner');
  });
});
