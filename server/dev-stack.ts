/**
 * `pix-checkout-server/sandbox`: the sandbox, and the whole stack on one machine with no credentials. The
 * dev stack is createProxy in sandbox mode (proxy.ts) on one HTTP origin, with the proxy's API at
 * /api and the sandbox's public pages and control API at /sandbox, and the proxy's webhook URL
 * registered with the sandbox. `npm start`, `pix-checkout serve` in sandbox mode, the browser tests
 * and the node tests all start it the same way. Open amounts are on (the demo chooses its amount);
 * rate limits are off (tests and the demo come from one address); the store lives in a fresh
 * temporary directory, because the sandbox's payments live in memory and die with it.
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Hono } from 'hono';
import { LIMITS } from '../src/shared/limits.ts';
import type { PixApp, PixRuntime } from './app.ts';
import { ConfigError, proxyConfig, readSettings, type AppSettings, type ProxyConfig } from './config/index.ts';
import type { OutcomeEvent } from './domain/outcomes.ts';
import { closeServer } from './http/close-server.ts';
import { createNodeServer, nodeListener } from './http/node-listener.ts';
import { createLogger, type Logger } from './log.ts';
import type { PartnerClient } from './partner/client.ts';
import { createProxy } from './proxy.ts';
import { WEBHOOK_PATH } from './routes/webhooks.ts';
import { startSandbox, type RunningSandbox, type SandboxOptions } from './sandbox-mode.ts';
import type { Store } from './store/store.ts';

export { startSandbox, type RunningSandbox, type SandboxOptions } from './sandbox-mode.ts';

/** createApp's settings (any left out take sandbox mode's values) and what only the dev stack has. */
export interface DevStackOptions extends Omit<AppSettings, 'merchantWebhook'> {
  /** Port of the HTTP origin (0, the default, picks a free one). */
  port?: number;
  host?: string;
  /** Routes of the page being served (the demo), added after the proxy's own. */
  mount?: (app: Hono) => void;
  /** Default: JSON lines on stdout at PIX_LOG_LEVEL, else `warn`. */
  logger?: Logger;
  /** Keep the store here instead of a fresh temporary directory (kept on close). */
  dataDir?: string;
  /** Keep the store in this Postgres database instead (PIX_DATABASE_URL): stacks given the same one are instances of one proxy. */
  databaseUrl?: string;
  /** With `databaseUrl`: how long a claim lasts (PIX_CLAIM_SECONDS, in ms). */
  claimMs?: number;
  /** Use this running sandbox (not closed on close) instead of starting one: a proxy restart. */
  sandbox?: RunningSandbox;
  /** How the stack's own sandbox answers (`startSandbox({dialect})`); not with `sandbox`, which keeps its own. */
  dialect?: SandboxOptions['dialect'];
  /** Register the proxy's webhook endpoint as the sandbox's notification URL (default true). */
  registerWebhook?: boolean | { notifyType?: 1 | 2 };
  /**
   * The merchant's backend, told of every outcome by a signed POST. With `path` instead of `url`, a
   * route of the page added with `mount` (the demo shop's receiver), resolved against this stack's
   * own URL once its port is known.
   */
  merchantWebhook?: AppSettings['merchantWebhook'] | (Omit<NonNullable<AppSettings['merchantWebhook']>, 'url'> & { path: string });
  onOutcome?: (event: OutcomeEvent) => void;
  /** Start the reconciler and delivery worker (default true); tests drive them with runOnce(). */
  background?: boolean;
  /** Deadline of each partner call. */
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
  /** The app itself: `app.request('/api/…')` asks the proxy with no socket (tests). */
  app: PixApp;
  /** Where the partner's notifications are received. */
  webhookUrl: string;
  /** Ends status streams, finishes in-flight requests, stops the servers and removes a temporary store. */
  close(): Promise<void>;
}

/** The dev stack's own logs: at PIX_LOG_LEVEL when it is set (read as the proxy reads it), else only warnings. */
function logLevel(): ProxyConfig['logLevel'] {
  const { values, problems, given } = readSettings(process.env, ['PIX_LOG_LEVEL']);
  if (problems.length > 0) throw new ConfigError(problems);
  return given.has('PIX_LOG_LEVEL') ? values.PIX_LOG_LEVEL : 'warn';
}

export async function startDevStack(options: DevStackOptions = {}): Promise<DevStack> {
  const {
    port,
    host = '127.0.0.1',
    mount,
    logger: given,
    dataDir,
    databaseUrl,
    claimMs,
    sandbox,
    registerWebhook,
    merchantWebhook,
    onOutcome,
    background,
    partnerTimeoutMs,
    dialect,
    ...settings
  } = options;
  if (dialect !== undefined && sandbox) throw new TypeError('startDevStack: give `dialect` or `sandbox`, not both (a sandbox handed in keeps its dialect)');
  const logger = given ?? createLogger({ level: logLevel() });

  // Listening before the proxy is built tells its URL to what needs it (a merchant webhook `path`);
  // the app is attached below with no await in between, so no request can come first.
  const server: Server = createNodeServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port ?? 0, host, () => resolve());
  });
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${(server.address() as AddressInfo).port}`;

  // Sandbox mode's configuration (an empty environment), then the dev stack's own defaults, then the caller's settings.
  const base = proxyConfig({});
  const config: ProxyConfig = {
    ...base,
    openAmount: { min: LIMITS.paymentValue.min, max: LIMITS.paymentValue.max },
    rateLimits: false,
    publicUrl: url,
    ...(Object.fromEntries(Object.entries(settings).filter(([, value]) => value !== undefined)) as Partial<ProxyConfig>),
    merchantWebhook:
      merchantWebhook && 'path' in merchantWebhook ? (({ path, ...rest }) => ({ ...rest, url: new URL(path, url).href }))(merchantWebhook) : merchantWebhook,
    partner: { ...base.partner, timeoutMs: partnerTimeoutMs ?? base.partner.timeoutMs },
    database: databaseUrl ? { url: databaseUrl, poolSize: base.cluster.poolSize, claimMs: claimMs ?? base.cluster.claimMs } : undefined,
  };
  // A dialect needs the stack's own sandbox, started here and closed with the stack.
  let own: RunningSandbox | undefined;
  let proxy;
  try {
    if (dialect !== undefined) own = await startSandbox({ dialect });
    proxy = await createProxy(config, logger, { sandbox: sandbox ?? own, dataDir, onOutcome, background: false });
  } catch (error) {
    await closeServer(server);
    await own?.close();
    throw error;
  }
  const running = proxy.sandbox!;
  const close = async () => {
    proxy.endStreams();
    await closeServer(server);
    await proxy.close();
    await own?.close();
  };
  proxy.app.route('/sandbox', running.publicApp);
  mount?.(proxy.app);
  server.on('request', nodeListener(proxy.app.fetch, proxy.app.pix.fastPath));
  running.setPublicUrl(`${url}/sandbox`);

  const apiUrl = `${url}${config.basePath}`;
  const webhookUrl = `${apiUrl}${WEBHOOK_PATH}${config.webhooks.secretPath ? `/${config.webhooks.secretPath}` : ''}`;
  if (registerWebhook !== false) {
    const notifyType = typeof registerWebhook === 'object' ? registerWebhook.notifyType : undefined;
    try {
      await proxy.partner.setNotificationUrl({ notification_url: webhookUrl, ...(notifyType ? { notify_type: notifyType } : {}) });
    } catch (error) {
      await close();
      throw error;
    }
  }
  if (background !== false) proxy.app.pix.start();

  return {
    url,
    apiUrl,
    sandbox: running,
    partner: proxy.partner,
    store: proxy.store,
    apiKey: config.apiKey,
    dataDir: proxy.dataDir,
    pix: proxy.app.pix,
    app: proxy.app,
    webhookUrl,
    close,
  };
}
