/**
 * The whole stack on one machine with no credentials: the sandbox (HTTPS, its own port) and, on one
 * HTTP origin, the proxy's browser API at /api and the sandbox's public pages and control API at
 * /sandbox. `npm start`, the browser tests and the node tests all start it the same way.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { getRequestListener } from '@hono/node-server';
import type { Hono } from 'hono';
import { createApp } from './app.ts';
import { SANDBOX_DEFAULTS } from './config.ts';
import { startSandbox, type RunningSandbox } from './sandbox/server.ts';
import { createPartnerClient, type PartnerClient } from './upstream/client.ts';

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
}

export interface DevStack {
  /** The HTTP origin: demo page, /api, /sandbox. */
  url: string;
  /** The browser API base, the widget's `endpoint`. */
  apiUrl: string;
  sandbox: RunningSandbox;
  partner: PartnerClient;
  close(): Promise<void>;
}

export async function startDevStack(options: DevStackOptions = {}): Promise<DevStack> {
  const host = options.host ?? '127.0.0.1';
  const sandbox = await startSandbox();
  const partner = createPartnerClient({
    baseUrl: sandbox.url,
    ca: sandbox.ca,
    userAgent: SANDBOX_DEFAULTS.userAgent,
    credentials: { email: SANDBOX_DEFAULTS.email, accessKey: SANDBOX_DEFAULTS.accessKey },
  });

  // The proxy reads the sandbox's clock, so advancing it expires QR codes on every screen at once.
  const app = createApp({
    partner,
    allowedOrigins: options.allowedOrigins ?? ['*'],
    expirationSeconds: options.expirationSeconds,
    streams: options.streams,
    watchIntervalMs: options.watchIntervalMs,
    now: sandbox.state.clock.now,
  });
  app.route('/sandbox', sandbox.publicApp);
  options.mount?.(app);

  const server: Server = createServer(getRequestListener(app.fetch));
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(options.port ?? 0, host, () => resolve());
    });
  } catch (error) {
    await sandbox.close();
    throw error;
  }
  const { port } = server.address() as AddressInfo;
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
  sandbox.setPublicUrl(`${url}/sandbox`);

  return {
    url,
    apiUrl: `${url}/api`,
    sandbox,
    partner,
    async close() {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      await sandbox.close();
    },
  };
}
