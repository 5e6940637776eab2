/**
 * What stack/cluster.test.ts puts around several proxy instances: each instance a child process
 * (`node --import tsx server/main.ts`) that can be SIGKILLed and started again on its port; a small
 * round-robin front (the load balancer) that skips an instance refusing connections and pipes
 * streams; the merchant's webhook receiver, which checks signatures and counts duplicates by event
 * id; and a status stream read as a browser's EventSource would (it reconnects after `retry`,
 * through the front).
 */
import type { ChildProcess } from 'node:child_process';
import { Agent, createServer, request, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { verifyWebhookSignature } from '../../server/domain/signature.ts';
import { createPartnerClient } from '../../server/partner/client.ts';
import { DEFAULT_ACCOUNT } from '../../server/sandbox/state.ts';
import { alive, spawnProxy, untilHealthy } from './proxy-process.ts';

/** The partner settings of the sandbox's published test account: its URL, the account, and the CA file its certificate is in. */
export function sandboxPartnerEnv(sandboxUrl: string, caFile: string, userAgent = 'Loja Teste (dev@loja.example)') {
  return {
    PIX_BASE_URL: sandboxUrl,
    PIX_EMAIL: DEFAULT_ACCOUNT.email,
    PIX_ACCESS_KEY: DEFAULT_ACCOUNT.accessKey,
    PIX_USER_AGENT: userAgent,
    PIX_CA_FILE: caFile,
  };
}

/** Registers `notificationUrl` with the sandbox (at `sandbox.url`, its certificate `sandbox.ca`) for its published test account. */
export async function setSandboxNotificationUrl(sandbox: { url: string; ca: string }, userAgent: string, notificationUrl: string): Promise<void> {
  const partner = createPartnerClient({
    baseUrl: sandbox.url,
    ca: sandbox.ca,
    userAgent,
    credentials: { email: DEFAULT_ACCOUNT.email, accessKey: DEFAULT_ACCOUNT.accessKey },
  });
  await partner.setNotificationUrl({ notification_url: notificationUrl });
}

/** For a load generator whose every simulated customer comes from loopback: no per-address limits nor stream caps. */
export const LIMITS_OFF = {
  PIX_RATE_LIMIT_CREATE: '0',
  PIX_RATE_LIMIT_STATUS: '0',
  PIX_RATE_LIMIT_WEBHOOK: '0',
  PIX_STREAMS_PER_CLIENT: '0',
  PIX_STREAMS_PER_PAYMENT: '0',
} as const;

/**
 * What a proxy process (`server/main.ts`) needs to reach the sandbox at `sandboxUrl` with its default
 * account: the CA file `dir/ca.pem` (written by the caller), its token file in `dir` and its data in
 * `dir/data`. The caller adds its port, store and tuning.
 */
export function proxyEnv(sandboxUrl: string, dir: string, userAgent: string, apiKey: string) {
  return {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    ...sandboxPartnerEnv(sandboxUrl, join(dir, 'ca.pem'), userAgent),
    PIX_TOKEN_FILE: join(dir, 'token.json'),
    PIX_API_KEY: apiKey,
    PIX_DATA_DIR: join(dir, 'data'),
  };
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Waits for `check`, looking every `everyMs`; false when `ms` passed first (a guard, not a timing). */
export async function until(check: () => boolean | Promise<boolean>, ms: number, everyMs = 250): Promise<boolean> {
  const deadline = Date.now() + ms;
  for (;;) {
    if (await check()) return true;
    if (Date.now() > deadline) return false;
    await sleep(everyMs);
  }
}

async function closeServer(server: Server): Promise<void> {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
}

/**
 * POSTs to the sandbox's control API (`/_sandbox/...`) over HTTPS trusting its certificate, on
 * kept-alive connections (a TLS handshake per call would double the cost of paying). Such a
 * connection may be closed by the sandbox just as a call goes out: `send` then rejects, and the
 * caller must look at the sandbox's state before sending again what must not happen twice.
 */
export function sandboxControl(sandboxUrl: string, ca: string): { send: (path: string) => Promise<{ status: number; text: string }>; close(): void } {
  const agent = new HttpsAgent({ ca, keepAlive: true, maxSockets: 32 });
  const send = (path: string) =>
    new Promise<{ status: number; text: string }>((resolve, reject) => {
      const req = httpsRequest(new URL(`/_sandbox${path}`, sandboxUrl), { method: 'POST', agent }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      });
      req.on('error', reject);
      req.end();
    });
  return { send, close: () => agent.destroy() };
}

// --- The proxy instances -------------------------------------------------------------------------

export interface ProxyInstance {
  readonly name: string;
  readonly port: number;
  readonly origin: string;
  /** Processes started so far (2 after one restart). */
  readonly starts: number;
  /** Whether a process is running now (started and not yet exited). */
  running(): boolean;
  /** Starts a process and waits until /health answers 200 (30 s at most). */
  start(): Promise<void>;
  /** SIGKILL; resolves when the process has exited, with the moment the signal was sent. */
  kill(): Promise<{ signalledAt: number; exitedAt: number }>;
  /** The last lines the instance wrote on stderr (its error logs), for a failure's message. */
  stderrTail(): string;
}

export function proxyInstance(name: string, port: number, env: Record<string, string | undefined>): ProxyInstance {
  const origin = `http://127.0.0.1:${port}`;
  let child: ChildProcess | null = null;
  let starts = 0;
  const lines: string[] = [];

  return {
    name,
    port,
    origin,
    get starts() {
      return starts;
    },
    running: () => alive(child),
    async start() {
      if (alive(child)) throw new Error(`instance ${name} is already running`);
      starts++;
      const started = spawnProxy(port, env, (line, from) => {
        if (from === 'stdout') return;
        lines.push(line);
        if (lines.length > 200) lines.shift();
        process.stderr.write(`[instance ${name}#${starts}] ${line}\n`);
      });
      child = started;
      await untilHealthy(name, origin, started, () => `:\n${lines.slice(-30).join('\n')}`);
    },
    async kill() {
      const running = child;
      if (running === null || !alive(running)) throw new Error(`instance ${name} is not running`);
      const exited = new Promise((resolve) => running.once('exit', resolve));
      const signalledAt = Date.now();
      running.kill('SIGKILL');
      await exited;
      return { signalledAt, exitedAt: Date.now() };
    },
    stderrTail: () => lines.slice(-30).join('\n'),
  };
}

/** SIGKILLs every instance still running and waits for each to exit. */
export async function killAll(instances: readonly ProxyInstance[]): Promise<void> {
  await Promise.all(instances.filter((instance) => instance.running()).map((instance) => instance.kill()));
}

// --- The front -----------------------------------------------------------------------------------

export interface FrontCounts {
  /** Requests answered by this instance. */
  requests: number;
  /** Of which the partner's notifications (`/webhooks/partner`). */
  webhooks: number;
  /** Times the connection was refused (the instance down) and the next one tried. */
  refused: number;
}

export interface Front {
  url: string;
  counts: Map<string, FrontCounts>;
  /** For each payment reference named by a partner notification, the instance the first one went to. */
  firstWebhookTarget: Map<string, string>;
  /** Requests that failed other than by a refused connection (an instance killed mid-request): answered 502. */
  failed: number;
  /** Requests no instance took (all refused): answered 503. */
  unavailable: number;
  close(): Promise<void>;
}

/** The payment reference a partner notification names, if it can be read (JSON, either format). */
function notificationReference(raw: string): string | null {
  try {
    const body = JSON.parse(raw) as { external_reference?: unknown; data?: { external_reference?: unknown } };
    const reference = body.external_reference ?? body.data?.external_reference;
    return typeof reference === 'string' ? reference : null;
  } catch {
    return null;
  }
}

/**
 * A round-robin load balancer over `instances`: each request goes to the next instance; one that
 * refuses the connection (down) is skipped for the next. Bodies are read whole first (so a refused
 * request can go elsewhere); answers, streams included, are piped back.
 */
export async function startFront(instances: readonly ProxyInstance[]): Promise<Front> {
  // No keep-alive: a pooled socket to a killed instance would fail the next request that takes it.
  const agent = new Agent({ keepAlive: false });
  let next = 0;
  const front: Front = {
    url: '',
    counts: new Map(instances.map((instance) => [instance.name, { requests: 0, webhooks: 0, refused: 0 }])),
    firstWebhookTarget: new Map(),
    failed: 0,
    unavailable: 0,
    close: async () => {},
  };

  const forward = (instance: ProxyInstance, req: IncomingMessage, body: Buffer): Promise<IncomingMessage> =>
    new Promise((resolve, reject) => {
      const headers = { ...req.headers, host: `127.0.0.1:${instance.port}` };
      const upstream = request({ host: '127.0.0.1', port: instance.port, method: req.method, path: req.url, headers, agent }, resolve);
      upstream.on('error', reject);
      upstream.end(body);
    });

  const route = async (req: IncomingMessage, res: ServerResponse, body: Buffer): Promise<void> => {
    const webhook = (req.url ?? '').includes('/webhooks/partner');
    const start = next++;
    for (let i = 0; i < instances.length; i++) {
      const instance = instances[(start + i) % instances.length]!;
      const counts = front.counts.get(instance.name)!;
      let answer: IncomingMessage;
      try {
        answer = await forward(instance, req, body);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ECONNREFUSED') {
          counts.refused++;
          continue;
        }
        front.failed++;
        if (!res.headersSent) res.writeHead(502).end();
        return;
      }
      counts.requests++;
      if (webhook) {
        counts.webhooks++;
        const reference = notificationReference(body.toString('utf8'));
        if (reference !== null && !front.firstWebhookTarget.has(reference)) front.firstWebhookTarget.set(reference, instance.name);
      }
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      res.flushHeaders();
      answer.pipe(res);
      // The instance dying mid-answer (a stream): the client sees its connection end, as behind a real balancer.
      answer.on('error', () => res.destroy());
      answer.on('aborted', () => res.destroy());
      res.on('close', () => answer.destroy());
      return;
    }
    front.unavailable++;
    res.writeHead(503).end();
  };

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => void route(req, res, Buffer.concat(chunks)));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  front.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  front.close = async () => {
    await closeServer(server);
    agent.destroy();
  };
  return front;
}

// --- The merchant's receiver ---------------------------------------------------------------------

export interface Receipt {
  type: string;
  reference: string;
  /** When the first delivery of this event id arrived (epoch ms). */
  first: number;
  /** Deliveries of this event id (1 when not duplicated). */
  count: number;
}

export interface MerchantReceiver {
  url: string;
  /** By event id (the Pix-Checkout-Event-Id header). */
  receipts: Map<string, Receipt>;
  badSignatures: number;
  close(): Promise<void>;
}

export async function startMerchantReceiver(secret: string): Promise<MerchantReceiver> {
  const receiver: MerchantReceiver = { url: '', receipts: new Map(), badSignatures: 0, close: async () => {} };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      if (!verifyWebhookSignature(raw, req.headers['pix-checkout-signature'] as string | undefined, secret)) {
        receiver.badSignatures++;
        return void res.writeHead(400).end();
      }
      const id = req.headers['pix-checkout-event-id'] as string;
      const seen = receiver.receipts.get(id);
      if (seen) seen.count++;
      else {
        const event = JSON.parse(raw) as { type: string; data: { reference: string } };
        receiver.receipts.set(id, { type: event.type, reference: event.data.reference, first: Date.now(), count: 1 });
      }
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks/pix`;
  receiver.close = () => closeServer(server);
  return receiver;
}

// --- A status stream, read as EventSource would --------------------------------------------------

export interface StatusWatch {
  reference: string;
  /** The instance the stream was first opened on. */
  openedOn: string;
  /** Every status received, in order, over every connection. */
  statuses: string[];
  /** Connections opened (more than 1 after a reconnection). */
  connections: number;
  /** When a final status arrived (epoch ms). */
  finalAt: number | null;
  /** Answers other than 200 (each followed by a reconnection). */
  refusals: string[];
  /** Resolves when a final status arrived or the watch was closed. */
  done: Promise<void>;
  close(): void;
}

const FINAL = new Set(['paid', 'expired', 'canceled']);

/**
 * GET `firstUrl` and read its `event:`/`data:` lines; a connection that ends or fails before a final
 * status is opened again after the server's `retry` (3 s) at `reconnectUrl` (the front, where a
 * browser's EventSource would go: the URL it was given), until a final status or close().
 */
export function watchStatus(reference: string, openedOn: string, firstUrl: string, reconnectUrl: string): StatusWatch {
  const controller = new AbortController();
  let retryMs = 3000;
  const watch: StatusWatch = {
    reference,
    openedOn,
    statuses: [],
    connections: 0,
    finalAt: null,
    refusals: [],
    done: Promise.resolve(),
    close: () => controller.abort(),
  };

  const readOnce = async (url: string): Promise<void> => {
    watch.connections++;
    const res = await fetch(url, { signal: controller.signal, headers: { accept: 'text/event-stream' } });
    if (res.status !== 200 || !res.body) {
      watch.refusals.push(`${res.status} ${await res.text().catch(() => '')}`);
      return;
    }
    const decoder = new TextDecoder();
    const reader = res.body.getReader();
    let buffer = '';
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      buffer += decoder.decode(value, { stream: true }).replace(/\r\n?/g, '\n');
      for (let cut = buffer.indexOf('\n\n'); cut >= 0; cut = buffer.indexOf('\n\n')) {
        const block = buffer.slice(0, cut).split('\n');
        buffer = buffer.slice(cut + 2);
        let event = 'message';
        const data: string[] = [];
        for (const line of block) {
          if (line.startsWith(':')) continue;
          const colon = line.indexOf(':');
          const field = colon === -1 ? line : line.slice(0, colon);
          const value = colon === -1 ? '' : line.slice(colon + 1).replace(/^ /, '');
          if (field === 'event') event = value;
          else if (field === 'data') data.push(value);
          else if (field === 'retry' && /^\d+$/.test(value)) retryMs = Number(value);
        }
        if (event !== 'status' || data.length === 0) continue;
        const { status } = JSON.parse(data.join('\n')) as { status: string };
        watch.statuses.push(status);
        if (FINAL.has(status)) {
          watch.finalAt = Date.now();
          controller.abort();
          return;
        }
      }
    }
  };

  watch.done = (async () => {
    let url = firstUrl;
    while (!controller.signal.aborted) {
      try {
        await readOnce(url);
      } catch {
        // the connection failed or was cut (its instance killed): reconnect, as EventSource does
      }
      if (controller.signal.aborted) return;
      await sleep(retryMs);
      url = reconnectUrl;
    }
  })();
  return watch;
}
