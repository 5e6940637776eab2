/**
 * The client of the partner service: the one place that speaks its wire format (wire.ts). One typed
 * method per operation of the spec. Send strictly, read tolerantly: inputs are checked against the
 * spec before anything is sent; answers are read by read.ts, which takes each value we use from every
 * plausible place and form and requires nothing else. Any 2xx is success, with any body or none.
 *
 * Safety: reads, HEAD and login are retried with backoff and jitter; creating a payment or a transfer
 * is never repeated. It carries a `transaction_id`, and when its outcome is unknown (no answer, a
 * 5xx, or a 2xx we cannot read) the error says so (`outcomeUnknown`), names that id and keeps the
 * raw answer, redacted, for the operator. A refused token (401, or a 403 that is not a transfer's
 * refusal) leads to one new login; a token still refused is discarded.
 */
import { randomUUID } from 'node:crypto';
import { Agent } from 'node:https';
import type { z } from 'zod/mini';
import { fillPath } from '../../src/shared/wire.ts';
import { parseInput } from '../../src/shared/errors.ts';
import {
  CreatePartnerPaymentRequest,
  KeyTransferRequest,
  NotificationUrlRequest,
  PARTNER_PATHS,
  PAYMENT_CHECK_HTTP,
  SolicitTransferRequest,
  TRANSFER_REFUSAL_REASONS,
  type NotifyType,
} from './wire.ts';
import { PartnerError } from './errors.ts';
import { HttpTimeoutError, httpsExchange, type HttpResponse } from './http.ts';
import {
  readError,
  readLogin,
  readNotificationUrl,
  readPayment,
  readTenant,
  readTransfer,
  redactBody,
  shape,
  type Found,
  type PaymentAnswer,
  type TransferAnswer,
} from './read.ts';
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
  /** Told of every 2xx answer read: where each used value was found, and the answer's shape with values redacted (doctor). */
  observe?: (answer: ObservedAnswer) => void;
  /** The clock, for the token's lifetime. */
  now?: () => number;
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

/** A 2xx answer as read: its HTTP status, its shape (values replaced by their types) and where each used field was. */
export interface ObservedAnswer {
  operation: string;
  status: number;
  /** null when there was no body. */
  shape: unknown;
  found: Found;
  /** An error answer (4xx, 5xx): only its shape is told. */
  error?: boolean;
}

export type CreatePaymentInput = Omit<CreatePartnerPaymentRequest, 'tenant_id'>;

export interface CreatedPayment {
  externalReference: string;
  /** The copy-and-paste code. */
  pixKey: string;
  qrCodeUrl: string | null;
  checkoutUrl: string | null;
  /** Epoch ms as the service gave it; null when its answer did not say (then the caller's clock decides). */
  createdAt: number | null;
  /** The status of the new payment, when the answer carried one (pending by definition: domain/status-numbering.ts checks it). */
  status: PaymentAnswer['status'];
  /** The partner-side `transaction_id` the request carried. */
  transactionId: string;
  /** Who is being paid, when the answer says (spec 2.1 `favoured`). */
  favoured: string | null;
}

/** The payment details (4.5), as read: any field may be null but the reference. */
export type PaymentDetails = Omit<PaymentAnswer, 'found' | 'externalReference'> & { externalReference: string };

/** A transfer record (4.6, 4.7), as read. */
export type TransferDetails = Omit<TransferAnswer, 'found' | 'externalReference'> & { externalReference: string };

/**
 * What the quick check (4.4) answered: its HTTP status only, which means nothing certain (the spec
 * does not say); `hint` is its reading under the assumed mapping (PAYMENT_CHECK_HTTP). Never decide
 * a payment's state from it: read the details (4.5).
 */
export interface PaymentCheck {
  httpStatus: number;
  hint: 'paid' | 'pending' | 'canceled' | 'not_found' | 'unknown';
}

export interface PartnerClient {
  login(): Promise<void>;
  getTenant(): Promise<{ id: string; name: string | null }>;
  createPayment(input: CreatePaymentInput): Promise<CreatedPayment>;
  checkPayment(externalReference: string): Promise<PaymentCheck>;
  getPayment(externalReference: string): Promise<PaymentDetails>;
  solicitTransferForCustomer(input: SolicitTransferRequest): Promise<TransferDetails>;
  transferToKey(input: KeyTransferRequest): Promise<TransferDetails>;
  checkTransfer(externalReference: string): Promise<TransferDetails>;
  /**
   * Sets the notification URL (4.8). `notify_type` is sent only when given. The answer may say
   * nothing (204): then `confirmed` is false and the URL and type are the ones sent.
   */
  setNotificationUrl(input: {
    notification_url: string;
    notify_type?: NotifyType;
  }): Promise<{ notificationUrl: string; notifyType: number | null; confirmed: boolean }>;
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

/** A saved token with its end: `{"token", "expires_at"}`; a bare string (saved before) has no known end. */
export function decodeSaved(saved: string): { token: string; expiresAt: number | null } {
  if (saved.startsWith('{')) {
    try {
      const parsed = JSON.parse(saved) as { token?: unknown; expires_at?: unknown };
      if (typeof parsed.token === 'string') return { token: parsed.token, expiresAt: typeof parsed.expires_at === 'number' ? parsed.expires_at : null };
    } catch {
      // Not ours: read as a bare token.
    }
  }
  return { token: saved, expiresAt: null };
}

const isRefusalReason = (reason: string | undefined): boolean => reason !== undefined && (TRANSFER_REFUSAL_REASONS as readonly string[]).includes(reason);

/** What a refusal of a transfer's data, of the customer's KYC, of the key's owner or by the bank says, in English or Portuguese. */
const REFUSAL_WORDS = /\b(kyc|invalid|inv[aá]lid[oa]s?|bank|banco|banc[aá]ri[oa]|owner|titular|key|chave|dados)\b/i;

/**
 * Whether a transfer create's error is a refusal the partner states (spec 4.6, 7: invalid data, the
 * customer's KYC, the bank), the one answer that says no money moved: a 400, 403 or 422 whose body
 * gives one of TRANSFER_REFUSAL_REASONS, names the fields at fault, or says so in words. Any other
 * 4xx (a 409, 423, 404, 429, a firewall's HTML 400, a bare 403) says nothing of what the service did.
 */
export function isStatedTransferRefusal(error: PartnerError): boolean {
  if (error.kind !== 'refused') return false;
  const { status, reason, fields, upstreamMessage } = error.details;
  if (status !== undefined && status !== 400 && status !== 403 && status !== 422) return false;
  if (isRefusalReason(reason)) return true;
  if (status === undefined) return false;
  return (fields !== undefined && Object.keys(fields).length > 0) || REFUSAL_WORDS.test(upstreamMessage ?? '');
}

/**
 * A transfer create's 4xx that is not a stated refusal: the request reached the service and nothing
 * says it did not act, so its outcome is unknown (never sent again; reconciled by its transaction_id).
 */
function unstatedRefusal(error: unknown, transactionId: string | undefined): unknown {
  if (!(error instanceof PartnerError) || (error.kind !== 'refused' && error.kind !== 'not_found') || isStatedTransferRefusal(error)) return error;
  const said = error.details.upstreamMessage ? `: ${error.details.upstreamMessage}` : '';
  return new PartnerError(
    'outcome_unknown',
    `${error.details.operation}: the partner service answered HTTP ${error.details.status ?? '4xx'} without a refusal it names${said}; the outcome is unknown`,
    { ...error.details, outcomeUnknown: true, transactionId: error.details.transactionId ?? transactionId },
  );
}

export function createPartnerClient(options: PartnerClientOptions): PartnerClient {
  const base = new URL(options.baseUrl);
  if (base.protocol !== 'https:') throw new TypeError('the partner service is reached over https:// only');
  const agent = new Agent({ keepAlive: true, ...(options.ca ? { ca: options.ca } : {}) });
  const timeoutMs = options.timeoutMs ?? PARTNER_CLIENT_DEFAULTS.timeoutMs;
  const attempts = Math.max(1, options.attempts ?? PARTNER_CLIENT_DEFAULTS.attempts);
  const backoffMs = options.backoffMs ?? PARTNER_CLIENT_DEFAULTS.backoffMs;
  const now = options.now ?? Date.now;
  const store = options.tokenStore ?? memoryTokenStore();
  const storeKey = tokenStoreKey(options.baseUrl, options.credentials?.email);
  let token: string | null = options.token ?? null;
  let tokenExpiresAt: number | null = null;
  // The saved token is read once; callers arriving meanwhile wait for that one read.
  let tokenLoad: Promise<void> | null = token !== null ? Promise.resolve() : null;
  let loggingIn: Promise<void> | null = null;
  let tenant: Promise<{ id: string; name: string | null }> | null = null;

  /** The token and the access key, wherever an answer echoes them (an error that quotes what it was sent). */
  function scrub(text: string): string {
    let out = text;
    for (const secret of [token, options.credentials?.accessKey]) {
      if (secret && secret.length >= 6) out = out.split(secret).join('[redacted]');
    }
    return out;
  }

  /** The body as JSON, or undefined when there is none; a body that is not JSON is an error (`unreadable`). */
  function json(operation: string, res: HttpResponse): unknown {
    if (res.body.trim() === '') return undefined;
    try {
      return JSON.parse(res.body);
    } catch {
      throw new PartnerError('unavailable', `${operation}: the partner service answered HTTP ${res.status} with a body that is not JSON`, {
        operation,
        status: res.status,
      });
    }
  }

  function observed(operation: string, res: HttpResponse, body: unknown, found: Found): void {
    // An answer read is a 2xx: error answers are told in attempt().
    options.observe?.({ operation, status: res.status, shape: body === undefined ? null : shape(body), found });
  }

  function unreadable(operation: string, res: HttpResponse, missing: string): PartnerError {
    return new PartnerError('unavailable', `${operation}: the partner service's answer (HTTP ${res.status}) has no ${missing} we can read`, {
      operation,
      status: res.status,
    });
  }

  async function forgetToken(): Promise<void> {
    token = null;
    tokenExpiresAt = null;
    await store.clear(storeKey).catch(() => undefined);
  }

  async function ensureToken(): Promise<void> {
    if (token !== null && (tokenExpiresAt === null || now() < tokenExpiresAt)) return;
    if (token !== null) {
      // Past its lifetime (5 years, or what the login said): a new one, before the service refuses it.
      if (options.credentials) await forgetToken();
    } else {
      tokenLoad ??= store.load(storeKey).then(
        (saved) => {
          if (token === null && saved) ({ token, expiresAt: tokenExpiresAt } = decodeSaved(saved));
        },
        // An unreadable saved token is no token: log in, as on a first start.
        () => undefined,
      );
      await tokenLoad;
      if (token !== null && tokenExpiresAt !== null && now() >= tokenExpiresAt && options.credentials) await forgetToken();
    }
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
        // A create the service accepted (2xx) but whose answer we cannot read has happened, or may
        // have: its outcome is unknown, never a failure to retry. The body is kept, redacted.
        if (!call.idempotent) {
          throw new PartnerError(
            'outcome_unknown',
            `${call.operation}: the partner service accepted the request (HTTP ${res.status}) but its answer could not be read; the outcome is unknown`,
            { operation: call.operation, status: res.status, outcomeUnknown: true, transactionId: call.transactionId, rawBody: redactBody(scrub(res.body)) },
          );
        }
        throw error;
      }
    }
    logLine(res.status, 'error');
    if (options.observe) {
      let body: unknown;
      try {
        body = res.body.trim() ? shape(JSON.parse(res.body)) : null;
      } catch {
        body = 'text';
      }
      options.observe({ operation: call.operation, status: res.status, shape: body, found: {}, error: true });
    }
    throw toError(call.operation, res, unknown, scrub);
  }

  /** A refusal of the token itself: 401, or a 403 that is not a transfer's refusal (KYC, key owner). */
  const tokenRefused = (error: PartnerError, idempotent: boolean): boolean =>
    error.kind === 'unauthorized' ||
    // A 403 may also refuse a create for a reason we cannot name: a create is sent again only after a 401.
    (idempotent && error.details.status === 403 && error.kind === 'refused' && !isRefusalReason(error.details.reason));

  async function send<T>(call: Call<T>): Promise<T> {
    if (call.authenticated !== false) await ensureToken();
    let relogged = false;
    for (let number = 1; ; number++) {
      try {
        return await attempt(call, number);
      } catch (error) {
        if (!(error instanceof PartnerError)) throw error;
        if (call.authenticated !== false && tokenRefused(error, call.idempotent)) {
          // A refused token: log in again once and repeat the same request once. Safe even for a
          // create, because a refused token means the service did not act on it. A token that is
          // still refused is not kept for the next start.
          if (!relogged && options.credentials) {
            relogged = true;
            await forgetToken();
            await login();
            number--;
            continue;
          }
          await forgetToken();
          throw error;
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
        read: (res) => {
          const body = json('login', res);
          const read = readLogin(body, now());
          // Told before it is judged: doctor shows the shape of an answer it could not read.
          observed('login', res, body, read?.found ?? { token: null });
          if (!read) throw unreadable('login', res, 'access token');
          return read;
        },
        authenticated: false,
        idempotent: true,
      });
      token = answer.token;
      tokenExpiresAt = answer.expiresAt;
      await store.save(storeKey, JSON.stringify({ token: answer.token, expires_at: answer.expiresAt }));
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
    input: I,
    read: (res: HttpResponse) => R,
  ): Promise<{ answer: R; transactionId: string }> {
    const transactionId = input.transaction_id ?? randomUUID();
    const body = checkInput(operation, request, { ...input, transaction_id: transactionId });
    const answer = await send({ operation, method: 'POST', path, body, read, idempotent: false, transactionId });
    return { answer, transactionId };
  }

  function readTransferAnswer(operation: string, res: HttpResponse, fallbackReference?: string): TransferDetails {
    const body = json(operation, res);
    const { found, ...read } = readTransfer(body);
    observed(operation, res, body, found);
    // A check of a known reference may omit it, but an answer with neither reference nor status (`{"data": null}`) says nothing,
    // and an answer about another transaction is no answer about this one.
    if (fallbackReference !== undefined && read.externalReference !== null && read.externalReference !== fallbackReference) {
      throw unreadable(operation, res, `record of ${fallbackReference}`);
    }
    const externalReference = read.externalReference ?? (read.status ? fallbackReference : undefined);
    if (!externalReference) throw unreadable(operation, res, 'external_reference');
    return { ...read, externalReference };
  }

  const client: PartnerClient = {
    login,

    getTenant() {
      tenant ??= send({
        operation: 'getTenant',
        method: 'GET',
        path: PARTNER_PATHS.getTenant,
        read: (res) => {
          const body = json('getTenant', res);
          const read = readTenant(body);
          observed('getTenant', res, body, read?.found ?? { id: null });
          if (!read) throw unreadable('getTenant', res, 'tenant id');
          return { id: read.id, name: read.name };
        },
        idempotent: true,
      }).catch((error: unknown) => {
        tenant = null;
        throw error;
      });
      return tenant;
    },

    async createPayment(input) {
      // Checked before the tenant is fetched: a bad input costs no request at all.
      checkInput('createPayment', CreatePartnerPaymentRequest, { ...input, tenant_id: 'checked-below' });
      const { id: tenant_id } = await client.getTenant();
      const { answer, transactionId } = await create(
        'createPayment',
        PARTNER_PATHS.createPayment,
        CreatePartnerPaymentRequest,
        { ...input, tenant_id },
        (res) => {
          const body = json('createPayment', res);
          const { found, ...read } = readPayment(body);
          observed('createPayment', res, body, found);
          // Without its reference the payment cannot be followed, without its code it cannot be paid.
          if (!read.externalReference) throw unreadable('createPayment', res, 'external_reference');
          if (!read.pixKey) throw unreadable('createPayment', res, 'pix_key (copy-and-paste code)');
          return { ...read, externalReference: read.externalReference, pixKey: read.pixKey };
        },
      );
      return {
        externalReference: answer.externalReference,
        pixKey: answer.pixKey,
        qrCodeUrl: answer.qrCodeUrl,
        checkoutUrl: answer.checkoutUrl,
        createdAt: answer.createdAt,
        status: answer.status,
        transactionId,
        favoured: answer.favoured,
      };
    },

    async checkPayment(externalReference) {
      const read = (httpStatus: number): PaymentCheck => {
        const hint = (Object.entries(PAYMENT_CHECK_HTTP).find(([, code]) => code === httpStatus)?.[0] ?? 'unknown') as
          keyof typeof PAYMENT_CHECK_HTTP | 'unknown';
        return { httpStatus, hint: hint === 'notFound' ? 'not_found' : hint };
      };
      return send({
        operation: 'checkPayment',
        method: 'HEAD',
        path: fillPath(PARTNER_PATHS.checkPayment, { external_reference: externalReference }),
        read: (res) => read(res.status),
        idempotent: true,
      }).catch((error: unknown) => {
        // Any answer but a refused token or a failure is an answer: HEAD says what it says with its status.
        const status = error instanceof PartnerError ? error.details.status : undefined;
        if (error instanceof PartnerError && status !== undefined && status < 500 && error.kind !== 'unauthorized') return read(status);
        throw error;
      });
    },

    async getPayment(externalReference) {
      const path = fillPath(PARTNER_PATHS.getPayment, { external_reference: externalReference });
      return send({
        operation: 'getPayment',
        method: 'GET',
        path,
        read: (res): PaymentDetails => {
          const body = json('getPayment', res);
          const { found, ...read } = readPayment(body);
          observed('getPayment', res, body, found);
          // An answer about another payment (a list, say) is no answer about this one.
          if (read.externalReference !== null && read.externalReference !== externalReference)
            throw unreadable('getPayment', res, `record of ${externalReference}`);
          return { ...read, externalReference };
        },
        idempotent: true,
      });
    },

    // Only a refusal the service states releases the money: any other 4xx is an unknown outcome.
    async solicitTransferForCustomer(given) {
      const operation = 'solicitTransferForCustomer';
      const input = { ...given, transaction_id: given.transaction_id ?? randomUUID() };
      try {
        return (await create(operation, PARTNER_PATHS.solicitTransferForCustomer, SolicitTransferRequest, input, (res) => readTransferAnswer(operation, res)))
          .answer;
      } catch (error) {
        throw unstatedRefusal(error, input.transaction_id);
      }
    },

    async transferToKey(given) {
      const operation = 'transferToKey';
      const input = { ...given, transaction_id: given.transaction_id ?? randomUUID() };
      try {
        return (await create(operation, PARTNER_PATHS.transferToKey, KeyTransferRequest, input, (res) => readTransferAnswer(operation, res))).answer;
      } catch (error) {
        throw unstatedRefusal(error, input.transaction_id);
      }
    },

    checkTransfer(externalReference) {
      return send({
        operation: 'checkTransfer',
        method: 'GET',
        path: fillPath(PARTNER_PATHS.checkTransfer, { external_reference: externalReference }),
        read: (res) => readTransferAnswer('checkTransfer', res, externalReference),
        idempotent: true,
      });
    },

    async setNotificationUrl(input) {
      // notify_type only when chosen: the service keeps its own default otherwise.
      const body = checkInput('setNotificationUrl', NotificationUrlRequest, input);
      return send({
        operation: 'setNotificationUrl',
        method: 'PATCH',
        path: PARTNER_PATHS.notificationUrl,
        body,
        read: (res) => {
          // Any 2xx is success, with a body or none (204).
          let answer = null;
          try {
            const parsed = json('setNotificationUrl', res);
            answer = readNotificationUrl(parsed);
            observed('setNotificationUrl', res, parsed, answer.found);
          } catch {
            observed('setNotificationUrl', res, undefined, {});
          }
          return {
            notificationUrl: answer?.notificationUrl ?? body.notification_url,
            notifyType: answer?.notifyType ?? body.notify_type ?? null,
            confirmed: answer?.notificationUrl != null,
          };
        },
        // Setting the same URL twice leaves the same state.
        idempotent: true,
      });
    },
  };
  return client;
}

function toError(
  operation: string,
  res: HttpResponse,
  unknown: { outcomeUnknown?: boolean; transactionId?: string },
  scrub: (text: string) => string,
): PartnerError {
  // Any shape of error body gives its words (redacted by readError, our own secrets scrubbed); none is required.
  const body = readError(scrub(res.body));
  const upstreamMessage = body.message ?? undefined;
  const status = res.status;
  const details = { operation, status, upstreamMessage, fields: body.fields, reason: body.reason ?? undefined };
  const said = upstreamMessage ? `: ${upstreamMessage}` : '';
  if (status === 401) return new PartnerError('unauthorized', `${operation}: refused credentials (HTTP ${status})${said}`, details);
  if (status === 404) return new PartnerError('not_found', `${operation}: not found (HTTP ${status})${said}`, details);
  if (status >= 500 || status === 429 || status === 408) {
    // The service may have acted before failing: a create's outcome is then unknown.
    return new PartnerError('unavailable', `${operation}: the partner service failed (HTTP ${status})${said}`, { ...details, ...unknown });
  }
  return new PartnerError('refused', `${operation}: refused (HTTP ${status})${said}`, details);
}
