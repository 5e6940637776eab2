/**
 * The payout liveness the simulation judges, on the case it once skipped: the partner settles a
 * transfer at once and its notification is handled before the create's answer gave the payout its
 * reference (the transfer is linked by our transaction_id later: server/money/payout-link.ts). With
 * the transfers' setting right and the notification's words heard, the payout ends as the partner
 * says and the merchant is told, once the processor's try again fires as the run's clock moves.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { command, configArbitrary, deliver, type BehaviourName, type RunConfig } from '../sim/commands.ts';
import { runOne } from '../sim/run.ts';

/** A run the liveness check judges: codes (or words), the authenticated intake, a format with words, the transfers' setting right. */
function judgedConfig(statusForm: 'code' | 'word', seed: number): RunConfig {
  const enabled = new Set<BehaviourName>(['payouts', 'interleavings', 'notifications', 'words']);
  const judged = configArbitrary(enabled).filter(({ behaviour: b, twoInstances }) => {
    const ts = b.transferSetting;
    const tc = b.transferCodes;
    return (
      !twoInstances &&
      b.statusForm === statusForm &&
      b.intake === 'secret' &&
      b.notifyFormat !== 'old' &&
      ts.pending[0] === tc.pending &&
      ts.approved[0] === tc.approved &&
      ts.canceled[0] === tc.canceled
    );
  });
  return fc.sample(judged, { seed, numRuns: 1 })[0]!;
}

/**
 * The partner approves the next transfer at once and notifies before answering its create; then the
 * merchant asks for a transfer. `unknownFirst`: the partner's check of it answers 404 once (its
 * notification came before its records had the transfer).
 */
const steps = (unknownFirst = false) => [
  command('fault', ['checkTransfer', 'not_found', unknownFirst ? 1 : 0], async ({ sim }) => {
    if (unknownFirst) sim.world.arm('checkTransfer', 'not_found');
  }),
  command('settleDuringCreate', [0], async ({ sim }) => {
    sim.world.settleDuringCreate = (notice) => deliver(sim, notice.body, true, 0);
  }),
  command('transfer', [500, false], async ({ sim }) => {
    const res = await sim.api(0, 'POST', '/api/transfers', { value: 5, pix_key: 'supplier@example.com' }, { 'Idempotency-Key': sim.newKey() });
    assert.equal(res.status, 201, JSON.stringify(res.body));
  }),
];

for (const [statusForm, seed, unknownFirst] of [
  ['code', 1, false],
  ['code', 2, false],
  ['word', 3, false],
  ['code', 1, true],
  ['word', 3, true],
] as const) {
  test(`a transfer notified before its create answered settles its payout (${statusForm}s, seed ${seed}${unknownFirst ? ', its first check answered 404' : ''})`, async () => {
    const config = judgedConfig(statusForm, seed);
    // runOne heals the run and judges every payout's liveness: it throws if this one is left pending.
    const sim = await runOne(config, steps(unknownFirst), { overpaid: true });
    const [reference] = [...sim.world.settledDuringCreate];
    assert.ok(reference, 'the partner settled a transfer during its create');
    assert.equal(sim.world.transfers.get(reference)?.status, 'approved');
    const told = [...sim.receiver.events.values()].filter((event) => event.reference === reference);
    assert.deepEqual(
      told.map((event) => event.type),
      ['transfer.approved'],
    );
  });
}
