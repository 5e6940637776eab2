/**
 * `npm run sim -- --runs N --seed S [--path P --replay-path R] [--behaviours a,b] [--steps K] [--no-overpaid]`:
 * the long run. Prints how many times each invariant was checked and, on a failure, the shortest list
 * of steps fast-check shrank it to and the command that replays it alone (its seed, path and replay path).
 */
import { parseArgs } from 'node:util';
import { BEHAVIOURS } from './commands.ts';
import { INVARIANTS, type InvariantKey } from './invariants.ts';
import { behavioursFrom, runSimulation } from './run.ts';

const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '100' },
    seed: { type: 'string' },
    path: { type: 'string' },
    'replay-path': { type: 'string' },
    behaviours: { type: 'string' },
    steps: { type: 'string', default: '40' },
    'no-overpaid': { type: 'boolean', default: false },
    help: { type: 'boolean', default: false },
  },
});

if (values.help) {
  console.log(`npm run sim -- [--runs N] [--seed S] [--path P --replay-path R] [--behaviours ${BEHAVIOURS.join(',')}] [--steps K] [--no-overpaid]`);
  process.exit(0);
}

const seed = values.seed !== undefined ? Number(values.seed) : Date.now() % 2 ** 31;
const runs = Number(values.runs);
const behaviours = behavioursFrom(values.behaviours ?? process.env.SIM_BEHAVIOURS);
const started = Date.now();
console.log(`simulation: seed ${seed}, ${runs} runs, up to ${values.steps} steps each, behaviours ${behaviours.join(',')}`);
const report = await runSimulation({
  seed,
  runs,
  path: values.path,
  replayPath: values['replay-path'],
  behaviours,
  maxSteps: Number(values.steps),
  checks: { overpaid: !values['no-overpaid'] && process.env.SIM_OVERPAID !== '0' },
  onRun: (done) => {
    if (done % 100 === 0) console.log(`  ${done} runs (${((Date.now() - started) / 1000).toFixed(0)} s)`);
  },
});
console.log(`\n${report.runs} runs in ${((Date.now() - started) / 1000).toFixed(1)} s. Invariants checked:`);
for (const [key, count] of Object.entries(report.counts)) console.log(`  ${String(count).padStart(10)}  ${INVARIANTS[key as InvariantKey]}`);
if (!report.ok) {
  console.log(`\nFAILED\n${report.failure}\n\nShortest run (${(report.steps?.length ?? 1) - 1} steps):`);
  for (const step of report.steps ?? []) console.log(`  ${step}`);
  console.log(`\n${report.violation}`);
  if (report.replay) {
    const { seed: s, path, replayPath } = report.replay;
    const rest = [`--behaviours ${behaviours.join(',')}`, `--steps ${values.steps}`, values['no-overpaid'] ? '--no-overpaid' : ''].filter(Boolean);
    console.log(`\nReplay it alone: npm run sim -- --seed ${s} --path ${path}${replayPath ? ` --replay-path '${replayPath}'` : ''} ${rest.join(' ')}`);
  }
  process.exitCode = 1;
}
