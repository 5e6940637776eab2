/** The widget's client of the proxy's browser API: every answer is parsed against src/shared. */
import { API_PATHS, PaymentView, fillPath, type CreatePaymentRequest } from '../shared/contract.ts';
import { ErrorBody } from '../shared/errors.ts';

export class ProxyError extends Error {
  override readonly name = 'ProxyError';
  constructor(
    /** The proxy's error code, or `network` / `bad_response` when no proper answer came. */
    readonly code: string,
    message: string,
    /** HTTP status, 0 when the request did not complete. */
    readonly status: number,
    readonly fields?: Record<string, string>,
  ) {
    super(message);
  }
}

export class ProxyClient {
  constructor(
    private readonly endpoint: string,
    private readonly fetchImpl: typeof fetch = (input, init) => fetch(input, init),
  ) {}

  createPayment(body: CreatePaymentRequest, signal?: AbortSignal): Promise<PaymentView> {
    return this.request(API_PATHS.payments, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
      signal,
    });
  }

  getPayment(reference: string, signal?: AbortSignal): Promise<PaymentView> {
    return this.request(fillPath(API_PATHS.payment, { reference }), { signal, cache: 'no-store' });
  }

  private async request(path: string, init: RequestInit): Promise<PaymentView> {
    let res: Response;
    try {
      res = await this.fetchImpl(this.endpoint.replace(/\/$/, '') + path, init);
    } catch (error) {
      if ((error as Error).name === 'AbortError') throw error;
      throw new ProxyError('network', 'The payment server could not be reached.', 0);
    }
    const json: unknown = await res.json().catch(() => undefined);
    if (!res.ok) {
      const body = ErrorBody.safeParse(json);
      if (body.success) throw new ProxyError(body.data.error.code, body.data.error.message, res.status, body.data.error.fields);
      throw new ProxyError('bad_response', `The payment server answered HTTP ${res.status}.`, res.status);
    }
    const view = PaymentView.safeParse(json);
    if (!view.success) throw new ProxyError('bad_response', 'The payment server sent an answer this page cannot read.', res.status);
    return view.data;
  }
}
