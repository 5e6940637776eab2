/** `pix-checkout serve`: the proxy on its own HTTP server (main.ts); in sandbox mode, the dev stack. */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { SANDBOX_API_KEY, partnerConfig, proxyConfig } from '../config/index.ts';
import type { Logger } from '../log.ts';
import { ExitCode, UsageError, parse, type CliIo } from './io.ts';

export const HELP = `Usage: pix-checkout serve [--port <port>] [--host <host>]

Runs the checkout proxy: the browser API and the checkouts API under /api, /health and /ready.
Configuration from the environment or .env (docs/proxy.md lists every variable): PIX_API_KEY,
PIX_ALLOWED_ORIGINS, PIX_DATA_DIR, PIX_OPEN_AMOUNT, PIX_RENEWALS, PORT, HOST, PIX_LOG_LEVEL and the
partner's PIX_* settings. With no partner credentials it runs against an in-process sandbox
(sandbox mode) and prints, besides its logs, the API key to use (the published test key), the
sandbox's control API and the sandbox's certificate; the API key is never printed otherwise.
Ctrl-C (SIGINT) or SIGTERM stops it gracefully: /ready and new work answer 503 shutting_down,
open streams end, requests, merchant deliveries and a reconciler pass in flight finish within
PIX_SHUTDOWN_GRACE_MS (then exit 0; past it, exit 1 naming what still ran).`;

export async function serveCommand(rest: string[], io: CliIo): Promise<void> {
  const { values } = parse(rest, { port: { type: 'string' }, host: { type: 'string' } });
  if (values.help) return io.out(HELP);
  if (values.port !== undefined && !(/^\d+$/.test(values.port) && Number(values.port) <= 65535)) {
    throw new UsageError('--port must be a whole number from 0 to 65535 (0 picks a free port)');
  }
  const env = { ...io.env, ...(values.port !== undefined ? { PORT: values.port } : {}), ...(values.host !== undefined ? { HOST: values.host } : {}) };
  let sandbox = false;
  try {
    sandbox = partnerConfig(env).sandbox;
  } catch {
    // Bad partner settings: serve() lists them with every other problem.
  }
  // Imported here: the other commands need neither the server nor the store.
  const code = sandbox ? await serveSandbox(env, io) : await (await import('../main.ts')).serve(env, io.err);
  if (code !== 0) throw new ExitCode(code);
}

/**
 * Sandbox mode as startProxy (main.ts) runs it, keeping hold of the dev stack to say what a developer
 * needs: the API key, the sandbox's control API and its certificate.
 */
async function serveSandbox(env: Record<string, string | undefined>, io: CliIo): Promise<number> {
  // A ConfigError lists every problem (exit 2), as serve() would.
  const config = proxyConfig(env);
  const [{ createLogger }, { startDevStack }] = await Promise.all([import('../log.ts'), import('../dev-stack.ts')]);
  const logger = createLogger({ level: config.logLevel });
  const { partner: _partner, dataDir: _dataDir, logLevel: _logLevel, ...settings } = config;
  const stack = await startDevStack({ ...settings, logger });
  // In the stack's temporary directory, removed with it: the certificate lives as long as its sandbox.
  const caFile = join(stack.dataDir, 'sandbox-ca.pem');
  await writeFile(caFile, stack.sandbox.ca);
  logger.info({ url: stack.url, api: stack.apiUrl, sandbox: true, open_amount: config.openAmount !== false }, 'pix-checkout proxy listening');

  // A key of one's own stays unprinted even here; the published test key is printed: it is the point.
  const published = config.apiKey === SANDBOX_API_KEY;
  // On stderr: stdout carries the JSON log lines.
  io.err(`pix-checkout proxy in sandbox mode on ${stack.url} (no partner credentials: an in-process sandbox)
  api:         ${stack.apiUrl} (the widget's endpoint)
  api key:     ${published ? `${config.apiKey} (sandbox mode's published test key; Authorization: Bearer ${config.apiKey} for ${stack.apiUrl}/checkouts)` : 'PIX_API_KEY (yours: not printed)'}
  control API: ${stack.url}/sandbox/_sandbox/... (pay, cancel, move the clock: server/sandbox/README.md, "Control API")
  sandbox:     ${stack.sandbox.url} (its partner API; control API at ${stack.sandbox.url}/_sandbox/...)
  certificate: ${caFile} (the sandbox's, PIX_CA_FILE to reach it over HTTPS; removed when the proxy stops)
Ctrl-C to stop.`);
  await untilStopped(logger, () => stack.close());
  return 0;
}

/** Until SIGINT or SIGTERM, then a graceful close; a second signal exits at once (as main.ts's serve). */
function untilStopped(logger: Logger, close: () => Promise<void>): Promise<void> {
  return new Promise<void>((resolve) => {
    let stopping = false;
    const stop = (signal: NodeJS.Signals) => {
      if (stopping) process.exit(1);
      stopping = true;
      logger.info({ signal }, 'shutting down: finishing in-flight requests');
      void close().then(() => {
        logger.info('stopped');
        process.off('SIGINT', stop);
        process.off('SIGTERM', stop);
        resolve();
      });
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
}
