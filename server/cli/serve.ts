/** `pix-checkout serve`: the proxy on its own HTTP server (main.ts). */
import { ExitCode, parse, type CliIo } from './io.ts';

export const HELP = `Usage: pix-checkout serve [--port <port>] [--host <host>]

Runs the checkout proxy: the browser API and the checkouts API under /api, /health and /ready.
Configuration from the environment or .env (docs/proxy.md lists every variable): PIX_API_KEY,
PIX_ALLOWED_ORIGINS, PIX_DATA_DIR, PIX_OPEN_AMOUNT, PIX_RENEWALS, PORT, HOST, PIX_LOG_LEVEL and the
partner's PIX_* settings. With no partner credentials it runs against an in-process sandbox.
Ctrl-C (SIGINT) or SIGTERM stops it gracefully: open streams end, requests in flight finish.`;

export async function serveCommand(rest: string[], io: CliIo): Promise<void> {
  const { values } = parse(rest, { port: { type: 'string' }, host: { type: 'string' } });
  if (values.help) return io.out(HELP);
  const env = { ...io.env, ...(values.port !== undefined ? { PORT: values.port } : {}), ...(values.host !== undefined ? { HOST: values.host } : {}) };
  // Imported here: the other commands need neither the server nor the store.
  const { serve } = await import('../main.ts');
  const code = await serve(env, io.err);
  if (code !== 0) throw new ExitCode(code);
}
