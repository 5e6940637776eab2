/**
 * The proxy as a process (`npx pix-checkout serve`, or `tsx server/main.ts`): read the config, open
 * the store, build the app, listen; on SIGINT/SIGTERM stop accepting, end the status streams, let
 * in-flight requests finish, close the store. With nothing configured it runs against an in-process
 * sandbox (server/dev.ts), whose store is temporary like the sandbox's own memory.
 */
import { readFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pathToFileURL } from 'node:url';
import { getRequestListener } from '@hono/node-server';
import { createApp } from './app.ts';
import { ConfigError, loadEnv, proxyConfig, type ProxyConfig } from './config.ts';
import { closeServer, startDevStack } from './dev.ts';
import { createLogger, type Logger } from './log.ts';
import { perMinute } from './rate-limit.ts';
import { trackUpstream } from './readiness.ts';
import { openSqliteStore } from './store/sqlite.ts';
import { createPartnerClient } from './upstream/client.ts';

export interface RunningProxy {
  /** The HTTP origin; the API is under /api. */
  url: string;
  sandbox: boolean;
  /** Graceful: stop accepting, end streams, finish in-flight requests, close the store. */
  close(): Promise<void>;
}

export async function startProxy(config: ProxyConfig, logger: Logger = createLogger({ level: config.logLevel })): Promise<RunningProxy> {
  const rateLimits = {
    create: config.rateLimitCreate > 0 ? perMinute(config.rateLimitCreate) : undefined,
    status: config.rateLimitStatus > 0 ? perMinute(config.rateLimitStatus) : undefined,
  };
  const shared = {
    apiKey: config.apiKey,
    allowedOrigins: config.allowedOrigins,
    expirationSeconds: config.expirationSeconds,
    streams: config.streams,
    watchIntervalMs: config.watchIntervalMs,
    staleAfterMs: config.staleAfterMs,
    renewals: config.renewals,
    openAmount: config.openAmount,
    trustedProxies: config.trustedProxies,
    logger,
    webhooks: { secretPath: config.webhookSecretPath, sourceIps: config.webhookSourceIps },
    merchantWebhook: config.merchantWebhook,
    reconcile: { tickMs: config.reconcileTickMs, everyMs: config.reconcileEverySeconds * 1000, nearMs: config.reconcileNearSeconds * 1000 },
  };
  const limits = rateLimits.create || rateLimits.status ? { create: rateLimits.create ?? perMinute(1e9), status: rateLimits.status ?? perMinute(1e9) } : false;

  if (config.partner.sandbox) {
    const stack = await startDevStack({ ...shared, port: config.port, host: config.host, rateLimits: limits });
    return { url: stack.url, sandbox: true, close: stack.close };
  }

  const store = openSqliteStore({ dataDir: config.dataDir });
  const upstream = trackUpstream();
  const partner = createPartnerClient({
    baseUrl: config.partner.baseUrl,
    credentials: config.partner.credentials,
    token: config.partner.token,
    tokenStore: store.tokens,
    userAgent: config.partner.userAgent,
    ca: config.partner.caFile ? await readFile(config.partner.caFile, 'utf8') : null,
    timeoutMs: config.partner.timeoutMs,
    log: (entry) => {
      upstream.record(entry);
      logger.debug({ upstream: entry }, 'partner call');
    },
  });
  const shutdown = new AbortController();
  // The reconciler and the merchant's deliveries start with the app; leftover notifications first.
  const app = createApp({ ...shared, partner, store, rateLimits: limits, defaultCallback: config.defaultCallback, upstream, signal: shutdown.signal, background: true });
  const server: Server = createServer(getRequestListener(app.fetch));
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(config.port, config.host, () => resolve());
    });
  } catch (error) {
    await app.pix.stop();
    await store.close();
    throw error;
  }
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${port}`,
    sandbox: false,
    async close() {
      shutdown.abort();
      await closeServer(server);
      await app.pix.stop();
      await store.close();
    },
  };
}

/**
 * Runs until SIGINT or SIGTERM, then shuts down gracefully; a second signal exits at once.
 * Resolves to the exit code: 0 after a clean stop, 2 for bad configuration.
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
  const proxy = await startProxy(config, logger);
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
