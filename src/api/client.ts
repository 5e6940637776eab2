/**
 * The widget's client of the proxy's browser API. Answers are checked with the zod-free guards that
 * sit next to the contract's schemas in src/shared, so the script-tag bundle carries no zod.
 */
import type { CheckoutPaymentRequest, OpenPaymentRequest, PaymentView } from '../shared/contract.ts';
import { API_PATHS, CHECKOUT_PATHS, fillPath, isErrorBody, isPaymentView, underEndpoint } from '../shared/wire.ts';

export class ProxyError extends Error {
  override readonly name = 'ProxyError';
  constructor(
    /** The proxy's error code, or `network` / `bad_response` / `timeout` when no proper answer came. */
    readonly code: string,
    message: string,
    /** HTTP status, 0 when the request did not complete. */
    readonly status: number,
    readonly fields?: Record<string, string>,
    /** When to ask again (the answer's Retry-After, in ms; 30 s when it names none or a date). */
    readonly retryAfterMs = 30_000,
  ) {
    super(message);
  }
}

/** Each request gives up after this long (Adyen's figure): a hung request must not stop polling. */
export const REQUEST_TIMEOUT_MS = 10_000;

/** The answer's Retry-After in ms (seconds only: a date, or none, is `otherwise`). */
const retryAfterMs = <T extends number | undefined>({ retryAfter }: Answer, otherwise: T): number | T =>
  retryAfter !== null && /^\d+$/.test(retryAfter.trim()) ? +retryAfter * 1000 : otherwise;

/**
 * An answer read whole, as the client decides from it; the page's early request (src/early.ts) hands
 * one over in this shape too, read already, so taking it costs the widget no wait.
 */
export interface Answer {
  status: number;
  /** The Retry-After header, or null. */
  retryAfter: string | null;
  /** The body; '' when it could not be read. */
  text: string;
}

export class ProxyClient {
  readonly #endpoint: string;
  readonly #fetchImpl: typeof fetch;

  constructor(endpoint: string, fetchImpl: typeof fetch = (input, init) => fetch(input, init)) {
    this.#endpoint = endpoint;
    this.#fetchImpl = fetchImpl;
  }

  /** Absolute or relative URL of `path` under the endpoint. */
  urlOf(path: string): string {
    return underEndpoint(this.#endpoint, path);
  }

  /** Open amount: the browser chooses the value. Sends exactly `{value, description?}`, nothing else. */
  async createPayment({ value, description }: OpenPaymentRequest, signal?: AbortSignal): Promise<PaymentView> {
    return (
      await this.#request(API_PATHS.payments, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(description ? { value, description } : { value }),
        signal,
      })
    )[0];
  }

  /**
   * A checkout's live payment (no body: the merchant's server fixed the amount), or with `{renew: true}`
   * a new code now, before the current one expires: the proxy first confirms that no code was paid,
   * and answers the paid one if it was. `created`: issued by this call (HTTP 201), rather than one the
   * checkout already had (200).
   */
  async checkoutPayment(
    id: string,
    signal?: AbortSignal,
    { renew }: CheckoutPaymentRequest = {},
    /** The same request's answer, asked for already by the page (src/early.ts): read as if this call had sent it. */
    sent?: Promise<Answer>,
  ): Promise<{ payment: PaymentView; created: boolean }> {
    const [payment, status] = await this.#request(
      fillPath(CHECKOUT_PATHS.checkoutPayment, { id }),
      renew ? { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"renew":true}', signal } : { method: 'POST', signal },
      false,
      sent,
    );
    return { payment, created: status === 201 };
  }

  async getPayment(reference: string, signal?: AbortSignal): Promise<PaymentView> {
    return (await this.#request(fillPath(API_PATHS.payment, { reference }), { signal, cache: 'no-store' }))[0];
  }

  eventsUrl(reference: string): string {
    return this.urlOf(fillPath(API_PATHS.paymentEvents, { reference }));
  }

  async #request(path: string, init: RequestInit, retried?: boolean, sent?: Promise<Answer>): Promise<[PaymentView, number]> {
    const timeout = new AbortController();
    const timer = setTimeout(() => timeout.abort(), REQUEST_TIMEOUT_MS);
    const outer = init.signal;
    const onAbort = () => timeout.abort();
    outer?.addEventListener('abort', onAbort);
    let res: Answer;
    try {
      res = await (sent
        ? // The deadline and an abort hold for the page's request as for ours.
          new Promise<Answer>((resolve, reject) => {
            timeout.signal.addEventListener('abort', reject);
            sent.then(resolve, reject);
          })
        : this.#fetchImpl(this.urlOf(path), { ...init, signal: timeout.signal }).then(async (answer) => ({
            status: answer.status,
            retryAfter: answer.headers.get('retry-after'),
            text: await answer.text().catch(() => ''),
          })));
    } catch (error) {
      if (outer?.aborted) throw error;
      if (timeout.signal.aborted) throw new ProxyError('timeout', 'The payment server took too long to answer.', 0);
      throw new ProxyError('network', 'The payment server could not be reached.', 0);
    } finally {
      clearTimeout(timer);
      outer?.removeEventListener('abort', onAbort);
    }
    let json: unknown;
    try {
      json = JSON.parse(res.text);
    } catch {
      // Not JSON: bad_response below.
    }
    if (res.status < 200 || res.status > 299) {
      // An instance that is stopping refused before doing anything, and closed the connection: the load
      // balancer's next instance answers. Once, after the Retry-After it asks for (at most 5 s).
      if (!retried && isErrorBody(json) && json.error.code === 'shutting_down') {
        await new Promise((resolve) => setTimeout(resolve, Math.min(retryAfterMs(res, 1000), 5000)));
        init.signal?.throwIfAborted();
        return this.#request(path, init, true);
      }
      if (isErrorBody(json)) throw new ProxyError(json.error.code, json.error.message, res.status, json.error.fields, retryAfterMs(res, undefined));
      throw new ProxyError('bad_response', `The payment server answered HTTP ${res.status}.`, res.status);
    }
    if (!isPaymentView(json)) throw new ProxyError('bad_response', 'The payment server sent an answer this page cannot read.', res.status);
    return [json, res.status];
  }
}
