/**
 * Sending one operation to the partner service: the HTTPS exchange with its headers and token, the
 * retries of what is safe to repeat (reads, HEAD, login, with backoff and jitter), one new login when
 * the token is refused, and the mapping of every failure to a PartnerError. A create is sent once:
 * when its outcome is unknown (no answer, a 5xx, a 2xx we cannot read) the error says so, names its
 * `transaction_id` and keeps the raw answer, redacted. Also the helpers every operation reads its
 * answer with (server/partner/client.ts lists the operations).
 */
import { Agent } from 'node:https';
import type { z } from 'zod/mini';
import { parseInput } from '../../src/shared/errors.ts';
import { PARTNER_PATHS } from './wire.ts';
import { PartnerError } from './errors.ts';
import { HttpTimeoutError, httpsExchange, type HttpResponse } from './http.ts';
import { readLogin } from './read.ts';
import { readError, redactBody, shape } from './read-errors.ts';
import type { Found } from './read-fields.ts';
import { memoryTokenStore } from './token-store.ts';
import { createTokenSession, tokenStoreKey } from './token-session.ts';
import { isRefusalReason } from './refusals.ts';
import { PARTNER_CLIENT_DEFAULTS, type PartnerClientOptions, type PartnerLogEntry } from './client-types.ts';
import { runtimeOf, type RandomSource } from '../runtime/runtime.ts';

/** One request of an operation. */
export interface Call<T> {
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

/** What the operations are written with. */
export interface Sender {
  /** Sends a call, with the token, retries and a new login as its kind allows. */
  send: <T>(call: Call<T>) => Promise<T>;
  login: () => Promise<void>;
  /** Where transaction ids come from (the client's runtime). */
  random: RandomSource;
  /** The body as JSON, or undefined when there is none; a body that is not JSON is an error (`unreadable`). */
  json: (operation: string, res: HttpResponse) => unknown;
  /** Tells `observe` of a 2xx answer read, and where each used value was found. */
  observed: (operation: string, res: HttpResponse, body: unknown, found: Found) => void;
  /** The error of a 2xx answer without a value the operation needs. */
  unreadable: (operation: string, res: HttpResponse, missing: string) => PartnerError;
  /** The input checked against the spec's request schema, before anything is sent (`invalid_input`). */
  checkInput: <T>(operation: string, schema: z.ZodMiniType<T>, input: unknown) => T;
  /**
   * Creating is the one thing never repeated: the input is checked, a `transaction_id` is given when
   * the caller has none, and the request is sent once, so an unknown outcome names that id.
   */
  create: <I extends { transaction_id?: string }, B, R>(
    operation: string,
    path: string,
    request: z.ZodMiniType<B>,
    input: I,
    read: (res: HttpResponse) => R,
  ) => Promise<{ answer: R; transactionId: string }>;
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

export function createSender(options: PartnerClientOptions): Sender {
  const base = new URL(options.baseUrl);
  if (base.protocol !== 'https:') throw new TypeError('the partner service is reached over https:// only');
  const agent = new Agent({ keepAlive: true, ...(options.ca ? { ca: options.ca } : {}) });
  const timeoutMs = options.timeoutMs ?? PARTNER_CLIENT_DEFAULTS.timeoutMs;
  const attempts = Math.max(1, options.attempts ?? PARTNER_CLIENT_DEFAULTS.attempts);
  const backoffMs = options.backoffMs ?? PARTNER_CLIENT_DEFAULTS.backoffMs;
  const { clock, random } = runtimeOf(options.runtime);
  const now = options.now ?? clock.now;
  const session = createTokenSession({
    token: options.token ?? null,
    store: options.tokenStore ?? memoryTokenStore(),
    key: tokenStoreKey(options.baseUrl, options.credentials?.email),
    now,
    canLogIn: Boolean(options.credentials),
    logIn: requestToken,
  });

  /** The token and the access key, wherever an answer echoes them (an error that quotes what it was sent). */
  function scrub(text: string): string {
    let out = text;
    for (const secret of [session.token, options.credentials?.accessKey]) {
      if (secret && secret.length >= 6) out = out.split(secret).join('[redacted]');
    }
    return out;
  }

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

  async function attempt<T>(call: Call<T>, number: number): Promise<T> {
    const headers: Record<string, string> = { 'user-agent': options.userAgent, accept: 'application/json' };
    if (call.authenticated !== false) headers.authorization = `Bearer ${session.token}`;
    let payload: string | undefined;
    if (call.body !== undefined) {
      payload = JSON.stringify(call.body);
      headers['content-type'] = 'application/json';
      headers['content-length'] = String(Buffer.byteLength(payload));
    }
    const started = clock.monotonic();
    const logLine = (status: number, outcome: PartnerLogEntry['outcome']) =>
      options.log?.({
        operation: call.operation,
        method: call.method,
        path: call.path,
        attempt: number,
        status,
        durationMs: Math.round(clock.monotonic() - started),
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
        // Never sent: surely not created, but the create is still named by its transaction_id.
        ...(NOT_SENT.has(code) ? (call.idempotent ? {} : { transactionId: call.transactionId }) : unknown),
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
    if (call.authenticated !== false) await session.ensure();
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
            await session.forget();
            await session.login();
            number--;
            continue;
          }
          await session.forget();
          throw error;
        }
        const transient = error.kind === 'unavailable' || error.kind === 'timeout';
        if (!transient || !call.idempotent || number >= attempts) throw error;
        const delay = backoffMs * 2 ** (number - 1);
        await clock.sleep(delay / 2 + random.fraction() * (delay / 2));
      }
    }
  }

  /** The login itself (4.2), sent by the token session. */
  async function requestToken(): Promise<{ token: string; expiresAt: number }> {
    if (!options.credentials) {
      throw new PartnerError('unauthorized', 'login: no credentials configured and no valid token', { operation: 'login' });
    }
    const credentials = options.credentials;
    return send({
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
  }

  function checkInput<T>(operation: string, schema: z.ZodMiniType<T>, input: unknown): T {
    const parsed = parseInput(schema, input);
    if (parsed.success) return parsed.data;
    throw new PartnerError('invalid_input', `${operation}: ${parsed.body.error.message}`, { operation, fields: parsed.body.error.fields });
  }

  async function create<I extends { transaction_id?: string }, B, R>(
    operation: string,
    path: string,
    request: z.ZodMiniType<B>,
    input: I,
    read: (res: HttpResponse) => R,
  ): Promise<{ answer: R; transactionId: string }> {
    const transactionId = input.transaction_id ?? random.uuid();
    const body = checkInput(operation, request, { ...input, transaction_id: transactionId });
    const answer = await send({ operation, method: 'POST', path, body, read, idempotent: false, transactionId });
    return { answer, transactionId };
  }

  return { send, login: session.login, random, json, observed, unreadable, checkInput, create };
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
