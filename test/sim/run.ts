/**
 * Runs the simulation: fast-check draws a run's partner behaviour and its steps from the seed,
 * every step runs against a fresh proxy (Sim), the invariants are checked after each, and the end
 * of the run heals everything and checks liveness. A failure is shrunk to the shortest list of
 * steps that still fails, and reported with its seed and path, which replay it exactly.
 */
import fc from 'fast-check';
import { BEHAVIOURS, commandArbitraries, configArbitrary, heal, newCheckout, type BehaviourName, type RunConfig, type SimContext } from './commands.ts';
import { Sim } from './harness.ts';
import { FinalMemory, SimViolationError, checkEnd, checkOwn, checkStep, counts, type CheckOptions } from './invariants.ts';

export interface SimulationOptions {
  seed: number;
  runs: number;
  /** fast-check's path of a failure, to replay it alone (with its replayPath: see SimulationReport.replay). */
  path?: string | undefined;
  /**
   * The steps' replay path of that failure (fast-check's commands shrink only among the steps a run
   * ran, which a replay knows from this, not from running them): without it a path deeper than the
   * first shrink cannot be followed ("Unable to replay, got wrong path").
   */
  replayPath?: string | undefined;
  /** Behaviours a run may draw (default all). */
  behaviours?: readonly BehaviourName[];
  /** Steps per run at most. */
  maxSteps?: number;
  checks?: Partial<CheckOptions>;
  /** Called after each run (a progress line). */
  onRun?: (done: number) => void;
  /** Keep each passing run's trace (its steps, requests, deliveries and stored rows) in the report. */
  trace?: boolean;
}

export interface SimulationReport {
  ok: boolean;
  runs: number;
  counts: Record<string, number>;
  /** fast-check's report of the failure: seed, path, the shrunk counterexample. */
  failure?: string;
  /** What replays the shrunk failure alone: `runSimulation({...options, ...replay})`, or main.ts's --seed, --path and --replay-path. */
  replay?: { seed: number; path: string; replayPath?: string };
  /** The shrunk failing run's steps, one a line, and the violation. */
  steps?: string[];
  violation?: string;
  /** With `trace`: each passing run's trace, in the order run. */
  traces?: string[][];
}

/** The behaviours SIM_BEHAVIOURS names (comma-separated; `all` or unset for all). */
export function behavioursFrom(text: string | undefined): BehaviourName[] {
  if (!text || text.trim() === '' || text.trim() === 'all') return [...BEHAVIOURS];
  const names = text.split(',').map((s) => s.trim());
  for (const name of names)
    if (!(BEHAVIOURS as readonly string[]).includes(name)) throw new Error(`unknown behaviour ${name}: one of ${BEHAVIOURS.join(', ')}`);
  return names as BehaviourName[];
}

/** A step that never ends is a deadlock of the proxy (or the sim): real time only detects it, never decides anything. */
async function stepWithin(step: Promise<void>, label: string): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const stuck = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`step ${label} did not end within ${STEP_LIMIT_MS / 1000} s (a deadlock)`)), STEP_LIMIT_MS);
  });
  try {
    await Promise.race([step, stuck]);
  } finally {
    clearTimeout(timer);
  }
}

const STEP_LIMIT_MS = 10_000;

/** One run: its config and steps, against a fresh proxy. Throws on a violation. */
export async function runOne(
  config: RunConfig,
  commands: Iterable<fc.AsyncCommand<object, SimContext>>,
  checks: CheckOptions,
  traces?: string[][],
): Promise<Sim> {
  const sim = new Sim(config, traces !== undefined);
  const memory = new FinalMemory();
  await sim.start();
  try {
    const context: SimContext = { sim, memory };
    // Every run starts with two checkouts, so short runs (and shrunk ones) have something to pay.
    sim.log.push('newCheckout(2550, false, 0)', 'newCheckout(1000, true, 0)');
    await newCheckout(context, 2550, false, 0);
    await newCheckout(context, 1000, true, 0);
    await checkStep(sim, memory);
    checkOwn(sim, checks);
    for (const cmd of commands) {
      await stepWithin(cmd.run({}, context), String(cmd));
      await checkStep(sim, memory);
      checkOwn(sim, checks);
    }
    sim.log.push('heal');
    await stepWithin(heal(sim), 'heal');
    await checkStep(sim, memory);
    await checkEnd(sim, memory, checks);
    if (traces && sim.trace) {
      sim.dumpStore();
      traces.push([...sim.log, ...sim.trace]);
    }
    if (process.env.SIM_TRACE) console.log(`run ok: ${JSON.stringify(config)}\n  ${sim.log.join('\n  ')}`);
    return sim;
  } catch (error) {
    if (error instanceof SimViolationError || error instanceof Error) {
      (error as Error & { simLog?: string[]; simConfig?: RunConfig }).simLog = [...sim.log];
      if (process.env.SIM_TRACE) console.log(`run failed: ${(error as Error).message}\n  ${sim.log.join('\n  ')}\nerror lines:\n${sim.errors.join('')}`);
      (error as Error & { simConfig?: RunConfig }).simConfig = config;
    }
    throw error;
  } finally {
    await sim.close();
  }
}

export async function runSimulation(options: SimulationOptions): Promise<SimulationReport> {
  const enabled = new Set(options.behaviours ?? BEHAVIOURS);
  const checks: CheckOptions = { overpaid: options.checks?.overpaid ?? true, own: options.checks?.own };
  const maxSteps = options.maxSteps ?? 40;
  for (const key of Object.keys(counts) as (keyof typeof counts)[]) counts[key] = 0;
  let done = 0;
  const traces: string[][] | undefined = options.trace ? [] : undefined;
  let last: { error: Error & { simLog?: string[] }; config: RunConfig } | null = null;
  const property = fc.asyncProperty(
    configArbitrary(enabled),
    fc.commands(commandArbitraries(enabled), { maxCommands: maxSteps, size: 'max', ...(options.replayPath ? { replayPath: options.replayPath } : {}) }),
    async (config, commands) => {
      try {
        await runOne(config, commands, checks, traces);
      } catch (error) {
        last = { error: error as Error & { simLog?: string[] }, config };
        throw error;
      } finally {
        options.onRun?.(++done);
      }
    },
  );
  const details = await fc.check(property, {
    seed: options.seed,
    numRuns: options.runs,
    ...(options.path ? { path: options.path } : {}),
    endOnFailure: false,
  });
  const report: SimulationReport = { ok: !details.failed, runs: done, counts: { ...counts }, ...(traces ? { traces } : {}) };
  if (details.failed) {
    report.failure = fc.defaultReportMessage(details) ?? 'failed';
    if (details.counterexamplePath) {
      // The steps' replayPath is in their printed form only (fast-check's `/*replayPath="…"*/`).
      const replayPath = /replayPath="([^"]*)"/.exec(fc.stringify(details.counterexample?.[1]))?.[1];
      report.replay = { seed: details.seed, path: details.counterexamplePath, ...(replayPath ? { replayPath } : {}) };
    }
    // The last failure fast-check saw is the shrunk one it reports.
    const failing = last as { error: Error & { simLog?: string[] }; config: RunConfig } | null;
    if (failing) {
      report.steps = [`config ${JSON.stringify(failing.config)}`, ...(failing.error.simLog ?? [])];
      report.violation = failing.error.message;
    }
    if (details.counterexample) {
      // Replay the shrunk counterexample once more so its steps and violation are the reported ones.
      const [config, commands] = details.counterexample;
      try {
        await runOne(config, commands, checks);
      } catch (error) {
        const e = error as Error & { simLog?: string[] };
        report.steps = [`config ${JSON.stringify(config)}`, ...(e.simLog ?? [])];
        report.violation = e.message;
      }
    }
  }
  return report;
}
