/**
 * /ready's answer over time (domain/readiness.ts), on a fake clock, with a store whose failures are
 * switched on and off (a fault, the only fake): a ready answer is kept at most its cache time and
 * dropped at the first store failure; a failure is never kept, so the store's return shows at the next
 * probe; a kept mismatch of a settling status code fails the `status_codes` check.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { readinessCheck } from '../../../server/domain/readiness.ts';
import type { StatusNumbering } from '../../../server/domain/numbering/status-numbering.ts';
import type { PartnerClient } from '../../../server/partner/client.ts';
import { countingErrors, storeErrors } from '../../../server/store/errors.ts';
import { StoreError, type Store } from '../../../server/store/store.ts';

/** A store with a ping and two reads, failing while `down` (its failures counted, as a real store's are: store/errors.ts). */
function faultyStore() {
  const state = { down: false, pings: 0 };
  const errors = storeErrors((error) => error as Error);
  const fail = () => {
    if (state.down) throw errors.convert(new StoreError('the database at test cannot be reached (ECONNREFUSED)', 'ECONNREFUSED'));
  };
  const raw = {
    kind: 'postgres' as const,
    async ping() {
      state.pings++;
      fail();
    },
    payments: {
      async get() {
        fail();
        return null;
      },
      // The returns of the last day, which /ready names: none here.
      async returnsSince() {
        fail();
        return [];
      },
    },
  };
  return { state, store: countingErrors(raw, errors) as unknown as Store };
}

const partner = { getTenant: async () => ({}), getPayment: async () => ({}) } as unknown as PartnerClient;

describe('/ready over time (a fake clock)', () => {
  test('a ready answer is kept at most cacheMs, and dropped at the first store failure anywhere', async () => {
    let now = 1_000;
    const { state, store } = faultyStore();
    const ready = readinessCheck({ store, partner, cacheMs: 1000, deadlineMs: 2000, storeDeadlineMs: 1000, now: () => now });
    assert.equal((await ready()).ready, true);
    assert.equal(state.pings, 1);
    now += 500;
    assert.equal((await ready()).ready, true);
    assert.equal(state.pings, 1, 'kept within cacheMs');
    // The store fails a request's read: the kept answer is not served again.
    state.down = true;
    await assert.rejects(store.payments.get('x'));
    const report = await ready();
    assert.equal(report.ready, false);
    assert.equal(report.checks.store, 'failed');
    assert.equal(state.pings, 2, 'asked again at once, within the cache time');
  });

  test('a failure is never kept: the store back, the next probe is ready, the clock unmoved', async () => {
    let now = 1_000;
    const { state, store } = faultyStore();
    const ready = readinessCheck({ store, partner, cacheMs: 5000, deadlineMs: 2000, now: () => now });
    state.down = true;
    assert.equal((await ready()).ready, false);
    assert.equal((await ready()).ready, false);
    assert.equal(state.pings, 2, 'each probe asks');
    state.down = false;
    now += 1;
    assert.equal((await ready()).ready, true);
  });

  test('probes at once share one check', async () => {
    const { state, store } = faultyStore();
    const ready = readinessCheck({ store, partner, cacheMs: 0, now: () => 0 });
    const answers = await Promise.all([ready(), ready(), ready()]);
    assert.deepEqual(
      answers.map((a) => a.ready),
      [true, true, true],
    );
    assert.equal(state.pings, 1);
  });

  /** The numbering's report with the payments' book in `state` and `codes` (domain/numbering/status-numbering.ts). */
  const numberingWith = (codes: Record<string, string>, problems: string[]) =>
    ({
      report: () => ({
        state: Object.values(codes).includes('mismatch') ? 'mismatch' : 'unverified',
        configured: 'pending=1,approved=2,canceled=3,returned=6',
        codes,
        code_states: [],
        problems,
        transfers: { state: 'unverified', configured: 'pending=1,approved=2,canceled=3', codes: {}, code_states: [], problems: [] },
      }),
    }) as unknown as StatusNumbering;

  test('a kept mismatch of a settling code fails the status_codes check, named as the cause', async () => {
    const { store } = faultyStore();
    const numbering = numberingWith({ pending: 'verified', approved: 'mismatch', canceled: 'unverified' }, [
      'code 2 (approved) is a mismatch: a new payment has status 2',
    ]);
    const report = await readinessCheck({ store, partner, cacheMs: 0, numbering })();
    assert.equal(report.ready, false);
    assert.equal(report.checks.status_codes, 'mismatch');
    assert.equal(report.checks.store, 'ok');
    assert.equal(report.checks.partner, 'ok');
    assert.match(report.cause ?? '', /the partner's approved status code contradicts PIX_STATUS_CODES/);
    assert.ok(report.warnings?.includes('code 2 (approved) is a mismatch: a new payment has status 2'), 'the code named in the warnings');
  });

  test('a mismatch that touches no settling code is a warning, not unready: it stops only what it touches', async () => {
    const { store } = faultyStore();
    const numbering = numberingWith({ pending: 'verified', approved: 'verified', canceled: 'verified', returned: 'mismatch' }, [
      'code 6 (returned) is a mismatch',
    ]);
    const report = await readinessCheck({ store, partner, cacheMs: 0, numbering })();
    assert.equal(report.ready, true);
    assert.equal(report.cause, undefined);
    assert.ok(report.warnings?.includes('code 6 (returned) is a mismatch'));
  });
});
