/**
 * The merchant webhook on the merchant's side in one call: `constructEvent` checks the signature over
 * the raw body (domain/signature.ts, the same code the proxy signs with), then the timestamp, then
 * reads the body as an OutcomeEvent; `webhookHandler` (node:http, Express) and `webhookFetchHandler`
 * (Request -> Response: Hono, Next.js) add the body reading and the answers the proxy's deliveries
 * expect: 2xx once handled, anything else retried for three days (docs/webhooks.md, "Retries for days").
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { OutcomeEvent } from '../../src/shared/contract.ts';
import { issuesToFields } from '../../src/shared/errors.ts';
import {
  DEFAULT_TOLERANCE_SECONDS,
  SIGNATURE_HEADER,
  STANDARD_WEBHOOK_HEADERS,
  checkWebhookSignature,
  verifyWebhookSignature as verifySignature,
  webhookSecrets,
  type VerifyOptions,
  type WebhookHeaders,
  type WebhookSecrets,
} from '../domain/signature.ts';
import { notSetError, requireSet, type OptionSource } from './not-set.ts';

export type WebhookVerificationErrorCode = 'missing_signature' | 'invalid_signature' | 'timestamp_out_of_window' | 'invalid_payload';

/** Why a delivery was refused. Answer it with a 4xx; the message names no secret. */
export class WebhookVerificationError extends Error {
  override readonly name = 'WebhookVerificationError';
  constructor(
    readonly code: WebhookVerificationErrorCode,
    message: string,
  ) {
    super(message);
  }
}

export interface ConstructEventOptions {
  /** How far the signature's timestamp may be from `now`, in seconds (default 300). */
  toleranceSeconds?: number;
  /** The receiver's clock, epoch ms (default Date.now()). */
  now?: number;
}

export type { WebhookHeaders, WebhookSecrets } from '../domain/signature.ts';

/**
 * The verified outcome event of one delivery. `secret` is PIX_MERCHANT_WEBHOOK_SECRET: one secret, or
 * several (an array, or separated by spaces) while rotating: any one verifies. Throws
 * WebhookVerificationError:
 * - `missing_signature`: neither the Standard Webhooks headers (`webhook-id`, `webhook-timestamp`,
 *   `webhook-signature`) nor the deprecated Pix-Checkout-Signature;
 * - `invalid_signature`: malformed headers, or no signature that is a secret's over this body;
 * - `timestamp_out_of_window`: signed with the secret, but more than `toleranceSeconds` from `now`
 *   (a replay, or a clock off: keep both on NTP);
 * - `invalid_payload`: signed, but not JSON, not an OutcomeEvent, or not the event `webhook-id` names.
 *
 * `rawBody` must be the bytes as received: a body parsed and serialised again no longer matches.
 */
export function constructEvent(rawBody: string | Buffer, headers: WebhookHeaders, secret: WebhookSecrets, options: ConstructEventOptions = {}): OutcomeEvent {
  requireSecret(secret, 'constructEvent');
  // An empty body is a body (a delivery to refuse, not a set-up fault): only undefined or null is not set.
  if (rawBody === undefined || rawBody === null) throw notSetError('constructEvent', 'rawBody', { what: "the request's raw body, a string or a Buffer" });
  requireSet(headers, 'constructEvent', 'headers', { what: "the request's headers" });
  if (typeof rawBody !== 'string' && !Buffer.isBuffer(rawBody)) {
    throw new TypeError('constructEvent: rawBody must be the raw body as a string or a Buffer (was a body parser run first?)');
  }
  const check = checkWebhookSignature(rawBody, headers, secret, options);
  const tolerance = options.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS;
  const nowSeconds = Math.floor((options.now ?? Date.now()) / 1000);
  switch (check.verdict) {
    case 'missing':
      throw new WebhookVerificationError(
        'missing_signature',
        `No ${STANDARD_WEBHOOK_HEADERS.signature} header (nor ${SIGNATURE_HEADER}): this request was not signed by the proxy.`,
      );
    case 'malformed':
      throw new WebhookVerificationError(
        'invalid_signature',
        check.scheme === 'standard'
          ? `The Standard Webhooks headers are incomplete: ${STANDARD_WEBHOOK_HEADERS.id}, ${STANDARD_WEBHOOK_HEADERS.timestamp} (seconds) and ${STANDARD_WEBHOOK_HEADERS.signature} (v1,<base64>) are all needed.`
          : `The ${SIGNATURE_HEADER} header is not t=<seconds>,v1=<hex>.`,
      );
    case 'invalid_signature':
      throw new WebhookVerificationError('invalid_signature', 'The signature does not match this body and secret (a changed body, or another secret).');
    case 'timestamp_out_of_window':
      throw new WebhookVerificationError(
        'timestamp_out_of_window',
        `The signature is ${Math.abs(nowSeconds - (check.timestamp ?? 0))} s from this server's clock (at most ${tolerance} s): a replay, or a clock that is off.`,
      );
    case 'ok':
      break;
  }

  let json: unknown;
  try {
    json = JSON.parse(Buffer.isBuffer(rawBody) ? rawBody.toString('utf8') : rawBody);
  } catch {
    throw new WebhookVerificationError('invalid_payload', 'The body is not JSON.');
  }
  const event = OutcomeEvent.safeParse(json);
  if (!event.success) {
    const fields = Object.entries(issuesToFields(event.error.issues)).map(([path, problem]) => `${path} ${problem}`);
    throw new WebhookVerificationError('invalid_payload', `The body is not an outcome event: ${fields.slice(0, 5).join('; ')}.`);
  }
  if (check.id !== null && check.id !== event.data.id) {
    throw new WebhookVerificationError('invalid_payload', `The ${STANDARD_WEBHOOK_HEADERS.id} header does not name this event.`);
  }
  return event.data;
}

/**
 * True when a delivery is signed by one of `secrets` over `rawBody` within the tolerance
 * (domain/signature.ts, what the proxy signs with): `headers` are the request's (the Standard Webhooks
 * headers, else the deprecated Pix-Checkout-Signature), or a string, the deprecated header's value
 * alone. A secret not set is a TypeError, not `false` for every delivery; a malformed header is `false`.
 */
export function verifyWebhookSignature(
  rawBody: string | Buffer,
  headers: WebhookHeaders | string | null | undefined,
  secrets: WebhookSecrets,
  options: VerifyOptions = {},
): boolean {
  requireSecret(secrets, 'verifyWebhookSignature');
  return verifySignature(rawBody, headers, secrets, options);
}

/** What to do with a verified event; throw (or reject) to have the proxy send it again later. */
export type OutcomeEventHandler = (event: OutcomeEvent) => void | Promise<void>;

export interface WebhookHandlerOptions extends ConstructEventOptions {
  /** The largest body read, in bytes (default 256 KiB; an outcome event is under 1 KiB): beyond, 413. */
  maxBodyBytes?: number;
  /**
   * Told of what the proxy cannot see: `onEvent` throwing (answered 500, delivered again later) or
   * a body that was already parsed (answered 500). Default: console.error.
   */
  onError?: (error: unknown, event: OutcomeEvent | null) => void;
}

/** A node:http request, possibly one a framework already read (Express's `express.raw()`, a rawBody plugin). */
export type WebhookRequest = IncomingMessage & { rawBody?: unknown; body?: unknown };

/** `(req, res, next?)`: a node:http listener, an Express route or middleware. */
export type NodeWebhookHandler = (req: WebhookRequest, res: ServerResponse, next?: (error?: unknown) => void) => void;

const DEFAULT_MAX_BODY_BYTES = 256 * 1024;

interface Answer {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
  /** A fault of the receiver's own set-up, for onError. */
  fault?: Error;
}

const refusal = (status: number, code: string, message: string, headers?: Record<string, string>): Answer => ({
  status,
  body: { error: { code, message } },
  ...(headers ? { headers } : {}),
});

/**
 * The merchant webhook as a node:http handler: reads the raw body (a framework's `req.rawBody`, a
 * Buffer or string `req.body`, else the stream itself), constructs the event, awaits `onEvent`, and
 * answers 200 `{"received":true}`. A refused delivery is a 400 `{error:{code,message}}` (code from
 * WebhookVerificationError), a body over `maxBodyBytes` a 413, a throwing `onEvent` a 500 (the proxy
 * retries). Another method than POST goes to `next` when there is one (Express), else 405.
 *
 * Deliveries are at least once: make `onEvent` idempotent on `event.id`.
 */
export function webhookHandler(secret: WebhookSecrets, onEvent: OutcomeEventHandler, options: WebhookHandlerOptions = {}): NodeWebhookHandler {
  requireSecret(secret, 'webhookHandler');
  requireHandler(onEvent, 'webhookHandler');
  const limit = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  return (req, res, next) => {
    if (req.method !== 'POST') {
      if (next) return next();
      return write(res, refusal(405, 'method_not_allowed', 'The webhook takes POST only.', { allow: 'POST' }));
    }
    void (async () => {
      const raw = await nodeRawBody(req, limit);
      if ('status' in raw && raw.fault) report(options, raw.fault, null);
      write(res, 'status' in raw ? raw : await handle(raw.body, req.headers, secret, onEvent, options));
    })().catch((error: unknown) => {
      // Reading the request failed (the client went away): nothing useful to answer.
      report(options, error, null);
      if (!res.headersSent) write(res, refusal(400, 'invalid_request', 'The request body could not be read.'));
    });
  };
}

/**
 * The merchant webhook as a web-standard handler, `(Request) => Promise<Response>`: Hono
 * (`(c) => handler(c.req.raw)`), Next.js route handlers (`export const POST = handler`), Deno, Bun.
 * The same answers as webhookHandler; the body must not have been read before.
 */
export function webhookFetchHandler(
  secret: WebhookSecrets,
  onEvent: OutcomeEventHandler,
  options: WebhookHandlerOptions = {},
): (request: Request) => Promise<Response> {
  requireSecret(secret, 'webhookFetchHandler');
  requireHandler(onEvent, 'webhookFetchHandler');
  const limit = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  return async (request) => {
    if (request.method !== 'POST') return respond(refusal(405, 'method_not_allowed', 'The webhook takes POST only.', { allow: 'POST' }));
    const raw = await fetchRawBody(request, limit);
    if ('status' in raw) {
      if (raw.fault) report(options, raw.fault, null);
      return respond(raw);
    }
    return respond(await handle(raw.body, request.headers, secret, onEvent, options));
  };
}

async function handle(
  raw: Buffer | string,
  headers: WebhookHeaders,
  secret: WebhookSecrets,
  onEvent: OutcomeEventHandler,
  options: WebhookHandlerOptions,
): Promise<Answer> {
  let event: OutcomeEvent;
  try {
    event = constructEvent(raw, headers, secret, options);
  } catch (error) {
    if (error instanceof WebhookVerificationError) return refusal(400, error.code, error.message);
    throw error;
  }
  try {
    await onEvent(event);
  } catch (error) {
    report(options, error, event);
    // The cause stays here: the proxy records the status, and a retry comes later.
    return refusal(500, 'internal', 'The event was not handled; it will be delivered again.');
  }
  return { status: 200, body: { received: true } };
}

type RawBody = { body: Buffer | string } | Answer;

const tooLarge = (limit: number) => refusal(413, 'payload_too_large', `The body is over ${limit} bytes.`, { connection: 'close' });
const ALREADY_PARSED =
  'The webhook body was read before the handler: mount it before any JSON body parser, or give it the raw body (express.raw(), req.rawBody).';
const alreadyParsed = (): Answer => ({ ...refusal(500, 'internal', ALREADY_PARSED), fault: new Error(ALREADY_PARSED) });

function nodeRawBody(req: WebhookRequest, limit: number): Promise<RawBody> | RawBody {
  for (const given of [req.rawBody, req.body]) {
    if (Buffer.isBuffer(given) || typeof given === 'string') return Buffer.byteLength(given) > limit ? tooLarge(limit) : { body: given };
  }
  // Read by someone else (express.json()): the bytes the signature covers are gone.
  if (req.readableEnded) return alreadyParsed();
  // Read with listeners, not for-await: leaving a for-await early destroys the request, and with it
  // the socket the 413 has to go out on.
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const stop = (result: RawBody) => {
      // An error after the answer (the client going away) has nothing left to tell.
      req
        .off('data', onData)
        .off('end', onEnd)
        .off('error', reject)
        .on('error', () => undefined);
      // The rest is drained, not kept, until the socket closes after the answer.
      req.resume();
      resolve(result);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) stop(tooLarge(limit));
      else chunks.push(chunk);
    };
    const onEnd = () => stop({ body: Buffer.concat(chunks) });
    if (Number(req.headers['content-length']) > limit) return stop(tooLarge(limit));
    req.on('data', onData).once('end', onEnd).once('error', reject);
  });
}

async function fetchRawBody(request: Request, limit: number): Promise<RawBody> {
  if (request.bodyUsed) return alreadyParsed();
  if (Number(request.headers.get('content-length')) > limit) return tooLarge(limit);
  if (!request.body) return { body: '' };
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel().catch(() => undefined);
      return tooLarge(limit);
    }
    chunks.push(value);
  }
  return { body: Buffer.concat(chunks) };
}

function write(res: ServerResponse, answer: Answer): void {
  if (res.headersSent) return;
  const text = JSON.stringify(answer.body);
  res.writeHead(answer.status, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store', ...answer.headers });
  res.end(text);
}

function respond(answer: Answer): Response {
  return new Response(JSON.stringify(answer.body), {
    status: answer.status,
    headers: { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store', ...answer.headers },
  });
}

function report(options: WebhookHandlerOptions, error: unknown, event: OutcomeEvent | null): void {
  try {
    if (options.onError) options.onError(error, event);
    else console.error(`pix-checkout webhook: ${event ? `event ${event.id} (${event.type}) not handled` : 'delivery not read'}:`, error);
  } catch {
    // A failing reporter must not turn an answer into a crash.
  }
}

const WEBHOOK_SECRET: OptionSource = {
  env: 'PIX_MERCHANT_WEBHOOK_SECRET',
  what: "the proxy's merchant webhook secret (several, space separated, while rotating)",
};

function requireSecret(secret: WebhookSecrets, where: string): void {
  // An empty secret would refuse every delivery as invalid_signature: a configuration error, said once.
  requireSet(secret, where, 'secret', WEBHOOK_SECRET);
  if ((typeof secret !== 'string' && !Array.isArray(secret)) || webhookSecrets(secret).length === 0)
    throw new TypeError(`${where}: secret must be the proxy's PIX_MERCHANT_WEBHOOK_SECRET`);
}

/** What a handler is given each verified event: a function, said at set-up rather than at the first delivery. */
function requireHandler(onEvent: OutcomeEventHandler, where: string): void {
  requireSet(onEvent, where, 'onEvent', { what: 'the function given each verified event' });
  if (typeof onEvent !== 'function') throw new TypeError(`${where}: onEvent must be a function, given each verified event`);
}
