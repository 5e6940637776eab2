/**
 * The demo on one origin: the store page and its backend (/shop, demo/shop-backend.ts), the widget's
 * script-tag bundle as the proxy serves it to any merchant page (/api/pix-checkout.js, made by
 * `npm run build`), the proxy (/api) and the
 * sandbox's pages and control API (/sandbox), all from startDevStack(). `npm start` (demo/main.ts),
 * the end-to-end tests and the screenshots script start it the same way.
 */
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { serveStatic } from '@hono/node-server/serve-static';
import type { Hono } from 'hono';
// The package's entries: pix-checkout-server/sandbox, pix-checkout-server, pix-checkout-server/shared.
import { startDevStack, type DevStack, type DevStackOptions } from '../server/dev-stack.ts';
import type { Logger } from '../server/index.ts';
import { errorBody } from '../src/shared/index.ts';
import { createShop, type Shop } from './shop-backend.ts';

export interface DemoOptions {
  /** Port of the HTTP origin (0, the default, picks a free one). */
  port?: number;
  host?: string;
  /**
   * The shop's own notion of where it runs: true (the default) says "sandbox", so the page shows the
   * test panel and /shop/test/* answers. False is the shop as it would be deployed against the real
   * service (the stack underneath is still the sandbox, as nothing else runs without credentials).
   */
  sandbox?: boolean;
  logger?: Logger;
  /** Anything else for the stack (watch interval, expiration, renewals...). */
  stack?: Omit<DevStackOptions, 'port' | 'host' | 'mount' | 'merchantWebhook' | 'logger'>;
}

export interface RunningDemo {
  /** The page: http://host:port/ */
  url: string;
  stack: DevStack;
  shop: Shop;
  close(): Promise<void>;
}

const ROOT = fileURLToPath(new URL('..', import.meta.url));
/** Only the page's assets: never the demo's TypeScript sources. */
const ASSET = /^\/demo\/(?:img\/)?[a-z0-9-]+\.(?:js|css|svg)$/;

export function mountDemoPages(app: Hono): void {
  const noStore = { 'cache-control': 'no-store' };
  const index = serveStatic({ path: `${ROOT}demo/index.html`, onFound: (_path, c) => c.header('cache-control', 'no-store') });
  app.get('/', index);
  app.get('/playground', (c) => c.redirect('/#playground'));
  app.get('/demo/*', async (c, next) => (ASSET.test(c.req.path) ? next() : c.json(errorBody('not_found', 'No such file.'), 404, noStore)));
  app.get('/demo/*', serveStatic({ root: ROOT, onFound: (_path, c) => c.header('cache-control', 'no-store') }));
}

export async function startDemo(options: DemoOptions = {}): Promise<RunningDemo> {
  const webhookSecret = randomBytes(32).toString('hex');
  let stack: DevStack | undefined;
  const shop = createShop({
    sandbox: options.sandbox ?? true,
    webhookSecret,
    proxy: () => (stack ? { apiUrl: stack.apiUrl, apiKey: stack.apiKey, origin: stack.url } : undefined),
  });
  stack = await startDevStack({
    // The sandbox notifies the proxy through a secret path: an authenticated intake, so a notification's
    // words count (a return the test panel asks for is recorded).
    webhooks: { secretPath: randomBytes(16).toString('hex') },
    ...options.stack,
    port: options.port ?? 0,
    host: options.host,
    logger: options.logger,
    // The shop's receiver on this same origin; the proxy signs every outcome it sends there.
    merchantWebhook: { path: '/shop/webhooks/pix', secret: webhookSecret, retryScheduleMs: [2000, 4000, 8000, 16_000, 32_000, 60_000] },
    mount(app) {
      app.route('/', shop.app);
      mountDemoPages(app);
    },
  });
  const running = stack;
  return {
    url: running.url,
    stack: running,
    shop,
    close: () => running.close(),
  };
}
