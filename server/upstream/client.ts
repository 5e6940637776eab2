/**
 * The client of the partner service: the one place that speaks its wire format. It holds the token,
 * validates every input against the spec before sending, and parses every answer, so that a bad
 * answer is an error naming the field rather than a crash further in.
 */
import { Agent } from 'node:https';
import type { z } from 'zod/mini';
import { fillPath } from '../../src/shared/contract.ts';
import { issuesToFields, parseInput, type Issue } from '../../src/shared/errors.ts';
import {
  CreatePartnerPaymentRequest,
  CreatePartnerPaymentResponse,
  LoginResponse,
  PARTNER_PATHS,
  PartnerErrorResponse,
  PartnerPaymentResponse,
  TenantResponse,
  type PartnerPaymentRecord,
} from '../../src/shared/partner.ts';
import { PartnerError } from './errors.ts';
import { HttpTimeoutError, httpsExchange } from './http.ts';

export interface PartnerClientOptions {
  /** https:// base URL of the service (or of the sandbox). */
  baseUrl: string;
  /** Used to log in when no token is given, and again when the token is refused. */
  credentials?: { email: string; accessKey: string };
  /** A token from an earlier login; it lives 5 years. */
  token?: string;
  /** `Company (contact@example.com)`, required by the service on every request. */
  userAgent: string;
  /** Extra certificate authority to trust, PEM (the sandbox's certificate). */
  ca?: string;
  /** Deadline of each call. */
  timeoutMs?: number;
}

export type CreatePaymentInput = Omit<CreatePartnerPaymentRequest, 'tenant_id'>;

export interface CreatedPayment {
  externalReference: string;
  pixKey: string;
  qrCodeUrl: string;
  checkoutUrl: string;
  createdAt: string;
}

export interface PartnerClient {
  login(): Promise<void>;
  getTenant(): Promise<{ id: string; name: string }>;
  createPayment(input: CreatePaymentInput): Promise<CreatedPayment>;
  getPayment(externalReference: string): Promise<PartnerPaymentRecord>;
}

interface Call<T> {
  operation: string;
  method: 'GET' | 'POST' | 'PATCH' | 'HEAD';
  path: string;
  body?: unknown;
  response: z.ZodMiniType<T>;
  authenticated?: boolean;
}

function describeIssues(issues: readonly Issue[]): string {
  return Object.entries(issuesToFields(issues))
    .map(([field, problem]) => `${field} ${problem}`)
    .join('; ');
}

export function createPartnerClient(options: PartnerClientOptions): PartnerClient {
  const base = new URL(options.baseUrl);
  if (base.protocol !== 'https:') throw new TypeError('the partner service is reached over https:// only');
  const agent = new Agent({ keepAlive: true, ...(options.ca ? { ca: options.ca } : {}) });
  const timeoutMs = options.timeoutMs ?? 10_000;
  let token = options.token ?? null;
  let loggingIn: Promise<void> | null = null;
  let tenant: Promise<{ id: string; name: string }> | null = null;

  async function send<T>(call: Call<T>, retryOn401 = true): Promise<T> {
    const authenticated = call.authenticated ?? true;
    if (authenticated && token === null) await login();
    const headers: Record<string, string> = { 'user-agent': options.userAgent, accept: 'application/json' };
    if (authenticated) headers.authorization = `Bearer ${token}`;
    let payload: string | undefined;
    if (call.body !== undefined) {
      payload = JSON.stringify(call.body);
      headers['content-type'] = 'application/json';
      headers['content-length'] = String(Buffer.byteLength(payload));
    }
    let res;
    try {
      res = await httpsExchange(agent, { method: call.method, url: new URL(call.path, base), headers, body: payload, timeoutMs });
    } catch (error) {
      if (error instanceof HttpTimeoutError) {
        throw new PartnerError('timeout', `${call.operation}: the partner service did not answer within ${timeoutMs} ms`, { operation: call.operation });
      }
      const reason = error instanceof Error ? error.message : String(error);
      throw new PartnerError('unavailable', `${call.operation}: the partner service could not be reached (${reason})`, { operation: call.operation });
    }

    if (res.status === 401 && authenticated && retryOn401 && options.credentials) {
      token = null;
      return send(call, false);
    }
    let json: unknown;
    try {
      json = res.body === '' ? undefined : JSON.parse(res.body);
    } catch {
      json = undefined;
    }
    if (res.status < 200 || res.status > 299) throw toError(call.operation, res.status, json);
    const parsed = call.response.safeParse(json);
    if (!parsed.success) {
      throw new PartnerError('unavailable', `${call.operation}: unexpected answer from the partner service: ${describeIssues(parsed.error.issues)}`, {
        operation: call.operation,
        status: res.status,
      });
    }
    return parsed.data;
  }

  function login(): Promise<void> {
    // Calls that find no token while a login is under way wait for that one login.
    loggingIn ??= (async () => {
      if (!options.credentials) {
        throw new PartnerError('unauthorized', 'login: no credentials configured and no valid token', { operation: 'login' });
      }
      const answer = await send(
        {
          operation: 'login',
          method: 'POST',
          path: PARTNER_PATHS.login,
          body: { email: options.credentials.email, access_key: options.credentials.accessKey },
          response: LoginResponse,
          authenticated: false,
        },
        false,
      );
      token = answer.data.access_token;
    })().finally(() => {
      loggingIn = null;
    });
    return loggingIn;
  }

  return {
    login,
    getTenant() {
      tenant ??= send({ operation: 'getTenant', method: 'GET', path: PARTNER_PATHS.getTenant, response: TenantResponse })
        .then((answer) => ({ id: answer.data.id, name: answer.data.name }))
        .catch((error: unknown) => {
          tenant = null;
          throw error;
        });
      return tenant;
    },
    async createPayment(input) {
      const { id: tenant_id } = await this.getTenant();
      const request = parseInput(CreatePartnerPaymentRequest, { ...input, tenant_id });
      if (!request.success) {
        throw new PartnerError('invalid_input', `createPayment: ${request.body.error.message}`, {
          operation: 'createPayment',
          fields: request.body.error.fields,
        });
      }
      const answer = await send({
        operation: 'createPayment',
        method: 'POST',
        path: PARTNER_PATHS.createPayment,
        body: request.data,
        response: CreatePartnerPaymentResponse,
      });
      const { data } = answer;
      return {
        externalReference: data.external_reference,
        pixKey: data.pix_key,
        qrCodeUrl: data.qr_code_url,
        checkoutUrl: data.checkout,
        createdAt: data.created_at,
      };
    },
    async getPayment(externalReference) {
      const answer = await send({
        operation: 'getPayment',
        method: 'GET',
        path: fillPath(PARTNER_PATHS.getPayment, { external_reference: externalReference }),
        response: PartnerPaymentResponse,
      });
      return answer.data;
    },
  };
}

function toError(operation: string, status: number, json: unknown): PartnerError {
  const body = PartnerErrorResponse.safeParse(json);
  const upstreamMessage = body.success ? body.data.message : undefined;
  const fields = body.success && body.data.errors
    ? Object.fromEntries(Object.entries(body.data.errors).map(([k, v]) => [k, v.join(' ')]))
    : undefined;
  const details = { operation, status, upstreamMessage, fields };
  const said = upstreamMessage ? `: ${upstreamMessage}` : '';
  if (status === 401 || status === 403) return new PartnerError('unauthorized', `${operation}: refused credentials (HTTP ${status})${said}`, details);
  if (status === 404) return new PartnerError('not_found', `${operation}: not found (HTTP ${status})${said}`, details);
  if (status >= 500 || status === 429 || status === 408) return new PartnerError('unavailable', `${operation}: the partner service failed (HTTP ${status})${said}`, details);
  return new PartnerError('refused', `${operation}: refused (HTTP ${status})${said}`, details);
}
