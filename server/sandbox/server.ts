import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { getRequestListener } from '@hono/node-server';
import { Hono } from 'hono';
import { createPartnerApi, createPublicApp } from './app.ts';
import { createClock, type SandboxClock } from './clock.ts';
import { DEFAULT_ACCOUNT, SandboxState, type SandboxAccount } from './state.ts';
import { generateLocalhostCertificate } from './tls.ts';

export interface SandboxOptions {
  /** 0 (the default) picks a free port. */
  port?: number;
  host?: string;
  account?: SandboxAccount;
  clock?: SandboxClock;
}

export interface RunningSandbox {
  /** HTTPS base URL of the partner API. */
  url: string;
  /** The certificate to trust (PEM): the sandbox's own, made at start. */
  ca: string;
  state: SandboxState;
  /** QR image, hosted checkout and control API, to mount on another origin (the demo's). */
  publicApp: Hono;
  /** Where people reach `publicApp`: this server by default; set when mounting it elsewhere. */
  setPublicUrl(url: string): void;
  close(): Promise<void>;
}

export async function startSandbox(options: SandboxOptions = {}): Promise<RunningSandbox> {
  const host = options.host ?? '127.0.0.1';
  const state = new SandboxState(options.account ?? DEFAULT_ACCOUNT, options.clock ?? createClock());
  const tls = await generateLocalhostCertificate();
  let apiUrl = '';
  let publicUrl: string | null = null;
  const urls = { api: () => apiUrl, public: () => publicUrl ?? apiUrl };
  const publicApp = createPublicApp(state);
  const app = new Hono();
  app.route('/', publicApp);
  app.route('/', createPartnerApi(state, urls));

  const server: Server = createServer({ key: tls.key, cert: tls.cert }, getRequestListener(app.fetch));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  apiUrl = `https://${host.includes(':') ? `[${host}]` : host}:${port}`;

  return {
    url: apiUrl,
    ca: tls.cert,
    state,
    publicApp,
    setPublicUrl: (url) => {
      publicUrl = url.replace(/\/$/, '');
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
