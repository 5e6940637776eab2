/**
 * The merchant server's client of the proxy's server-to-server API (API key): checkouts, refunds
 * and transfers, typed by src/shared and read with its schemas. One error class, CheckoutApiError.
 *
 * Retries: a GET, or a POST that carries an Idempotency-Key, is sent again (at most twice, with a
 * short backoff) after a network error or a 502/503/504, with the same key, so the proxy answers the
 * first result instead of acting twice. Any other POST is never sent again by this client. A
 * timeout is not retried either: the request may still be running at the proxy; the caller decides,
 * and sends it again with the same key (`error.idempotencyKey`).
 */
import { randomUUID } from 'node:crypto';
import type { z } from 'zod/mini';
import { CheckoutView, type CreateCheckoutRequest, type CreateRefundRequest, type CreateTransferRequest } from '../../src/shared/contract.ts';
import { ErrorBody, issuesToFields } from '../../src/shared/errors.ts';
import { IDEMPOTENCY_HEADER, IdempotencyKey, PAYOUT_PATHS, TransferList, TransferView, type TransferStatus } from '../../src/shared/payouts.ts';
import { CHECKOUT_PATHS, fillPath } from '../../src/shared/wire.ts';
import { requireSet } from './not-set.ts';

/** What a checkout's creation takes (the proxy normalises it: trims, upper-cases a CNPJ's letters). */
export type CreateCheckoutInput = z.input<typeof CreateCheckoutRequest>;
/** What a refund takes; without `value`, whatever of the paid value is not refunded yet. */
export type CreateRefundInput = z.input<typeof CreateRefundRequest>;
/** What a transfer (payout) takes. */
export type CreateTransferInput = z.input<typeof CreateTransferRequest>;

/**
 * `code` is the proxy's `error.code` (src/shared/errors.ts ERROR_CODES), or one of this client's own:
 * no answer (`network_error`), none within `timeoutMs` (`timeout`), an answer that is not the
 * contract's (`invalid_response`).
 */
export type CheckoutApiErrorCode = 'network_error' | 'timeout' | 'invalid_response' | (string & {});

/** Every failure of the client: the proxy's refusal, or no usable answer. Never carries the API key. */
export class CheckoutApiError extends Error {
  override readonly name = 'CheckoutApiError';
  /** The proxy's `error.code`, or `network_error`, `timeout`, `invalid_response`. */
  readonly code: CheckoutApiErrorCode;
  /** The HTTP status; 0 when no answer came. */
  readonly status: number;
  /** Field path -> what is wrong with it, from a 400's `error.fields`. */
  readonly fields: Record<string, string> | undefined;
  /** The Idempotency-Key sent (given or generated): send the same operation again with it. */
  readonly idempotencyKey: string | undefined;
  /** The proxy's own sentence (`error.message` of its answer), to show a person as it is; undefined when no error body came. */
  readonly apiMessage: string | undefined;

  constructor(
    details: {
      code: CheckoutApiErrorCode;
      status: number;
      message: string;
      fields?: Record<string, string> | undefined;
      idempotencyKey?: string | undefined;
      apiMessage?: string | undefined;
    },
    options?: { cause?: unknown },
  ) {
    super(details.message, options);
    this.code = details.code;
    this.status = details.status;
    this.fields = details.fields;
    this.idempotencyKey = details.idempotencyKey;
    this.apiMessage = details.apiMessage;
  }
}

export interface CheckoutClientOptions {
  /** The proxy's API base, e.g. `https://pay.shop.example/api` (`{url}/checkouts`, `{url}/transfers`). */
  url: string;
  /** The proxy's PIX_API_KEY, sent as `Authorization: Bearer <apiKey>`. */
  apiKey: string;
  /** Default: the global fetch. */
  fetch?: typeof fetch;
  /** Deadline of each attempt, answer body included, in ms (default 30 000). */
  timeoutMs?: number;
}

export interface IdempotentOptions {
  /**
   * Names one intended operation (printable ASCII, no spaces, at most 255): the same key and body
   * answer the first result again. Default: a new random UUID per call, reused by its retries.
   */
  idempotencyKey?: string;
}

export interface TransferListFilter {
  status?: TransferStatus;
  /** `next_cursor` of the previous page. */
  cursor?: string;
  /** Page size, 1 to 100 (default 20). */
  limit?: number;
}

export interface CheckoutClient {
  checkouts: {
    /** POST {url}/checkouts: 201 a new checkout, or the same order's checkout again (idempotent on `order_id`). */
    create(body: CreateCheckoutInput, options?: IdempotentOptions): Promise<CheckoutView>;
    /** GET {url}/checkouts/:id: the checkout, its current payment and its refunds (confirm a payment here). */
    retrieve(id: string): Promise<CheckoutView>;
  };
  refunds: {
    /** POST {url}/checkouts/:id/refunds (with an Idempotency-Key): a transfer back to the customer's key. */
    create(checkoutId: string, body: CreateRefundInput, options?: IdempotentOptions): Promise<TransferView>;
  };
  transfers: {
    /** POST {url}/transfers (with an Idempotency-Key): a payout to a Pix key. */
    create(body: CreateTransferInput, options?: IdempotentOptions): Promise<TransferView>;
    /** GET {url}/transfers/:id */
    retrieve(id: string): Promise<TransferView>;
    /** GET {url}/transfers: one page, newest first. */
    list(filter?: TransferListFilter): Promise<TransferList>;
    /** Every transfer matching the filter, newest first, following `next_cursor` page after page. */
    listAll(filter?: Omit<TransferListFilter, 'cursor'>): AsyncIterableIterator<TransferView>;
  };
}

const DEFAULT_TIMEOUT_MS = 30_000;
/** Waits before the first and second retry. */
const BACKOFF_MS = [100, 400] as const;
const RETRIED_STATUSES = new Set([502, 503, 504]);
/** A 502 the proxy gives for the partner's own refusal is its final answer: sending it again changes nothing. */
const FINAL_ERROR_CODES = new Set(['upstream_refused']);

interface Call<T> {
  method: 'GET' | 'POST';
  path: string;
  body?: unknown;
  /** Sent as Idempotency-Key; its presence makes a POST retryable. */
  idempotencyKey?: string;
  schema: z.ZodMiniType<T>;
  /** For a POST: what a lost answer leaves the caller to do. */
  ifLost?: string;
}

/**
 * The client of the proxy's server-to-server API.
 *
 * ```ts
 * const pix = createCheckoutClient({ url: 'https://pay.shop.example/api', apiKey: process.env.PIX_API_KEY! });
 * const checkout = await pix.checkouts.create({ value: 49.9, order_id: 'order-1001' });
 * ```
 */
export function createCheckoutClient(options: CheckoutClientOptions): CheckoutClient {
  requireSet(options, 'createCheckoutClient', 'options', { what: '{ url, apiKey }' });
  requireSet(options.url, 'createCheckoutClient', 'url', { what: "the proxy's API base, e.g. https://pay.shop.example/api" });
  requireSet(options.apiKey, 'createCheckoutClient', 'apiKey', { env: 'PIX_API_KEY', what: "the proxy's API key" });
  const base = parseBase(options.url);
  // Checked here, not by fetch: its error for a bad header value quotes the value, the key.
  if (typeof options.apiKey !== 'string' || !/^[\x21-\x7e]+$/.test(options.apiKey)) {
    throw new TypeError('createCheckoutClient: apiKey must be the proxy API key (printable ASCII, no spaces)');
  }
  const apiKey = options.apiKey;
  const send = options.fetch ?? globalThis.fetch;
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  if (!(timeoutMs > 0)) throw new TypeError('createCheckoutClient: timeoutMs must be a positive number of milliseconds');

  /** The API key never reaches a message, whatever an answer or a cause quoted. */
  const scrub = (text: string) => text.split(apiKey).join('[api key]');

  function fail(call: Call<unknown>, details: Omit<ConstructorParameters<typeof CheckoutApiError>[0], 'idempotencyKey'>, cause?: unknown): CheckoutApiError {
    return new CheckoutApiError(
      { ...details, message: scrub(`${call.method} ${call.path}: ${details.message}`), idempotencyKey: call.idempotencyKey },
      cause === undefined ? undefined : { cause },
    );
  }

  /** One attempt: the parsed answer, or the error (and whether the attempt may be repeated). */
  async function attempt<T>(call: Call<T>): Promise<{ ok: true; value: T } | { ok: false; error: CheckoutApiError; transient: boolean }> {
    const headers: Record<string, string> = { authorization: `Bearer ${apiKey}`, accept: 'application/json' };
    if (call.body !== undefined) headers['content-type'] = 'application/json';
    if (call.idempotencyKey !== undefined) headers[IDEMPOTENCY_HEADER] = call.idempotencyKey;
    const controller = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, timeoutMs);
    let status = 0;
    let text: string;
    try {
      const response = await send(`${base}${call.path}`, {
        method: call.method,
        headers,
        body: call.body === undefined ? undefined : JSON.stringify(call.body),
        signal: controller.signal,
        redirect: 'manual',
      });
      status = response.status;
      text = await response.text();
    } catch (cause) {
      if (timedOut) {
        return {
          ok: false,
          transient: false,
          error: fail(call, { code: 'timeout', status, message: `no answer within ${timeoutMs} ms${call.ifLost ? `; ${call.ifLost}` : ''}` }, cause),
        };
      }
      return {
        ok: false,
        transient: true,
        error: fail(call, { code: 'network_error', status, message: `the proxy could not be reached (${describeCause(cause)})` }, cause),
      };
    } finally {
      clearTimeout(timer);
    }

    const json = parseJson(text);
    if (status >= 200 && status < 300) {
      const parsed = call.schema.safeParse(json);
      if (parsed.success) return { ok: true, value: parsed.data };
      const problems = json === undefined ? 'not JSON' : summarise(issuesToFields(parsed.error.issues));
      return {
        ok: false,
        transient: false,
        error: fail(call, { code: 'invalid_response', status, message: `HTTP ${status} with an answer that is not the contract's (${problems})` }),
      };
    }
    const body = ErrorBody.safeParse(json);
    const transient = RETRIED_STATUSES.has(status) && !(body.success && FINAL_ERROR_CODES.has(body.data.error.code));
    if (!body.success) {
      return {
        ok: false,
        transient,
        error: fail(call, {
          code: 'invalid_response',
          status,
          message: `HTTP ${status} without the proxy's error body (is something else answering at this URL?)`,
        }),
      };
    }
    const { code, message, fields } = body.data.error;
    return { ok: false, transient, error: fail(call, { code, status, message: `${status} ${code}: ${message}`, fields, apiMessage: scrub(message) }) };
  }

  async function request<T>(call: Call<T>): Promise<T> {
    const retryable = call.method === 'GET' || call.idempotencyKey !== undefined;
    for (let retry = 0; ; retry++) {
      const result = await attempt(call);
      if (result.ok) return result.value;
      const delay = BACKOFF_MS[retry];
      if (!retryable || !result.transient || delay === undefined) throw result.error;
      await new Promise((resolve) => setTimeout(resolve, delay * (0.75 + Math.random() / 2)));
    }
  }

  const keyOf = (options: IdempotentOptions | undefined, required: boolean): string | undefined => {
    const given = options?.idempotencyKey;
    if (given === undefined) return required ? randomUUID() : undefined;
    // A key fetch cannot send would fail as a network error and be retried: refused here instead.
    if (!IdempotencyKey.safeParse(given).success) throw new TypeError('idempotencyKey must be 1 to 255 printable ASCII characters without spaces');
    return given;
  };

  const list = (filter: TransferListFilter = {}) => {
    const query = new URLSearchParams();
    if (filter.status !== undefined) query.set('status', filter.status);
    if (filter.cursor !== undefined) query.set('cursor', filter.cursor);
    if (filter.limit !== undefined) query.set('limit', String(filter.limit));
    const search = query.size > 0 ? `?${query}` : '';
    return request({ method: 'GET', path: `${PAYOUT_PATHS.transfers}${search}`, schema: TransferList });
  };

  return {
    checkouts: {
      // No key unless given: a checkout is idempotent on its order_id, and without a key it is never retried.
      create: async (body, options) =>
        request({
          method: 'POST',
          path: CHECKOUT_PATHS.checkouts,
          body,
          idempotencyKey: keyOf(options, false),
          schema: CheckoutView,
          ifLost: 'it may have been created: create it again with the same order_id to get it',
        }),
      retrieve: async (id) => request({ method: 'GET', path: fillPath(CHECKOUT_PATHS.checkout, { id }), schema: CheckoutView }),
    },
    refunds: {
      create: async (checkoutId, body, options) =>
        request({
          method: 'POST',
          path: fillPath(PAYOUT_PATHS.refunds, { id: checkoutId }),
          body,
          idempotencyKey: keyOf(options, true),
          schema: TransferView,
          ifLost: 'it may have been carried out: send it again with the same idempotencyKey',
        }),
    },
    transfers: {
      create: async (body, options) =>
        request({
          method: 'POST',
          path: PAYOUT_PATHS.transfers,
          body,
          idempotencyKey: keyOf(options, true),
          schema: TransferView,
          ifLost: 'it may have been carried out: send it again with the same idempotencyKey',
        }),
      retrieve: async (id) => request({ method: 'GET', path: fillPath(PAYOUT_PATHS.transfer, { id }), schema: TransferView }),
      list,
      async *listAll(filter = {}) {
        const seen = new Set<string>();
        let cursor: string | undefined;
        for (;;) {
          const page = await list({ ...filter, cursor });
          yield* page.data;
          if (page.next_cursor === null) return;
          // A cursor that comes back would loop for ever: the proxy is not following its contract.
          if (seen.has(page.next_cursor)) {
            throw new CheckoutApiError({ code: 'invalid_response', status: 200, message: `GET ${PAYOUT_PATHS.transfers}: a next_cursor came back twice` });
          }
          seen.add(page.next_cursor);
          cursor = page.next_cursor;
        }
      },
    },
  };
}

function parseBase(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new TypeError('createCheckoutClient: url must be an absolute URL, e.g. https://pay.shop.example/api');
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') throw new TypeError('createCheckoutClient: url must be http:// or https://');
  if (parsed.username || parsed.password) throw new TypeError('createCheckoutClient: url must not carry credentials; give apiKey');
  if (parsed.search || parsed.hash) throw new TypeError('createCheckoutClient: url must be the API base, with no query or fragment');
  return parsed.href.replace(/\/+$/, '');
}

function parseJson(text: string): unknown {
  if (!text) return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

function describeCause(cause: unknown): string {
  // fetch's own error is "fetch failed"; the socket's reason is in its cause.
  const inner = cause instanceof Error && cause.cause instanceof Error ? cause.cause : cause;
  const code = (inner as { code?: unknown } | null)?.code;
  if (typeof code === 'string') return code;
  return inner instanceof Error ? inner.message : String(inner);
}

function summarise(fields: Record<string, string>): string {
  const entries = Object.entries(fields);
  const shown = entries.slice(0, 3).map(([path, problem]) => `${path} ${problem}`);
  return entries.length > 3 ? `${shown.join('; ')}; …` : shown.join('; ');
}
