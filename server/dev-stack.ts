/**
 * The whole stack on one machine with no credentials: the sandbox (HTTPS, its own port) and, on one
 * HTTP origin, the proxy's API at /api and the sandbox's public pages and control API at /sandbox.
 * `npm start`, `pix-checkout serve` in sandbox mode, the browser tests and the node tests all start
 * it the same way. Open amounts are on (the demo chooses its amount); the store lives in a fresh
 * temporary directory, because the sandbox's payments live in memory and die with it.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { getRequestListener } from '@hono/node-server';
import type { Hono } from 'hono';
import { LIMITS } from '../src/shared/limits.ts';
import { createApp, type AppDeps, type PixApp, type PixRuntime } from './app.ts';
import { SANDBOX_DEFAULTS } from './config.ts';
import { closeServer } from './http/close-server.ts';
import { createLogger, type Logger } from './log.ts';
import { trackUpstream } from './domain/readiness.ts';
import { startSandbox, type RunningSandbox } from './sandbox/server.ts';
import { openSqliteStore } from './store/sqlite/sqlite-store.ts';
import type { Store } from './store/store.ts';
import { createPartnerClient, type PartnerClient } from './partner/client.ts';

export interface DevStackOptions {
  /** Port of the HTTP origin (0, the default, picks a free one). */
  port?: number;
  host?: string;
  /** Origins allowed to call the browser API; default any, as this is the sandbox. */
  allowedOrigins?: readonly string[];
  expirationSeconds?: number;
  /** Serve live status streams (default true); false makes the widget fall back to polling. */
  streams?: boolean;
  /** How often the proxy asks the sandbox about a watched payment (default 2000 ms). */
  watchIntervalMs?: number;
  /** Routes of the page being served (the demo), added after the proxy's own. */
  mount?: (app: Hono) => void;
  /** The merchant server's API key (default SANDBOX_DEFAULTS.apiKey). */
  apiKey?: string;
  /** Open-amount bounds (default the partner's limits), or false to turn the mode off. */
  openAmount?: AppDeps['openAmount'];
  renewals?: number;
  staleAfterMs?: number;
  /** Per-client rate limits; off by default here (tests and demo come from one address). */
  rateLimits?: AppDeps['rateLimits'];
  trustedProxies?: number;
  /** Default: JSON lines on stdout at PIX_LOG_LEVEL, else `warn`. */
  logger?: Logger;
  /** Keep the store here instead of a fresh temporary directory (kept on close). */
  dataDir?: string;
  /** Use this running sandbox (not closed on close) instead of starting one: a proxy restart. */
  sandbox?: RunningSandbox;
  /** The partner's notifications: secret path segment, source allow-list. */
  webhooks?: AppDeps['webhooks'];
  /** Register the proxy's webhook endpoint as the sandbox's notification URL (default true). */
  registerWebhook?: boolean | { notifyType?: 1 | 2 };
  /**
   * The merchant's backend, told of every outcome by a signed POST. With `path` instead of `url`, a
   * route of the page added with `mount` (the demo shop's receiver), resolved against this stack's
   * own URL once its port is known.
   */
  merchantWebhook?: AppDeps['merchantWebhook'] | (Omit<NonNullable<AppDeps['merchantWebhook']>, 'url'> & { path: string });
  onOutcome?: AppDeps['onOutcome'];
  reconcile?: AppDeps['reconcile'];
  /** Start the reconciler and delivery worker (default true); tests drive them with runOnce(). */
  background?: boolean;
  /** Deadline of each partner call (default the client's 10 s). */
  partnerTimeoutMs?: number;
}

export interface DevStack {
  /** The HTTP origin: demo page, /api, /sandbox. */
  url: string;
  /** The browser API base, the widget's `endpoint`. */
  apiUrl: string;
  sandbox: RunningSandbox;
  partner: PartnerClient;
  store: Store;
  /** The key for POST /api/checkouts and GET /api/checkouts/:id. */
  apiKey: string;
  dataDir: string;
  /** The reconciler, the webhook processor, the merchant deliveries, the outcome emitter. */
  pix: PixRuntime;
  /** Where the partner's notifications are received. */
  webhookUrl: string;
  /** Ends status streams, finishes in-flight requests, stops the servers and removes a temporary store. */
  close(): Promise<void>;
}

export async function startDevStack(options: DevStackOptions = {}): Promise<DevStack> {
  const host = options.host ?? '127.0.0.1';
  const ownSandbox = !options.sandbox;
  const sandbox = options.sandbox ?? (await startSandbox());
  const temporary = options.dataDir === undefined;
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), 'pix-checkout-'));
  const store = openSqliteStore({ dataDir });
  const logger = options.logger ?? createLogger({ level: (process.env.PIX_LOG_LEVEL as 'info' | undefined) ?? 'warn' });
  const upstream = trackUpstream();
  const partner = createPartnerClient({
    baseUrl: sandbox.url,
    ca: sandbox.ca,
    userAgent: SANDBOX_DEFAULTS.userAgent,
    credentials: { email: SANDBOX_DEFAULTS.email, accessKey: SANDBOX_DEFAULTS.accessKey },
    tokenStore: store.tokens,
    timeoutMs: options.partnerTimeoutMs,
    log: (entry) => {
      upstream.record(entry);
      logger.debug({ upstream: entry }, 'partner call');
    },
  });
  const apiKey = options.apiKey ?? SANDBOX_DEFAULTS.apiKey;
  const shutdown = new AbortController();

  let app: PixApp | undefined;
  const cleanup = async () => {
    await app?.pix.stop();
    await store.close();
    if (temporary) rmSync(dataDir, { recursive: true, force: true });
    if (ownSandbox) await sandbox.close();
  };

  // Listening before the app is built tells its URL to what needs it (a merchant webhook `path`);
  // the app is attached below with no await in between, so no request can come first.
  const server: Server = createServer();
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(options.port ?? 0, host, () => resolve());
    });
  } catch (error) {
    await cleanup();
    throw error;
  }
  const { port } = server.address() as AddressInfo;
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
  const merchantWebhook =
    options.merchantWebhook && 'path' in options.merchantWebhook
      ? (({ path, ...rest }) => ({ ...rest, url: new URL(path, url).href }))(options.merchantWebhook)
      : options.merchantWebhook;

  // The proxy reads the sandbox's clock, so advancing it expires QR codes on every screen at once.
  try {
    app = createApp({
      partner,
      store,
      apiKey,
      allowedOrigins: options.allowedOrigins ?? ['*'],
      expirationSeconds: options.expirationSeconds,
      streams: options.streams,
      watchIntervalMs: options.watchIntervalMs,
      staleAfterMs: options.staleAfterMs,
      renewals: options.renewals,
      openAmount: options.openAmount ?? { min: LIMITS.paymentValue.min, max: LIMITS.paymentValue.max },
      rateLimits: options.rateLimits ?? false,
      trustedProxies: options.trustedProxies,
      now: sandbox.state.clock.now,
      logger,
      upstream,
      signal: shutdown.signal,
      webhooks: options.webhooks,
      merchantWebhook,
      onOutcome: options.onOutcome,
      reconcile: options.reconcile,
    });
    app.route('/sandbox', sandbox.publicApp);
    options.mount?.(app);
  } catch (error) {
    await closeServer(server);
    await cleanup();
    throw error;
  }
  server.on('request', getRequestListener(app.fetch));
  sandbox.setPublicUrl(`${url}/sandbox`);
  const webhookUrl = `${url}/api/webhooks/partner${options.webhooks?.secretPath ? `/${options.webhooks.secretPath}` : ''}`;
  if (options.registerWebhook !== false) {
    const notifyType = typeof options.registerWebhook === 'object' ? options.registerWebhook.notifyType : undefined;
    try {
      await partner.setNotificationUrl({ notification_url: webhookUrl, ...(notifyType ? { notify_type: notifyType } : {}) });
    } catch (error) {
      await closeServer(server);
      await cleanup();
      throw error;
    }
  }
  if (options.background !== false) app.pix.start();

  return {
    url,
    apiUrl: `${url}/api`,
    sandbox,
    partner,
    store,
    apiKey,
    dataDir,
    pix: app.pix,
    webhookUrl,
    async close() {
      shutdown.abort();
      await closeServer(server);
      await cleanup();
    },
  };
}
