/**
 * A proxy as a child process (`node --import tsx server/main.ts`), for the tests and benches that run
 * it as an operator does: started with its environment, each line it writes handed on, ready once
 * /health answers.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';

/** Whether the process runs: started, and not exited yet. */
export const alive = (c: ChildProcess | null): boolean => c !== null && c.exitCode === null && c.signalCode === null;

/** `node --import tsx server/main.ts` on `port` with `env`; each line it writes (stdout: its JSON log lines; stderr: its errors) goes to `onLine`. */
export function spawnProxy(port: number, env: Record<string, string | undefined>, onLine: (line: string, from: 'stdout' | 'stderr') => void): ChildProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', 'server/main.ts'], {
    cwd: process.cwd(),
    env: { ...env, PORT: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  for (const [from, output] of [
    ['stdout', child.stdout],
    ['stderr', child.stderr],
  ] as const) {
    let partial = '';
    output.setEncoding('utf8');
    output.on('data', (chunk: string) => {
      const complete = (partial + chunk).split('\n');
      partial = complete.pop()!;
      for (const line of complete) onLine(line, from);
    });
  }
  return child;
}

/** Resolves once the instance's /health answers 200; throws when it exits first or takes over 30 s (`tail`: what to add to the error). */
export async function untilHealthy(name: string, origin: string, child: ChildProcess, tail: () => string = () => ''): Promise<void> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (!alive(child)) throw new Error(`instance ${name} exited (${child.exitCode ?? child.signalCode}) while starting${tail()}`);
    try {
      if ((await fetch(`${origin}/health`)).ok) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`instance ${name} did not answer /health within 30 s${tail()}`);
    await sleep(50);
  }
}
