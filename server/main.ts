/**
 * The proxy as a process (`npx pix-checkout serve`, or `tsx server/main.ts`): read the config, build
 * the proxy (proxy.ts), listen; on SIGINT/SIGTERM drain (`/ready` and new work answer 503
 * shutting_down), end the status streams, stop accepting, let the requests, merchant deliveries and
 * reconciler pass in flight finish within PIX_SHUTDOWN_GRACE_MS, close the store and exit 0; past the
 * grace period (and a margin), exit 1 naming what still ran. With nothing configured it runs the whole dev stack
 * (dev-stack.ts): the in-process sandbox, its pages at /sandbox, and its webhook registered.
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pathToFileURL } from 'node:url';
import { ConfigError, loadEnv, proxyConfig, type ProxyConfig } from './config/index.ts';
import { closeServer } from './http/close-server.ts';
import { countRequests } from './http/drain.ts';
import { createNodeServer, nodeListener } from './http/node-listener.ts';
import { createLogger, type Logger } from './log.ts';
import { createProxy } from './proxy.ts';
import { StoreError } from './store/store.ts';

export interface RunningProxy {
  /** The HTTP origin; the API is under /api. */
  url: string;
  sandbox: boolean;
  /** Graceful: stop accepting, end streams, finish in-flight requests, close the store. */
  close(): Promise<void>;
  /**
   * SIGTERM's stop: drain at once (`/ready` and new work answer 503 shutting_down), keep listening
   * `drainMs` (a balancer sees /ready fail), then end the status streams, stop accepting, and wait
   * with no deadline of its own for the requests, merchant deliveries and reconciler pass in flight;
   * then close the store. serve() bounds it (PIX_SHUTDOWN_GRACE_MS).
   */
  shutdown(drainMs: number): Promise<void>;
  /** What is still running, in words (requests, deliveries, a pass, the store's close): the hard cut's log line. */
  busy(): string[];
}

/** Runs the proxy on its own HTTP server (`pix-checkout serve`); in sandbox mode, the whole dev stack. */
export async function startProxy(config: ProxyConfig, logger: Logger = createLogger({ level: config.logLevel })): Promise<RunningProxy> {
  if (config.partner.sandbox) {
    const { startDevStack } = await import('./dev-stack.ts');
    const { partner: _partner, dataDir: _dataDir, logLevel: _logLevel, ...settings } = config;
    const stack = await startDevStack({ ...settings, logger });
    return { url: stack.url, sandbox: true, close: () => stack.close(), shutdown: () => stack.close(), busy: () => [] };
  }

  const proxy = await createProxy(config, logger);
  let draining = false;
  let closingStore = false;
  const requests = countRequests(nodeListener(proxy.app.fetch, proxy.app.pix.fastPath), () => draining);
  const server: Server = createNodeServer(requests.listener);
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(config.port, config.host, () => resolve());
    });
  } catch (error) {
    await proxy.close();
    throw error;
  }
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${port}`,
    sandbox: false,
    async close() {
      // Streams end first, then in-flight requests finish, and only then the store closes.
      proxy.endStreams();
      await closeServer(server);
      await proxy.close();
    },
    async shutdown(drainMs) {
      draining = true;
      proxy.drain();
      if (drainMs > 0) await new Promise((resolve) => setTimeout(resolve, drainMs));
      // Streams end (EventSource reconnects elsewhere), the reconciler and the deliveries start nothing new.
      proxy.endStreams();
      await closeServer(server, null);
      // Waits for the background work in flight, then closes the store.
      closingStore = true;
      await proxy.close();
    },
    busy() {
      const open = requests.inFlight();
      return [
        ...(open > 0 ? [`${open} HTTP request${open === 1 ? '' : 's'} (status streams included)`] : []),
        ...proxy.busy(),
        ...(closingStore ? ['closing the store'] : []),
      ];
    },
  };
}

/**
 * Runs until SIGINT or SIGTERM, then shuts down gracefully; a second signal exits at once (1), and
 * so does the end of the grace period (1, with a log line naming what still ran).
 * Resolves to the exit code: 0 after a clean stop, 2 for bad configuration, 1 when the store cannot
 * open (damaged, or its directory read-only) or the shutdown failed.
 */
export async function serve(env: Record<string, string | undefined> = loadEnv(), err: (text: string) => void = console.error): Promise<number> {
  let config: ProxyConfig;
  try {
    config = proxyConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) {
      err(error.message);
      return 2;
    }
    throw error;
  }
  const logger = createLogger({ level: config.logLevel });
  let proxy: RunningProxy;
  try {
    proxy = await startProxy(config, logger);
  } catch (error) {
    // A store that cannot open (damaged, read-only directory) is said in words, not as a stack.
    if (!(error instanceof StoreError)) throw error;
    err(`pix-checkout: cannot start: ${error.message}`);
    return 1;
  }
  logger.info({ url: proxy.url, api: `${proxy.url}/api`, sandbox: proxy.sandbox, open_amount: config.openAmount !== false }, 'pix-checkout proxy listening');

  return new Promise<number>((resolve) => {
    let stopping = false;
    const stop = (signal: NodeJS.Signals) => {
      if (stopping) {
        logger.warn({ signal, still_running: proxy.busy() }, 'second signal: exiting at once');
        process.exit(1);
      }
      stopping = true;
      const { graceMs, drainMs, hardCutMarginMs } = config.shutdown;
      logger.info(
        { signal, grace_ms: graceMs, drain_ms: drainMs },
        'shutting down: /ready and new work answer 503 shutting_down; requests, deliveries and a reconciler pass in flight finish',
      );
      // The hard cut: work still running past the grace period (and a margin to close the store) is
      // left. Not unref'd: it fires even if what hangs holds no handle of its own; a clean stop clears it.
      const cut = setTimeout(() => {
        logger.error({ grace_ms: graceMs, still_running: proxy.busy() }, 'shutdown grace period over: exiting with work still running (PIX_SHUTDOWN_GRACE_MS)');
        process.exit(1);
      }, graceMs + hardCutMarginMs);
      proxy.shutdown(drainMs).then(
        () => {
          clearTimeout(cut);
          logger.info('stopped');
          resolve(0);
        },
        (error: unknown) => {
          clearTimeout(cut);
          logger.error({ err: { message: error instanceof Error ? error.message : String(error) } }, 'shutdown failed');
          resolve(1);
        },
      );
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  process.exitCode = await serve();
}
