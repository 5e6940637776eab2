import type { RequestListener } from 'node:http';
import { getRequestListener } from '@hono/node-server';
import type { Hono } from 'hono';
import { createPartnerApi } from './app.ts';
import { createClock, type SandboxClock } from './clock.ts';
import type { SandboxCustomer } from './customers.ts';
import { resolveDialect, type DialectName, type SandboxDialect } from './dialects.ts';
import { seededRandom } from './faults.ts';
import { createPublicApp } from './public.ts';
import { DEFAULT_ACCOUNT, SandboxState, type BankTiming, type SandboxAccount } from './state.ts';
import { generateLocalhostCertificate } from './tls.ts';
import { PLAIN_HTTP_REFUSAL, listenHttpsOnly } from './transport.ts';
import type { WebhookOptions } from './webhooks.ts';

export interface SandboxOptions {
  /** 0 (the default) picks a free port. */
  port?: number;
  host?: string;
  account?: SandboxAccount;
  clock?: SandboxClock;
  /** The customer registry's first customers; default TEST_CUSTOMERS. */
  customers?: readonly SandboxCustomer[];
  /** How long the customers' banks take to answer a transfer (sandbox seconds). */
  bank?: BankTiming;
  /** Webhook attempt timeout and pause between attempts (real ms). */
  webhooks?: WebhookOptions;
  /**
   * How often (real ms) the sandbox settles what fell due as real time passes, e.g. a bank's answer
   * in the demo. Default 250; 0 turns it off, leaving the clock's jumps and requests to do it.
   */
  settleIntervalMs?: number;
  /** Seed of the fault-injection dice, so a fault at rate 0.5 strikes the same requests every run. */
  faultSeed?: number;
  /**
   * How it answers what the spec does not show (dialects.ts): a name of DIALECT_NAMES or a dialect of
   * your own. Default `default` (ASSUMPTIONS.md); `PUT /_sandbox/dialect` switches it later.
   */
  dialect?: DialectName | SandboxDialect;
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

/** Paths of publicApp on the sandbox's own origin; everything else is the partner API. */
const PUBLIC_PATH = /^\/(?:qr|checkout|_sandbox)(?:\/|$)/;

export async function startSandbox(options: SandboxOptions = {}): Promise<RunningSandbox> {
  const host = options.host ?? '127.0.0.1';
  const state = new SandboxState(options.account ?? DEFAULT_ACCOUNT, options.clock ?? createClock(), {
    bank: options.bank,
    webhooks: options.webhooks,
    customers: options.customers,
    random: options.faultSeed === undefined ? undefined : seededRandom(options.faultSeed),
    dialect: resolveDialect(options.dialect),
  });
  const tls = await generateLocalhostCertificate();
  let apiUrl = '';
  let publicUrl: string | null = null;
  const urls = { api: () => apiUrl, public: () => publicUrl ?? apiUrl };
  const publicApp = createPublicApp(state);
  const partnerApi = createPartnerApi(state, urls);

  const handle = getRequestListener((request, env) => {
    const app = PUBLIC_PATH.test(new URL(request.url).pathname) ? publicApp : partnerApi;
    return app.fetch(request, env);
  });
  const listener: RequestListener = (req, res) => void handle(req, res);
  const server = await listenHttpsOnly({
    port: options.port ?? 0,
    host,
    key: tls.key,
    cert: tls.cert,
    listener,
    refusalBody: () => state.dialect.errorBody({ kind: 'request', status: PLAIN_HTTP_REFUSAL.status, message: PLAIN_HTTP_REFUSAL.body.message }),
  });
  apiUrl = `https://${host.includes(':') ? `[${host}]` : host}:${server.port}`;

  const intervalMs = options.settleIntervalMs ?? 250;
  const settling = intervalMs > 0 ? setInterval(() => state.settleDue(), intervalMs) : null;
  settling?.unref();

  return {
    url: apiUrl,
    ca: tls.cert,
    state,
    publicApp,
    setPublicUrl: (url) => {
      publicUrl = url.replace(/\/$/, '');
    },
    async close() {
      if (settling) clearInterval(settling);
      await Promise.all([server.close(), state.webhooks.close()]);
    },
  };
}
