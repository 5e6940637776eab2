/**
 * What a bench reads about the processes it started, from Linux's /proc: CPU time (user + system,
 * and for a parent such as Postgres's postmaster, its reaped children's too), resident memory, a
 * process's children; and pinning a set of processes to CPUs (taskset, as bench/pin.ts does for one).
 * Off Linux the readings are NaN and nothing is pinned.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';

let ticksPerSecond: number | null = null;
/** Clock ticks per second of /proc's CPU times (`getconf CLK_TCK`, 100 on Linux as built). */
function clockTicks(): number {
  if (ticksPerSecond === null) {
    try {
      ticksPerSecond = Number(execFileSync('getconf', ['CLK_TCK']).toString().trim()) || 100;
    } catch {
      ticksPerSecond = 100;
    }
  }
  return ticksPerSecond;
}

/** The fields of /proc/<pid>/stat after the command name (field 3, the state, is index 0); null when gone. */
function statFields(pid: number): string[] | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return null;
  }
}

/** CPU seconds a process used (user + system); `withReaped` adds its exited, waited-for children's. NaN when gone. */
export function cpuSeconds(pid: number, withReaped = false): number {
  const fields = statFields(pid);
  if (!fields) return NaN;
  // utime, stime, cutime, cstime: fields 14 to 17 of proc(5).
  const [utime, stime, cutime, cstime] = [11, 12, 13, 14].map((i) => Number(fields[i]));
  return (utime! + stime! + (withReaped ? cutime! + cstime! : 0)) / clockTicks();
}

/** The live children of `pid` (by their parent pid). */
export function childrenOf(pid: number): number[] {
  const children: number[] = [];
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return children;
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    const fields = statFields(Number(entry));
    if (fields && Number(fields[1]) === pid) children.push(Number(entry));
  }
  return children;
}

/** CPU seconds of a process tree one level deep (Postgres: the postmaster, its backends and workers, and those gone). */
export function treeCpuSeconds(pid: number): number {
  return childrenOf(pid).reduce((sum, child) => sum + (cpuSeconds(child) || 0), cpuSeconds(pid, true));
}

/** Resident memory of a process in bytes (VmRSS), NaN when gone. */
export function rssBytes(pid: number): number {
  try {
    const match = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) * 1024 : NaN;
  } catch {
    return NaN;
  }
}

/** The parent of a process, NaN when gone. */
export function parentOf(pid: number): number {
  const fields = statFields(pid);
  return fields ? Number(fields[1]) : NaN;
}

/** Pins every thread of `pid` to `cpus` (a taskset list such as `1` or `1-3`); false when not possible. */
export function pinTo(pid: number, cpus: string): boolean {
  try {
    execFileSync('taskset', ['--all-tasks', '--cpu-list', '-p', cpus, String(pid)], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** Busy and total clock ticks of each CPU so far (/proc/stat; busy is all but idle and iowait); empty off Linux. */
export function cpuTicks(): Map<number, { busy: number; total: number }> {
  const ticks = new Map<number, { busy: number; total: number }>();
  let stat: string;
  try {
    stat = readFileSync('/proc/stat', 'utf8');
  } catch {
    return ticks;
  }
  for (const line of stat.split('\n')) {
    const match = /^cpu(\d+) (.*)$/.exec(line);
    if (!match) continue;
    const values = match[2]!.trim().split(/\s+/).map(Number);
    // user nice system idle iowait irq softirq steal (guest time is inside user already)
    const total = values.slice(0, 8).reduce((sum, v) => sum + v, 0);
    ticks.set(Number(match[1]), { busy: total - values[3]! - values[4]!, total });
  }
  return ticks;
}
