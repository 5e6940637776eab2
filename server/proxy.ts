/**
 * createProxy(config): the one composition of the proxy. It opens the store, builds the partner client
 * and the app, and starts the background work, without listening: `pix-checkout serve` (main.ts)
 * listens with it, a merchant mounts it (docs/guides/mounting.md), and the dev stack (dev-stack.ts)
 * wraps it with the sandbox's pages. With no partner credentials it runs against an in-process
 * sandbox (sandbox-mode.ts) with a temporary store, like the sandbox's own memory; register the
 * partner's webhook URL yourself there (`pix-checkout webhook set`): until then the reconciler finds
 * every outcome.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createApp, type PixApp } from './app.ts';
import { databaseDeadlines } from './config/database.ts';
import { loadEnv, proxyConfig, type ProxyConfig } from './config/index.ts';
import type { OutcomeEvent } from './domain/outcomes.ts';
import { trackUpstream } from './domain/readiness.ts';
import { createDrain } from './http/drain.ts';
import { createLogger, type Logger } from './log.ts';
import { createPartnerClient, tokenStoreKey, type PartnerClient } from './partner/client.ts';
import type { RunningSandbox } from './sandbox-mode.ts';
import { DEFAULT_TRANSFER_STATUS_CODES, formatStatusCodes, statusCodes, type StatusCodes } from './partner/status-codes.ts';
import { openStore } from './store/open.ts';
import { StoreOutage } from './store/outage.ts';
import type { Store } from './store/store.ts';

/** Said at start and in /ready when no page may call the browser API (the 403 names both settings too). */
const NO_PAGE_MAY_CALL =
  "no page may call the payment API (every page's POST is refused 403 forbidden): set PIX_ALLOWED_ORIGINS to your pages' origins, " +
  "or PIX_PUBLIC_URL to the proxy's public URL (a mounted proxy: your site's)";

/** A proxy to mount in the merchant's own server: `app.fetch` is its web-standard handler. */
export interface MountedProxy {
  /** Hono app; its routes are under `/api` (`{basePath}`): hand it requests with their full path. */
  app: PixApp;
  /** The in-process sandbox when nothing was configured (sandbox mode), else null. */
  sandbox: RunningSandbox | null;
  partner: PartnerClient;
  store: Store;
  /** Where the store's file lives (a temporary directory in sandbox mode). */
  dataDir: string;
  /**
   * Ends the open status streams (EventSource reconnects elsewhere), so that the host server's own
   * close is not held open by them. Call it first, then close the host server, then `close()`.
   */
  endStreams(): void;
  /**
   * Starts draining (a shutdown's first step): from now on `/ready` and new work (POSTs under the
   * API, new status streams) answer `503 shutting_down`; everything else is served as before.
   */
  drain(): void;
  /** Background work in flight now, in words (deliveries, a reconciler pass): what a shutdown waits for. */
  busy(): string[];
  /** Ends streams, stops the reconciler and the deliveries (waiting for those in flight), closes the store (and the sandbox). */
  close(): Promise<void>;
}

/** What a caller that composes further (the dev stack, tests) may hand in instead of the defaults. */
export interface ProxyParts {
  /** Sandbox mode against this running sandbox, which close() leaves running. */
  sandbox?: RunningSandbox;
  /** The store's directory, kept on close (sandbox mode otherwise uses a temporary one). */
  dataDir?: string;
  onOutcome?: (event: OutcomeEvent) => void;
  /** Start the reconciler and the merchant deliveries now (default true). */
  background?: boolean;
}

/**
 * Builds the proxy from the configuration (the environment and `.env` by default, like `pix-checkout
 * serve`) and starts its reconciler and merchant deliveries.
 */
export async function createProxy(
  config: ProxyConfig = proxyConfig(loadEnv()),
  logger: Logger = createLogger({ level: config.logLevel }),
  parts: ProxyParts = {},
): Promise<MountedProxy> {
  // Loaded only in sandbox mode.
  const mode = config.partner.sandbox ? await (await import('./sandbox-mode.ts')).sandboxPartner(parts.sandbox) : null;
  const temporary = mode !== null && parts.dataDir === undefined;
  const dataDir = parts.dataDir ?? (temporary ? mkdtempSync(join(tmpdir(), 'pix-checkout-')) : config.dataDir);
  const opened: { close(): Promise<void> }[] = [];
  const closeOpened = async () => {
    for (const part of opened.reverse()) await part.close();
    if (mode?.owned) await mode.sandbox.close();
    if (temporary) rmSync(dataDir, { recursive: true, force: true });
  };
  // One voice for a store outage, shared by the store's connections and the loops (store/outage.ts).
  const outage = new StoreOutage({ log: logger.child({ component: 'store' }) });
  try {
    const store = await openStore({
      dataDir,
      databaseUrl: config.database?.url,
      poolSize: config.database?.poolSize,
      claimMs: config.database?.claimMs,
      deadlines: databaseDeadlines(config.databaseStatementTimeoutMs),
      onProblem: (message, error) => logger.error({ err: error instanceof Error ? { message: error.message } : undefined }, message),
      outage,
    });
    opened.push(store);
    if (store.cluster) logger.info({ instance: store.cluster.instanceId }, 'sharing the Postgres store with any other instance on PIX_DATABASE_URL');
    const upstream = trackUpstream();
    const partner = createPartnerClient({
      ...(mode
        ? mode.connection
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
    const drain = createDrain();
    const warnings: string[] = [];
    if (!mode && !config.webhooks.secretPath && config.webhooks.sourceIps.length === 0) {
      warnings.push('the partner webhook intake is open to anyone: set PIX_WEBHOOK_SECRET_PATH or PIX_WEBHOOK_SOURCE_IPS');
      logger.warn(warnings.at(-1));
    }
    // Outside the sandbox only the listed origins and the proxy's own may POST: with neither, every page is refused.
    if (!mode && (config.allowedOrigins ?? []).length === 0 && !config.publicUrl) {
      warnings.push(NO_PAGE_MAY_CALL);
      logger.warn(warnings.at(-1));
    }
    if (config.trustedProxies > 0 && config.shutdown.drainMs === 0) {
      warnings.push(
        'PIX_SHUTDOWN_DRAIN_MS is 0 behind a balancer (PIX_TRUSTED_PROXIES): at SIGTERM the port closes at once, before a balancer probing /ready sees it fail; set it to the probe interval times the failures that mark an instance down',
      );
      logger.warn(warnings.at(-1));
    }
    if (!mode && !config.dataKey) {
      warnings.push("customers' documents are stored unencrypted: set PIX_DATA_KEY (openssl rand -base64 32)");
      logger.warn(warnings.at(-1));
    }
    // The reconciler and the merchant's deliveries start with the app; leftover notifications first.
    const app = createApp({
      ...config,
      partner,
      store,
      logger,
      upstream,
      signal: shutdown.signal,
      onOutcome: parts.onOutcome,
      background: parts.background ?? true,
      warnings,
      outage,
      partnerScope: tokenStoreKey(config.partner.baseUrl, config.partner.credentials?.email),
      drain,
      ...(mode ? { now: mode.now, ...sandboxTransferNumbering(mode.sandbox, config.partner.transferStatusCodes) } : {}),
    });
    opened.push({ close: () => app.pix.stop() });
    return {
      app,
      sandbox: mode?.sandbox ?? null,
      partner,
      store,
      dataDir,
      endStreams: () => shutdown.abort(),
      drain: () => drain.start(),
      busy() {
        const deliveries = app.pix.notifier?.deliveriesInFlight() ?? 0;
        return [
          ...(deliveries > 0 ? [`${deliveries} merchant deliver${deliveries === 1 ? 'y' : 'ies'} awaiting the receiver's answer`] : []),
          ...(app.pix.reconciler.passRunning() ? ['a reconciler pass'] : []),
        ];
      },
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

/**
 * Sandbox mode: the in-process sandbox states its transfer numbering (its dialect's), which is then
 * the transfer setting unless PIX_TRANSFER_STATUS_CODES says otherwise (then checked against it).
 */
function sandboxTransferNumbering(sandbox: RunningSandbox, configured: StatusCodes) {
  const stated = statusCodes(sandbox.state.dialect.transferStatusCodes ?? sandbox.state.dialect.statusCodes);
  const own = formatStatusCodes(configured) !== formatStatusCodes(DEFAULT_TRANSFER_STATUS_CODES);
  return { statedTransferCodes: stated, transferStatusCodes: own ? configured : stated };
}
