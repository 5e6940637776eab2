/**
 * The simulation is deterministic by construction: the proxy takes its time, timers, ids and jitter
 * from the run (createApp's `runtime`), so one seed gives one trace (every request and its answer,
 * every delivery, every stored row), and nothing on a simulated path reads the real clock.
 */
import assert from 'node:assert/strict';
import { mock, test } from 'node:test';
import { BEHAVIOURS } from '../sim/commands.ts';
import { runSimulation, type SimulationOptions } from '../sim/run.ts';

const OPTIONS: SimulationOptions = { seed: 3707, runs: 12, behaviours: [...BEHAVIOURS], trace: true };

test('one seed, one trace: two simulations of the same seed record the same requests, answers, deliveries and rows', async () => {
  const first = await runSimulation(OPTIONS);
  const second = await runSimulation(OPTIONS);
  assert.equal(first.ok, true, first.violation);
  assert.equal(second.ok, true, second.violation);
  assert.equal(first.traces?.length, OPTIONS.runs);
  const lines = first.traces.reduce((n, trace) => n + trace.length, 0);
  assert.ok(lines > 200, `a trace worth comparing (${lines} lines)`);
  for (const [i, trace] of first.traces.entries()) assert.deepEqual(second.traces![i], trace, `run ${i + 1} differs`);
});

test('no record of a simulated run carries the real clock: with it frozen in 2091, nothing stored, answered or delivered says 2091', async (t) => {
  const far = Date.UTC(2091, 6, 1);
  mock.timers.enable({ apis: ['Date'], now: far });
  t.after(() => mock.timers.reset());
  const report = await runSimulation({ ...OPTIONS, seed: 3708 });
  assert.equal(report.ok, true, report.violation);
  // Epoch milliseconds or seconds within a year of the frozen clock, or an ISO date of its year.
  const nearFar = (n: number) => Math.abs(n - far) < 366 * 86_400_000 || Math.abs(n - far / 1000) < 366 * 86_400;
  for (const trace of report.traces!)
    for (const line of trace) {
      assert.ok(!line.includes('2091-'), `the real clock leaked into: ${line.slice(0, 300)}`);
      for (const digits of line.match(/\d{10,13}/g) ?? []) assert.ok(!nearFar(Number(digits)), `the real clock (${digits}) leaked into: ${line.slice(0, 300)}`);
    }
});
