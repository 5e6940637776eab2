/**
 * The proxy as a process (`npx pix-checkout serve`, or `tsx server/main.ts`): read the config, open
 * the store, build the app, listen; on SIGINT/SIGTERM stop accepting, end the status streams, let
 * in-flight requests finish, close the store. With nothing configured it runs against an in-process
 * sandbox (server/dev.ts), whose store is temporary like the sandbox's own memory.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pathToFileURL } from 'node:url';
import { getRequestListener } from '@hono/node-server';
import { createApp, type PixApp } from './app.ts';
import { ConfigError, SANDBOX_DEFAULTS, loadEnv, proxyConfig, type ProxyConfig } from './config.ts';
import { closeServer } from './http/close-server.ts';
import { createLogger, type Logger } from './log.ts';
import { perMinute } from './http/rate-limit.ts';
import { trackUpstream } from './domain/readiness.ts';
import type { RunningSandbox } from './sandbox/server.ts';
import { openSqliteStore } from './store/sqlite/sqlite-store.ts';
import { createPartnerClient } from './partner/client.ts';

export interface RunningProxy {
  /** The HTTP origin; the API is under /api. */
  url: string;
  sandbox: boolean;
  /** Graceful: stop accepting, end streams, finish in-flight requests, close the store. */
  close(): Promise<void>;
}

/** A proxy to mount in the merchant's own server: `app.fetch` is its web-standard handler. */
export interface MountedProxy {
  /** Hono app; its routes are under `/api` (`{basePath}`): hand it requests with their full path. */
  app: PixApp;
  /** The in-process sandbox when nothing was configured (sandbox mode), else null. */
  sandbox: RunningSandbox | null;
  /**
   * Ends the open status streams (EventSource reconnects elsewhere), so that the host server's own
   * close is not held open by them. Call it first, then close the host server, then `close()`.
   */
  endStreams(): void;
  /** Ends streams, stops the reconciler and the deliveries, closes the store (and the sandbox). */
  close(): Promise<void>;
}

/** The options of createApp that come from the configuration (shared by createProxy and startProxy). */
function appOptions(config: ProxyConfig, logger: Logger) {
  const create = config.rateLimitCreate > 0 ? perMinute(config.rateLimitCreate) : undefined;
  const status = config.rateLimitStatus > 0 ? perMinute(config.rateLimitStatus) : undefined;
  return {
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
    rateLimits: create || status ? { create: create ?? perMinute(1e9), status: status ?? perMinute(1e9) } : (false as const),
  };
}

/**
 * Builds the proxy from the configuration (the environment and `.env` by default, like `pix-checkout
 * serve`) without listening, and starts its reconciler and merchant deliveries: for mounting in
 * Express, Fastify, Next.js or node:http (docs/guides/mounting.md). With no partner credentials it
 * runs against an in-process sandbox; register the partner's webhook URL yourself
 * (`pix-checkout webhook set`): until then the reconciler finds every outcome.
 */
export async function createProxy(config: ProxyConfig = proxyConfig(loadEnv()), logger: Logger = createLogger({ level: config.logLevel })): Promise<MountedProxy> {
  // Sandbox mode: the sandbox's payments live in memory, so the store is temporary like them (a
  // kept store would serve payments of a sandbox that is gone). Loaded only in that mode.
  const sandbox = config.partner.sandbox ? await (await import('./sandbox/server.ts')).startSandbox() : null;
  const dataDir = sandbox ? mkdtempSync(join(tmpdir(), 'pix-checkout-')) : config.dataDir;
  const opened: { close(): Promise<void> }[] = [];
  const closeOpened = async () => {
    for (const part of opened.reverse()) await part.close();
    if (sandbox) {
      await sandbox.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  };
  try {
    const store = openSqliteStore({ dataDir });
    opened.push(store);
    const upstream = trackUpstream();
    const partner = createPartnerClient({
      ...(sandbox
        ? { baseUrl: sandbox.url, ca: sandbox.ca, credentials: { email: SANDBOX_DEFAULTS.email, accessKey: SANDBOX_DEFAULTS.accessKey }, userAgent: SANDBOX_DEFAULTS.userAgent }
        : {
            baseUrl: config.partner.baseUrl,
            credentials: config.partner.credentials,
            token: config.partner.token,
            userAgent: config.partner.userAgent,
            ca: config.partner.caFile ? await readFile(config.partner.caFile, 'utf8') : null,
          }),
      tokenStore: store.tokens,
      timeoutMs: config.partner.timeoutMs,
      log: (entry) => {
        upstream.record(entry);
        logger.debug({ upstream: entry }, 'partner call');
      },
    });
    const shutdown = new AbortController();
    // The reconciler and the merchant's deliveries start with the app; leftover notifications first.
    const app = createApp({
      ...appOptions(config, logger),
      partner,
      store,
      defaultCallback: config.defaultCallback,
      upstream,
      signal: shutdown.signal,
      background: true,
      ...(sandbox ? { now: sandbox.state.clock.now } : {}),
    });
    opened.push({ close: () => app.pix.stop() });
    return {
      app,
      sandbox,
      endStreams: () => shutdown.abort(),
      async close() {
        shutdown.abort();
        await closeOpened();
      },
    };
  } catch (error) {
    await closeOpened();
    throw error;
  }
}

/** Runs the proxy on its own HTTP server (`pix-checkout serve`); in sandbox mode, the whole dev stack. */
export async function startProxy(config: ProxyConfig, logger: Logger = createLogger({ level: config.logLevel })): Promise<RunningProxy> {
  if (config.partner.sandbox) {
    const { rateLimits, ...shared } = appOptions(config, logger);
    const { startDevStack } = await import('./dev-stack.ts');
    const stack = await startDevStack({ ...shared, rateLimits, port: config.port, host: config.host });
    return { url: stack.url, sandbox: true, close: stack.close };
  }

  const proxy = await createProxy(config, logger);
  const server: Server = createServer(getRequestListener(proxy.app.fetch));
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
