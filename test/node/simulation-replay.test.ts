/**
 * A simulation's failure replays alone (test/sim/run.ts): the seed, path and replay path it reports
 * run that one shrunk counterexample again, with the same steps and the same violation. The failure
 * is made by a check of the test's own (CheckOptions.own), so that it does not wait for a defect.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Sim } from '../sim/harness.ts';
import { runSimulation } from '../sim/run.ts';

/** Fails any run that opens a third checkout (every run starts with two). */
const own = (sim: Sim) => (sim.checkouts.length > 2 ? `a run opened checkout number ${sim.checkouts.length}` : null);

test('a failure is replayed alone from the seed, path and replay path it reports, with the same steps and violation', async () => {
  const options = { seed: 4101, runs: 60, maxSteps: 6, checks: { own } };
  const first = await runSimulation(options);
  assert.equal(first.ok, false, 'some run opens a third checkout');
  assert.ok(first.replay, 'a failure says how to replay it');
  assert.equal(first.replay.seed, 4101);
  assert.match(first.replay.path, /^\d+(:\d+)+$/, 'the path of a shrunk counterexample');
  assert.ok(first.replay.replayPath, "the steps' replay path");
  assert.match(first.violation ?? '', /a run opened checkout number 3/);
  const again = await runSimulation({ ...options, ...first.replay });
  assert.equal(again.ok, false);
  assert.deepEqual(again.steps, first.steps);
  assert.equal(again.violation, first.violation);
});
