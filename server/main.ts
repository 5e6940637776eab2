/**
 * The proxy as a process (`npx pix-checkout serve`, or `tsx server/main.ts`): read the config, build
 * the proxy (proxy.ts), listen; on SIGINT/SIGTERM stop accepting, end the status streams, let
 * in-flight requests finish, close the store. With nothing configured it runs the whole dev stack
 * (dev-stack.ts): the in-process sandbox, its pages at /sandbox, and its webhook registered.
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pathToFileURL } from 'node:url';
import { ConfigError, loadEnv, proxyConfig, type ProxyConfig } from './config.ts';
import { closeServer } from './http/close-server.ts';
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
}

/** Runs the proxy on its own HTTP server (`pix-checkout serve`); in sandbox mode, the whole dev stack. */
export async function startProxy(config: ProxyConfig, logger: Logger = createLogger({ level: config.logLevel })): Promise<RunningProxy> {
  if (config.partner.sandbox) {
    const { startDevStack } = await import('./dev-stack.ts');
    const { partner: _partner, dataDir: _dataDir, logLevel: _logLevel, ...settings } = config;
    const stack = await startDevStack({ ...settings, logger });
    return { url: stack.url, sandbox: true, close: () => stack.close() };
  }

  const proxy = await createProxy(config, logger);
  const server: Server = createNodeServer(nodeListener(proxy.app.fetch, proxy.app.pix.fastPath));
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
  };
}

/**
 * Runs until SIGINT or SIGTERM, then shuts down gracefully; a second signal exits at once.
 * Resolves to the exit code: 0 after a clean stop, 2 for bad configuration, 1 when the store cannot
 * open (damaged, or its directory read-only).
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

  await new Promise<void>((resolve) => {
    let stopping = false;
    const stop = (signal: NodeJS.Signals) => {
      if (stopping) process.exit(1);
      stopping = true;
      logger.info({ signal }, 'shutting down: finishing in-flight requests');
      void proxy.close().then(() => {
        logger.info('stopped');
        resolve();
      });
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
  return 0;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  process.exitCode = await serve();
}
