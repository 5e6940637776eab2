/**
 * `pix-checkout sandbox`: the partner-service sandbox on its own (server/sandbox/main.ts), run as a
 * separate process as the real service would be: the sandbox stands apart from the proxy and its
 * command line, which reach it only over HTTPS. This command starts it, relays what it prints, hands
 * it SIGINT and SIGTERM, and exits with its exit code.
 */
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { settingNames } from '../config/index.ts';
import { SANDBOX_ACCOUNT } from '../partner/sandbox-account.ts';
import { ExitCode, parse, type CliIo } from './io.ts';

export const HELP = `Usage: pix-checkout sandbox [--port <port>] [--dialect default|terse|numbered|swapped] [--json]

Runs the partner-service sandbox (the simulated partner service over HTTPS, with its test account
and customers) until Ctrl-C (SIGINT) or SIGTERM. It writes its certificate to ${SANDBOX_ACCOUNT.caFile}
in this directory and prints its base URL, its control API's URL, the certificate's path
(PIX_CA_FILE) and the credentials to use; with --json, as one JSON object.

  --port <port>     default ${new URL(SANDBOX_ACCOUNT.baseUrl).port} (SANDBOX_PORT); 0 picks a free one
  --dialect <name>  how it answers what the spec leaves open (PIX_SANDBOX_DIALECT; server/sandbox/README.md)

With nothing configured, the other commands run from this directory use it on the default port;
elsewhere, set what it prints.`;

/** The sandbox's entry beside this file: TypeScript in the repository, compiled JavaScript when installed. */
function entry(): { file: string; execArgv: string[] } {
  const sources = import.meta.url.endsWith('.ts');
  const file = fileURLToPath(new URL(`../sandbox/main.${sources ? 'ts' : 'js'}`, import.meta.url));
  return { file, execArgv: sources ? ['--import', import.meta.resolve('tsx')] : [] };
}

export async function sandboxCommand(rest: string[], io: CliIo): Promise<void> {
  // Checked here, so a misspelt option costs no process; the values are the sandbox's to check.
  const { values } = parse(rest, { port: { type: 'string' }, dialect: { type: 'string' } });
  if (values.help) return io.out(HELP);

  const env: NodeJS.ProcessEnv = { ...process.env };
  // The sandbox's own settings come from this command's environment (and .env), as every other setting does.
  for (const name of settingNames('sandbox')) {
    delete env[name];
    if (io.env[name] !== undefined) env[name] = io.env[name];
  }
  const { file, execArgv } = entry();
  // Its own process group, so a terminal's Ctrl-C reaches it once (relayed from here); the IPC
  // channel closes if this process dies, which stops it (main.ts) instead of leaving it listening.
  const child = spawn(process.execPath, [...execArgv, file, ...rest], { env, stdio: ['ignore', 'pipe', 'pipe', 'ipc'], detached: true });
  const relay = (signal: NodeJS.Signals) => child.kill(signal);
  process.on('SIGINT', relay);
  process.on('SIGTERM', relay);
  try {
    // Piped (stdio above), so never null.
    createInterface({ input: child.stdout! }).on('line', io.out);
    createInterface({ input: child.stderr! }).on('line', io.err);
    const code = await new Promise<number>((resolve, reject) => {
      child.once('error', reject);
      child.once('close', (exitCode: number | null) => resolve(exitCode ?? 1));
    });
    if (code !== 0) throw new ExitCode(code);
  } finally {
    process.off('SIGINT', relay);
    process.off('SIGTERM', relay);
  }
}
