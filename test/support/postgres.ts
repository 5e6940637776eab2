/**
 * A real, throwaway Postgres server for the tests and benches: Debian's `postgresql` server binaries
 * (`/usr/lib/postgresql/<version>/bin`, or PIX_PG_BIN), a fresh cluster in a temporary directory,
 * listening on 127.0.0.1 at a free port with its socket in that directory. `initdb` refuses to run as
 * root, so as root the cluster is made and run by the `postgres` user (runuser). Durability is off
 * (fsync, synchronous_commit): a test cluster dies with the test. `.ci/run` installs the package on a
 * bare machine; a machine without it fails here with a sentence saying so, never a skip.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { freePort } from './ports.ts';

export interface RunningPostgres {
  /** `postgres://postgres@127.0.0.1:PORT/NAME` of a database in this cluster. */
  url(database?: string): string;
  /** Creates a new, empty database and answers its URL. */
  createDatabase(name?: string): Promise<string>;
  port: number;
  /** Stops the server, keeping its data (an outage); `resume()` starts it again on the same port. */
  pause(): Promise<void>;
  resume(): Promise<void>;
  /**
   * Freezes the server (SIGSTOP to the postmaster and every backend: connections stay open, nothing
   * answers, as a hung host or a stalled disk); `thaw()` lets it go on (SIGCONT).
   */
  freeze(): void;
  thaw(): void;
  stop(): Promise<void>;
}

/** The newest installed server's bin directory, or null. */
export function findPostgresBin(): string | null {
  if (process.env.PIX_PG_BIN) return existsSync(join(process.env.PIX_PG_BIN, 'initdb')) ? process.env.PIX_PG_BIN : null;
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return null;
  const versions = readdirSync(root)
    .filter((v) => existsSync(join(root, v, 'bin', 'initdb')))
    .sort((a, b) => Number(b) - Number(a));
  return versions.length > 0 ? join(root, versions[0]!, 'bin') : null;
}

const isRoot = () => process.getuid?.() === 0;

/** Runs a server binary, as the `postgres` user when this process is root. */
function run(bin: string, args: string[]): void {
  const [command, argv] = isRoot() ? ['runuser', ['-u', 'postgres', '--', bin, ...args]] : [bin, args];
  execFileSync(command, argv, { stdio: ['ignore', 'pipe', 'pipe'] });
}

let counter = 0;

/** Starts a cluster (about 2 s); `stop()` ends it and removes its directory, as does this process's exit. */
export async function startPostgres(): Promise<RunningPostgres> {
  const bin = findPostgresBin();
  if (!bin) {
    throw new Error(
      "Postgres's server binaries were not found (/usr/lib/postgresql/<version>/bin): install Debian's postgresql package (apt-get install postgresql), or set PIX_PG_BIN",
    );
  }
  const dir = mkdtempSync(join(tmpdir(), 'pix-pg-'));
  if (isRoot()) {
    const { uid, gid } = postgresUser();
    chownSync(dir, uid, gid);
  }
  const data = join(dir, 'data');
  const log = join(dir, 'server.log');
  run(join(bin, 'initdb'), ['-D', data, '-A', 'trust', '-U', 'postgres', '-E', 'UTF8', '--no-sync', '--no-instructions']);
  const serverOptions = (on: number) => `-p ${on} -k ${dir} -h 127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=300`;
  let port = 0;
  for (let attempt = 1; ; attempt++) {
    port = await freePort();
    try {
      run(join(bin, 'pg_ctl'), ['-D', data, '-l', log, '-w', '-t', '30', '-o', serverOptions(port), 'start']);
      break;
    } catch (error) {
      // Another process took the port between the probe and the start: pick another.
      if (attempt >= 3) {
        const tail = existsSync(log) ? readFileSync(log, 'utf8').split('\n').slice(-10).join('\n') : '';
        rmSync(dir, { recursive: true, force: true });
        throw new Error(`Postgres did not start: ${(error as Error).message}\n${tail}`, { cause: error });
      }
    }
  }
  let stopped = false;
  let frozen: number[] = [];
  const stopNow = () => {
    if (stopped) return;
    stopped = true;
    const [command, argv] = isRoot()
      ? ['runuser', ['-u', 'postgres', '--', join(bin, 'pg_ctl'), '-D', data, '-m', 'immediate', '-w', 'stop']]
      : [join(bin, 'pg_ctl'), ['-D', data, '-m', 'immediate', '-w', 'stop']];
    spawnSync(command, argv, { stdio: 'ignore' });
    rmSync(dir, { recursive: true, force: true });
  };
  process.once('exit', stopNow);
  const url = (database = 'postgres') => `postgres://postgres@127.0.0.1:${port}/${database}`;
  return {
    port,
    url,
    async createDatabase(name = `pix_${process.pid}_${++counter}`) {
      const client = new pg.Client({ connectionString: url() });
      await client.connect();
      try {
        await client.query(`CREATE DATABASE ${pg.escapeIdentifier(name)}`);
      } finally {
        await client.end();
      }
      return url(name);
    },
    async pause() {
      run(join(bin, 'pg_ctl'), ['-D', data, '-m', 'fast', '-w', 'stop']);
    },
    async resume() {
      run(join(bin, 'pg_ctl'), ['-D', data, '-l', log, '-w', '-t', '30', '-o', serverOptions(port), 'start']);
    },
    freeze() {
      frozen = serverProcesses(data);
      for (const pid of frozen) signal(pid, 'SIGSTOP');
    },
    thaw() {
      for (const pid of frozen) signal(pid, 'SIGCONT');
      frozen = [];
    },
    async stop() {
      process.removeListener('exit', stopNow);
      for (const pid of frozen) signal(pid, 'SIGCONT');
      stopNow();
    },
  };
}

/** Signals a server process; one that ended since it was listed (a backend whose client left) is skipped. */
function signal(pid: number, name: NodeJS.Signals): void {
  try {
    process.kill(pid, name);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error;
  }
}

/** The postmaster of the cluster in `data` (its postmaster.pid) and its children (the backends), from /proc. */
function serverProcesses(data: string): number[] {
  const postmaster = Number(readFileSync(join(data, 'postmaster.pid'), 'utf8').split('\n')[0]);
  const children = readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .filter((pid) => {
      try {
        // The parent's pid is the 4th field of /proc/<pid>/stat, after the command in parentheses.
        const stat = readFileSync(join('/proc', pid, 'stat'), 'utf8');
        return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === postmaster;
      } catch {
        return false;
      }
    })
    .map(Number);
  return [postmaster, ...children];
}

function postgresUser(): { uid: number; gid: number } {
  const line = readFileSync('/etc/passwd', 'utf8')
    .split('\n')
    .find((l) => l.startsWith('postgres:'));
  if (!line) throw new Error("there is no postgres user: install Debian's postgresql package, which creates it");
  const [, , uid, gid] = line.split(':');
  return { uid: Number(uid), gid: Number(gid) };
}
