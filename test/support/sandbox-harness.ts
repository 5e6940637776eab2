/**
 * What the sandbox conformance suite (test/node/sandbox/*.test.ts) shares: a sandbox on a frozen
 * clock (time moves only when a test moves it, so every bound is exact), an HTTPS client that trusts
 * its certificate, a webhook receiver on a real HTTP port, and a wait that is a guard, not a timing.
 */
import assert from 'node:assert/strict';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { Agent, request } from 'node:https';
import type { AddressInfo } from 'node:net';
import { formatAmount, parseBrCode } from '../../src/shared/brcode.ts';
import { fillPath } from '../../src/shared/wire.ts';
import { CreatePartnerPaymentResponse, LoginResponse, PARTNER_PATHS } from '../../server/partner/wire.ts';
import { createClock } from '../../server/sandbox/clock.ts';
import { startSandbox, type RunningSandbox, type SandboxOptions } from '../../server/sandbox/server.ts';
import { DEFAULT_ACCOUNT } from '../../server/sandbox/state.ts';

/** Calls `done` with the whole body of a request or an answer, as text. */
function readWhole(stream: NodeJS.ReadableStream, done: (text: string) => void): void {
  const chunks: Buffer[] = [];
  stream.on('data', (chunk: Buffer) => chunks.push(chunk));
  stream.on('end', () => done(Buffer.concat(chunks).toString('utf8')));
}

/** A body read as JSON; undefined when it is empty or not JSON. */
function jsonOf(text: string): unknown {
  try {
    return text ? JSON.parse(text) : undefined;
  } catch {
    return undefined;
  }
}

export const UA = 'Loja Teste (dev@loja.example)';
/** 2030-01-01T00:00:00Z: where the frozen clock starts. */
export const T0 = Date.UTC(2030, 0, 1);
export const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
export const TIMESTAMP_PATTERN = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/;

export interface Reply {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
  /** The parsed body; undefined when empty or not JSON. */
  json: any;
}

export interface SendOptions {
  /** A token, or false for no Authorization header. Default: the harness's own token. */
  token?: string | false;
  /** Extra headers; a value of null removes a default one. */
  headers?: Record<string, string | null>;
  /** A value to send as JSON, or a raw string/Buffer with `raw`. */
  body?: unknown;
  raw?: string | Buffer;
}

export interface Harness {
  sandbox: RunningSandbox;
  token: string;
  /** A request to the partner API with the spec's headers (override any with `headers`). */
  api(method: string, path: string, options?: SendOptions): Promise<Reply>;
  /** A request to the control API (/_sandbox/...), JSON in and out. */
  control(method: string, path: string, body?: unknown): Promise<Reply>;
  /** Creates a payment, checks the 201 and its BR Code, and returns the response's data. */
  createPayment(body?: Record<string, unknown>): Promise<ReturnType<typeof CreatePartnerPaymentResponse.parse>['data']>;
  /** Moves the sandbox clock forward through the control API. */
  advance(seconds: number): Promise<void>;
  close(): Promise<void>;
}

/** Raw HTTPS to a sandbox, trusting its certificate: the answer's status, headers, text and JSON (if any). */
export function sandboxSender(sandbox: RunningSandbox): {
  send: (method: string, path: string, headers: Record<string, string>, body?: string | Buffer) => Promise<Reply>;
  agent: Agent;
} {
  const agent = new Agent({ ca: sandbox.ca, keepAlive: true });
  const send = (method: string, path: string, headers: Record<string, string>, body?: string | Buffer) =>
    new Promise<Reply>((resolve, reject) => {
      const req = request(new URL(path, sandbox.url), { method, headers, agent }, (res) => {
        readWhole(res, (text) => resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json: jsonOf(text) }));
        res.on('error', reject);
      });
      req.on('error', reject);
      req.end(body);
    });
  return { send, agent };
}

export async function startHarness(options: SandboxOptions = {}): Promise<Harness> {
  const sandbox = await startSandbox({
    clock: createClock(() => T0),
    settleIntervalMs: 0,
    // Generous for a receiver under load; the timeout test sets its own short one.
    webhooks: { timeoutMs: 2000, retryDelayMs: 5 },
    bank: { answerAfterSeconds: 60, lateAnswerAfterSeconds: 7200 },
    faultSeed: 42,
    ...options,
  });
  const { send, agent } = sandboxSender(sandbox);

  const harness: Harness = {
    sandbox,
    token: '',
    api(method, path, options = {}) {
      const headers: Record<string, string | null> = { 'user-agent': UA, accept: 'application/json' };
      const token = options.token ?? harness.token;
      if (token !== false) headers.authorization = `Bearer ${token}`;
      let payload: string | Buffer | undefined = options.raw;
      if (options.body !== undefined) payload = JSON.stringify(options.body);
      if (payload !== undefined) {
        headers['content-type'] = 'application/json';
        // Node sends a GET's body unframed without it.
        headers['content-length'] = String(Buffer.byteLength(payload));
      }
      Object.assign(headers, options.headers);
      const clean = Object.fromEntries(Object.entries(headers).filter((entry): entry is [string, string] => entry[1] !== null));
      return send(method, path, clean, payload);
    },
    control(method, path, body) {
      const headers: Record<string, string> = {};
      if (body !== undefined) headers['content-type'] = 'application/json';
      return send(method, `/_sandbox${path}`, headers, body === undefined ? undefined : JSON.stringify(body));
    },
    async createPayment(body = {}) {
      const value = (body.value as number | undefined) ?? 10;
      const res = await harness.api('POST', PARTNER_PATHS.createPayment, { body: { value, tenant_id: DEFAULT_ACCOUNT.tenant.id, ...body } });
      assert.equal(res.status, 201, res.text);
      const data = CreatePartnerPaymentResponse.parse(res.json).data;
      assertValidBrCode(data.pix_key, value);
      return data;
    },
    async advance(seconds) {
      const res = await harness.control('POST', '/clock/advance', { seconds });
      assert.equal(res.status, 200, res.text);
    },
    async close() {
      agent.destroy();
      await sandbox.close();
    },
  };
  const login = await harness.api('POST', PARTNER_PATHS.login, { token: false, body: { email: DEFAULT_ACCOUNT.email, access_key: DEFAULT_ACCOUNT.accessKey } });
  assert.equal(login.status, 200, login.text);
  harness.token = LoginResponse.parse(login.json).data.access_token;
  return harness;
}

/** Every BR Code the sandbox emits must parse, pass its CRC, be dynamic and carry the amount. */
export function assertValidBrCode(pixKey: string, value: number): void {
  const parsed = parseBrCode(pixKey);
  assert.ok(parsed.ok, `BR Code invalid: ${parsed.ok ? '' : parsed.message}`);
  assert.equal(parsed.code.dynamic, true);
  assert.equal(parsed.code.txid, '***');
  assert.equal(parsed.code.pointOfInitiation, 'dynamic');
  assert.equal(parsed.code.amount, formatAmount(value));
}

export const paymentPath = (template: string, reference: string) => fillPath(template, { external_reference: reference });

export { waitFor } from './checks.ts';

export interface ReceivedWebhook {
  headers: IncomingHttpHeaders;
  body: any;
  text: string;
}

export interface Receiver {
  url: string;
  received: ReceivedWebhook[];
  /** How to answer the n-th request (1-based): a status, or 'hang' to never answer. */
  answer: (n: number) => number | 'hang';
  close(): Promise<void>;
}

/** A webhook receiver on a real HTTP port (127.0.0.1, port 0). */
export async function startReceiver(answer: Receiver['answer'] = () => 200): Promise<Receiver> {
  const receiver: Receiver = { url: '', received: [], answer, close: async () => {} };
  const server: Server = createServer((req, res) => {
    readWhole(req, (text) => {
      receiver.received.push({ headers: req.headers, body: jsonOf(text), text });
      const reply = receiver.answer(receiver.received.length);
      if (reply === 'hang') return;
      res.writeHead(reply, { 'content-type': 'text/plain' }).end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks/pix`;
  receiver.close = () =>
    new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  return receiver;
}
