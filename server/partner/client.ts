/**
 * The client of the partner service: the one place that speaks its wire format (src/shared/partner.ts).
 * One typed method per operation of the spec. Inputs are checked against the spec before anything is
 * sent; answers are parsed, tolerant of extra fields and strict about the ones used, so that a bad
 * answer is an error naming the field rather than a crash further in.
 *
 * Safety: reads, HEAD and login are retried with backoff and jitter; creating a payment or a transfer
 * is never repeated. It carries a `transaction_id`, and when its outcome is unknown the error says
 * so and names that id, for reconciliation.
 */
import { randomUUID } from 'node:crypto';
import { Agent } from 'node:https';
import type { z } from 'zod/mini';
import { fillPath } from '../../src/shared/wire.ts';
import { issuesToFields, parseInput, type Issue } from '../../src/shared/errors.ts';
import {
  CreatePartnerPaymentRequest,
  CreatePartnerPaymentResponse,
  KeyTransferRequest,
  LoginResponse,
  NOTIFY_TYPE,
  NotificationUrlRequest,
  NotificationUrlResponse,
  PARTNER_PATHS,
  PAYMENT_CHECK_HTTP,
  PartnerErrorResponse,
  PartnerPaymentResponse,
  PartnerTransferResponse,
  SolicitTransferRequest,
  TenantResponse,
  type NotifyType,
  type PartnerPaymentRecord,
  type PartnerTransferRecord,
} from './wire.ts';
import { PartnerError, redact } from './errors.ts';
import { HttpTimeoutError, httpsExchange, type HttpResponse } from './http.ts';
import { memoryTokenStore, type TokenStore } from './token-store.ts';

export interface PartnerClientOptions {
  /** https:// base URL of the service (or of the sandbox). */
  baseUrl: string;
  /** Used to log in when there is no token, and again when the token is refused. */
  credentials?: { email: string; accessKey: string } | null;
  /** A token from an earlier login; it lives 5 years. */
  token?: string | null;
  /** Keeps the token from a login across restarts (default: memory only). */
  tokenStore?: TokenStore;
  /** `Company (contact@example.com)`, required by the service on every request. */
  userAgent: string;
  /** Extra certificate authority to trust, PEM (the sandbox's certificate). */
  ca?: string | null;
  /** Deadline of each attempt. */
  timeoutMs?: number;
  /** Attempts of a safe operation (read, HEAD, login, notification URL) before giving up. */
  attempts?: number;
  /** First backoff delay; doubled at each retry, with jitter. */
  backoffMs?: number;
  /** One line per attempt: operation, status, duration. Never headers, bodies or secrets. */
  log?: (entry: PartnerLogEntry) => void;
}

export interface PartnerLogEntry {
  operation: string;
  method: string;
  path: string;
  attempt: number;
  /** HTTP status, or 0 when no answer came. */
  status: number;
  durationMs: number;
  outcome: 'ok' | 'retry' | 'error';
}

export type CreatePaymentInput = Omit<CreatePartnerPaymentRequest, 'tenant_id'>;

export interface CreatedPayment {
  externalReference: string;
  pixKey: string;
  qrCodeUrl: string;
  checkoutUrl: string;
  createdAt: string;
  /** The partner-side `transaction_id` the request carried. */
  transactionId: string;
}

/** What the quick check (4.4) says of a payment. */
export type PaymentCheck = 'paid' | 'pending' | 'canceled';

export interface PartnerClient {
  login(): Promise<void>;
  getTenant(): Promise<{ id: string; name: string }>;
  createPayment(input: CreatePaymentInput): Promise<CreatedPayment>;
  checkPayment(externalReference: string): Promise<PaymentCheck>;
  getPayment(externalReference: string): Promise<PartnerPaymentRecord>;
  solicitTransferForCustomer(input: SolicitTransferRequest): Promise<PartnerTransferRecord>;
  transferToKey(input: KeyTransferRequest): Promise<PartnerTransferRecord>;
  checkTransfer(externalReference: string): Promise<PartnerTransferRecord>;
  setNotificationUrl(input: { notification_url: string; notify_type?: NotifyType }): Promise<{ notificationUrl: string; notifyType: NotifyType }>;
}

interface Call<T> {
  operation: string;
  method: 'GET' | 'POST' | 'PATCH' | 'HEAD';
  path: string;
  body?: unknown;
  /** How to read a 2xx answer. */
  read: (res: HttpResponse) => T;
  authenticated?: boolean;
  /** Safe to repeat: a retry cannot do anything twice. */
  idempotent: boolean;
  transactionId?: string;
}

function describeIssues(issues: readonly Issue[]): string {
  return Object.entries(issuesToFields(issues))
    .map(([field, problem]) => `${field} ${problem}`)
    .join('; ');
}

const NOT_SENT = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'CERT_HAS_EXPIRED',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'ERR_TLS_CERT_ALTNAME_INVALID',
]);

/** Where a login's token is kept in a TokenStore: one per service and account. */
export function tokenStoreKey(baseUrl: string, email: string | undefined): string {
  return `${new URL(baseUrl).origin}|${email ?? 'token'}`;
}

/** What a client is created with when its options leave these out. */
export const PARTNER_CLIENT_DEFAULTS = {
  /** Deadline of each attempt. */
  timeoutMs: 10_000,
  /** Attempts of a safe operation (read, HEAD, login, notification URL). */
  attempts: 3,
  /** First pause between attempts, doubled each time, with jitter. */
  backoffMs: 250,
} as const;

export function createPartnerClient(options: PartnerClientOptions): PartnerClient {
  const base = new URL(options.baseUrl);
  if (base.protocol !== 'https:') throw new TypeError('the partner service is reached over https:// only');
  const agent = new Agent({ keepAlive: true, ...(options.ca ? { ca: options.ca } : {}) });
  const timeoutMs = options.timeoutMs ?? PARTNER_CLIENT_DEFAULTS.timeoutMs;
  const attempts = Math.max(1, options.attempts ?? PARTNER_CLIENT_DEFAULTS.attempts);
  const backoffMs = options.backoffMs ?? PARTNER_CLIENT_DEFAULTS.backoffMs;
  const store = options.tokenStore ?? memoryTokenStore();
  const storeKey = tokenStoreKey(options.baseUrl, options.credentials?.email);
  let token: string | null = options.token ?? null;
  // The saved token is read once; callers arriving meanwhile wait for that one read.
  let tokenLoad: Promise<void> | null = token !== null ? Promise.resolve() : null;
  let loggingIn: Promise<void> | null = null;
  let tenant: Promise<{ id: string; name: string }> | null = null;

  function parse<T>(operation: string, schema: z.ZodMiniType<T>, res: HttpResponse): T {
    let json: unknown;
    try {
      json = JSON.parse(res.body);
    } catch {
      throw new PartnerError('unavailable', `${operation}: the partner service answered HTTP ${res.status} with a body that is not JSON`, {
        operation,
        status: res.status,
      });
    }
    const parsed = schema.safeParse(json);
    if (!parsed.success) {
      throw new PartnerError('unavailable', `${operation}: unexpected answer from the partner service: ${describeIssues(parsed.error.issues)}`, {
        operation,
        status: res.status,
      });
    }
    return parsed.data;
  }

  async function ensureToken(): Promise<void> {
    if (token !== null) return;
    tokenLoad ??= store.load(storeKey).then(
      (saved) => {
        token ??= saved;
      },
      // An unreadable saved token is no token: log in, as on a first start.
      () => undefined,
    );
    await tokenLoad;
    if (token === null) await login();
  }

  async function attempt<T>(call: Call<T>, number: number): Promise<T> {
    const headers: Record<string, string> = { 'user-agent': options.userAgent, accept: 'application/json' };
    if (call.authenticated !== false) headers.authorization = `Bearer ${token}`;
    let payload: string | undefined;
    if (call.body !== undefined) {
      payload = JSON.stringify(call.body);
      headers['content-type'] = 'application/json';
      headers['content-length'] = String(Buffer.byteLength(payload));
    }
    const started = performance.now();
    const logLine = (status: number, outcome: PartnerLogEntry['outcome']) =>
      options.log?.({
        operation: call.operation,
        method: call.method,
        path: call.path,
        attempt: number,
        status,
        durationMs: Math.round(performance.now() - started),
        outcome,
      });
    const unknown = call.idempotent ? {} : { outcomeUnknown: true, transactionId: call.transactionId };

    let res: HttpResponse;
    try {
      res = await httpsExchange(agent, { method: call.method, url: new URL(call.path, base), headers, body: payload, timeoutMs });
    } catch (error) {
      logLine(0, 'error');
      if (error instanceof HttpTimeoutError) {
        throw new PartnerError('timeout', `${call.operation}: the partner service did not answer within ${timeoutMs} ms`, {
          operation: call.operation,
          ...unknown,
        });
      }
      const code = (error as NodeJS.ErrnoException).code ?? '';
      const reason = code || (error instanceof Error ? error.message : String(error));
      throw new PartnerError('unavailable', `${call.operation}: the partner service could not be reached (${reason})`, {
        operation: call.operation,
        ...(NOT_SENT.has(code) ? {} : unknown),
      });
    }
    if (res.status >= 200 && res.status <= 299) {
      try {
        const value = call.read(res);
        logLine(res.status, 'ok');
        return value;
      } catch (error) {
        logLine(res.status, 'error');
        throw error;
      }
    }
    logLine(res.status, 'error');
    throw toError(call.operation, res, unknown);
  }

  async function send<T>(call: Call<T>): Promise<T> {
    if (call.authenticated !== false) await ensureToken();
    let relogged = false;
    for (let number = 1; ; number++) {
      try {
        return await attempt(call, number);
      } catch (error) {
        if (!(error instanceof PartnerError)) throw error;
        // A refused token: log in again once and repeat the same request once. Safe even for a
        // create, because a 401 means the service did not act on it.
        if (error.kind === 'unauthorized' && call.authenticated !== false && !relogged && options.credentials) {
          relogged = true;
          token = null;
          await store.clear(storeKey);
          await login();
          number--;
          continue;
        }
        const transient = error.kind === 'unavailable' || error.kind === 'timeout';
        if (!transient || !call.idempotent || number >= attempts) throw error;
        const delay = backoffMs * 2 ** (number - 1);
        await new Promise((resolve) => setTimeout(resolve, delay / 2 + Math.random() * (delay / 2)));
      }
    }
  }

  function login(): Promise<void> {
    // Calls that find no token while a login is under way wait for that one login.
    loggingIn ??= (async () => {
      if (!options.credentials) {
        throw new PartnerError('unauthorized', 'login: no credentials configured and no valid token', { operation: 'login' });
      }
      const credentials = options.credentials;
      const answer = await send({
        operation: 'login',
        method: 'POST',
        path: PARTNER_PATHS.login,
        body: { email: credentials.email, access_key: credentials.accessKey },
        read: (res) => parse('login', LoginResponse, res),
        authenticated: false,
        idempotent: true,
      });
      token = answer.data.access_token;
      await store.save(storeKey, token);
    })().finally(() => {
      loggingIn = null;
    });
    return loggingIn;
  }

  function checkInput<T>(operation: string, schema: z.ZodMiniType<T>, input: unknown): T {
    const parsed = parseInput(schema, input);
    if (parsed.success) return parsed.data;
    throw new PartnerError('invalid_input', `${operation}: ${parsed.body.error.message}`, { operation, fields: parsed.body.error.fields });
  }

  /**
   * Creating is the one thing never repeated: the input is checked, a `transaction_id` is given when
   * the caller has none, and the request is sent once, so an unknown outcome names that id.
   */
  async function create<I extends { transaction_id?: string }, B, R>(
    operation: string,
    path: string,
    request: z.ZodMiniType<B>,
    response: z.ZodMiniType<R>,
    input: I,
  ): Promise<{ answer: R; transactionId: string }> {
    const transactionId = input.transaction_id ?? randomUUID();
    const body = checkInput(operation, request, { ...input, transaction_id: transactionId });
    const answer = await send({ operation, method: 'POST', path, body, read: (res) => parse(operation, response, res), idempotent: false, transactionId });
    return { answer, transactionId };
  }

  /** A GET of one record by its reference: retried like every read, answering the record (`data`). */
  async function readRecord<T>(operation: string, template: string, externalReference: string, response: z.ZodMiniType<{ data: T }>): Promise<T> {
    const path = fillPath(template, { external_reference: externalReference });
    return (await send({ operation, method: 'GET', path, read: (res) => parse(operation, response, res), idempotent: true })).data;
  }

  const client: PartnerClient = {
    login,

    getTenant() {
      tenant ??= send({
        operation: 'getTenant',
        method: 'GET',
        path: PARTNER_PATHS.getTenant,
        read: (res) => parse('getTenant', TenantResponse, res),
        idempotent: true,
      })
        .then((answer) => ({ id: answer.data.id, name: answer.data.name }))
        .catch((error: unknown) => {
          tenant = null;
          throw error;
        });
      return tenant;
    },

    async createPayment(input) {
      // Checked before the tenant is fetched: a bad input costs no request at all.
      checkInput('createPayment', CreatePartnerPaymentRequest, { ...input, tenant_id: 'checked-below' });
      const { id: tenant_id } = await client.getTenant();
      const { answer, transactionId } = await create('createPayment', PARTNER_PATHS.createPayment, CreatePartnerPaymentRequest, CreatePartnerPaymentResponse, {
        ...input,
        tenant_id,
      });
      const { data } = answer;
      return {
        externalReference: data.external_reference,
        pixKey: data.pix_key,
        qrCodeUrl: data.qr_code_url,
        checkoutUrl: data.checkout,
        createdAt: data.created_at,
        transactionId,
      };
    },

    async checkPayment(externalReference) {
      return send({
        operation: 'checkPayment',
        method: 'HEAD',
        path: fillPath(PARTNER_PATHS.checkPayment, { external_reference: externalReference }),
        read: (res): PaymentCheck => {
          if (res.status === PAYMENT_CHECK_HTTP.paid) return 'paid';
          if (res.status === PAYMENT_CHECK_HTTP.pending) return 'pending';
          throw new PartnerError('unavailable', `checkPayment: unexpected HTTP ${res.status}`, { operation: 'checkPayment', status: res.status });
        },
        idempotent: true,
      }).catch((error: unknown) => {
        // 410 is an answer, not a failure: the payment is canceled.
        if (error instanceof PartnerError && error.details.status === PAYMENT_CHECK_HTTP.canceled) return 'canceled' as const;
        throw error;
      });
    },

    getPayment(externalReference) {
      return readRecord('getPayment', PARTNER_PATHS.getPayment, externalReference, PartnerPaymentResponse);
    },

    async solicitTransferForCustomer(input) {
      return (await create('solicitTransferForCustomer', PARTNER_PATHS.solicitTransferForCustomer, SolicitTransferRequest, PartnerTransferResponse, input))
        .answer.data;
    },

    async transferToKey(input) {
      return (await create('transferToKey', PARTNER_PATHS.transferToKey, KeyTransferRequest, PartnerTransferResponse, input)).answer.data;
    },

    checkTransfer(externalReference) {
      return readRecord('checkTransfer', PARTNER_PATHS.checkTransfer, externalReference, PartnerTransferResponse);
    },

    async setNotificationUrl(input) {
      const body = checkInput('setNotificationUrl', NotificationUrlRequest, { notify_type: NOTIFY_TYPE.old, ...input });
      const answer = await send({
        operation: 'setNotificationUrl',
        method: 'PATCH',
        path: PARTNER_PATHS.notificationUrl,
        body,
        read: (res) => parse('setNotificationUrl', NotificationUrlResponse, res),
        // Setting the same URL twice leaves the same state.
        idempotent: true,
      });
      return { notificationUrl: answer.data.notification_url, notifyType: answer.data.notify_type as NotifyType };
    },
  };
  return client;
}

function toError(operation: string, res: HttpResponse, unknown: { outcomeUnknown?: boolean; transactionId?: string }): PartnerError {
  let json: unknown;
  try {
    json = res.body ? JSON.parse(res.body) : undefined;
  } catch {
    json = undefined;
  }
  const body = PartnerErrorResponse.safeParse(json);
  // The service's own words may echo what it was sent (a document): redacted before they go anywhere.
  const upstreamMessage = body.success ? redact(body.data.message) : undefined;
  const fields = body.success && body.data.errors ? Object.fromEntries(Object.entries(body.data.errors).map(([k, v]) => [k, redact(v.join(' '))])) : undefined;
  const status = res.status;
  const details = { operation, status, upstreamMessage, fields, reason: body.success ? body.data.reason : undefined };
  const said = upstreamMessage ? `: ${upstreamMessage}` : '';
  if (status === 401) return new PartnerError('unauthorized', `${operation}: refused credentials (HTTP ${status})${said}`, details);
  if (status === 404) return new PartnerError('not_found', `${operation}: not found (HTTP ${status})${said}`, details);
  if (status >= 500 || status === 429 || status === 408) {
    // The service may have acted before failing: a create's outcome is then unknown.
    return new PartnerError('unavailable', `${operation}: the partner service failed (HTTP ${status})${said}`, { ...details, ...unknown });
  }
  return new PartnerError('refused', `${operation}: refused (HTTP ${status})${said}`, details);
}
