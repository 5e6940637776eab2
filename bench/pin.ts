/**
 * Pins the bench's load generator and the server under test to a core each, when there are two or
 * more (BENCH_PIN=0 leaves it to the scheduler): every thread of this process to CPU 0, every thread
 * of `child` (and what it starts later) to CPU 1. Unpinned, the two processes and their helper
 * threads share the cores as the scheduler decides, and the same run varied twofold.
 * True when pinned (taskset, util-linux); false where that is not possible.
 */
import { execFileSync } from 'node:child_process';
import { availableParallelism } from 'node:os';

function pin(pid: number, cpu: number): boolean {
  try {
    execFileSync('taskset', ['--all-tasks', '--cpu-list', '-p', String(cpu), String(pid)], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

export function pinApart(childPid: number): boolean {
  return process.env.BENCH_PIN !== '0' && availableParallelism() >= 2 && pin(process.pid, 0) && pin(childPid, 1);
}
