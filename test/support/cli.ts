/** The CLI run in-process, as a test reads it: its exit code and what it wrote to each stream. */
import { main } from '../../server/cli/index.ts';

export interface CliRun {
  code: number;
  out: string;
  err: string;
}

export async function runCli(args: string[], env: Record<string, string | undefined>): Promise<CliRun> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(args, { out: (t) => out.push(t), err: (t) => err.push(t), env });
  return { code, out: out.join('\n'), err: err.join('\n') };
}
