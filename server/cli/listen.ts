/**
 * `pix-checkout listen --forward-to <url>`: for development, as `stripe listen` does. Reads the
 * proxy's outcome events (GET /api/events, SSE, with the API key) and POSTs each, signed as Standard
 * Webhooks says, to a local URL, printing one line per event with the receiver's answer. It signs
 * with a secret of its own (printed when it made one up, or --secret / PIX_LISTEN_SECRET), never the
 * proxy's PIX_MERCHANT_WEBHOOK_SECRET, which never leaves the proxy: give your receiver this one
 * while you develop. The stream resumes after the last event it saw when the connection drops.
 */
import { MERCHANT_PATHS } from '../../src/shared/merchant.ts';
import { generateWebhookSecret, webhookHeaders, webhookSecretProblem } from '../domain/signature.ts';
import { ExitCode, UsageError, parse, type CliIo } from './io.ts';
import { PROXY_HELP, PROXY_OPTIONS, proxyTarget, refusalOf } from './proxy-http.ts';

export const HELP = `Usage: pix-checkout listen --forward-to <url> [--secret <whsec_...>] [--after <seq>]

For development: receives the proxy's outcome events (payment.paid, transfer.approved...) as they
are recorded and POSTs each to <url> (your receiver on this machine), signed as Standard Webhooks
says (webhook-id, webhook-timestamp, webhook-signature), printing one line per event with your
receiver's answer. It signs with its own secret, printed at start (or --secret, PIX_LISTEN_SECRET):
configure your receiver with it. The proxy's own signing secret is never sent nor shown. Events
are forwarded once: a failed one is printed, not retried. Ctrl-C stops it.

  --forward-to <url> where to POST each event (http or https)
  --secret <secret>  the signing secret to use (whsec_<base64>, or text of 24+ characters)
  --after <seq>      also forward the events recorded after this sequence number (printed per line)
${PROXY_HELP}`;

/** Reconnection delays after the stream drops, ms (the last repeats). */
const RECONNECT_MS = [500, 1000, 2000, 5000];

interface SseEvent {
  event: string;
  id: string | null;
  data: string;
}

/** Server-Sent Events from a body stream (the WHATWG parsing rules, enough of them for one server). */
async function* sseEvents(body: ReadableStream<Uint8Array>): AsyncGenerator<SseEvent> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  let event = '';
  let id: string | null = null;
  let data: string[] = [];
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += decoder.decode(value, { stream: true });
    let end: number;
    while ((end = buffer.search(/\r\n|\r|\n/)) !== -1) {
      const line = buffer.slice(0, end);
      buffer = buffer.slice(end + (buffer.startsWith('\r\n', end) ? 2 : 1));
      if (line === '') {
        if (data.length > 0) yield { event: event || 'message', id, data: data.join('\n') };
        event = '';
        data = [];
        continue;
      }
      if (line.startsWith(':')) continue;
      const colon = line.indexOf(':');
      const field = colon === -1 ? line : line.slice(0, colon);
      const text = colon === -1 ? '' : line.slice(colon + 1).replace(/^ /, '');
      if (field === 'event') event = text;
      else if (field === 'data') data.push(text);
      else if (field === 'id') id = text;
    }
  }
}

const clock = () => new Date().toISOString().replace('T', ' ').slice(0, 19);

export async function listenCommand(rest: string[], io: CliIo): Promise<void> {
  const { values } = parse(rest, { 'forward-to': { type: 'string' }, secret: { type: 'string' }, after: { type: 'string' }, ...PROXY_OPTIONS });
  if (values.help) return io.out(HELP);
  const forwardTo = values['forward-to'];
  if (forwardTo === undefined) throw new UsageError('listen needs --forward-to <url>, your receiver (http://localhost:3000/webhooks, say)');
  try {
    if (!/^https?:$/.test(new URL(forwardTo).protocol)) throw new Error('scheme');
  } catch {
    throw new UsageError('--forward-to must be an http:// or https:// URL');
  }
  if (values.after !== undefined && !/^\d{1,15}$/.test(values.after)) throw new UsageError('--after must be a sequence number a listen line printed');
  const given = values.secret ?? io.env.PIX_LISTEN_SECRET;
  if (given !== undefined) {
    const problem = webhookSecretProblem(given) ?? (given.length < 24 ? 'must be at least 24 characters' : null);
    if (problem) throw new UsageError(`--secret ${problem}`);
  }
  const secret = given ?? generateWebhookSecret();
  const target = proxyTarget(values, io.env);

  const stopping = new AbortController();
  const stop = () => stopping.abort();
  io.signal?.addEventListener('abort', stop, { once: true });
  if (!io.signal) {
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  }
  let after: string | null = values.after ?? null;
  let attempt = 0;
  let announced = false;
  try {
    while (!stopping.signal.aborted) {
      const url = new URL(`${target.api}${MERCHANT_PATHS.events}`);
      if (after !== null) url.searchParams.set('after', after);
      let res: Response;
      try {
        res = await fetch(url, { headers: { authorization: `Bearer ${target.apiKey}`, accept: 'text/event-stream' }, signal: stopping.signal });
      } catch (error) {
        if (stopping.signal.aborted) break;
        if (!announced) {
          io.err(`pix-checkout: could not reach the proxy at ${target.api} (${(error as Error).message}); is it running? (pix-checkout serve)`);
          throw new ExitCode(1);
        }
        await pause(RECONNECT_MS[Math.min(attempt++, RECONNECT_MS.length - 1)]!, stopping.signal);
        continue;
      }
      if (!res.ok) {
        // A refused key or a proxy without the route: nothing a retry would change.
        io.err(`pix-checkout: the proxy refused the event stream: ${await refusalOf(res)}`);
        throw new ExitCode(res.status === 400 ? 2 : 1);
      }
      attempt = 0;
      if (!announced) {
        announced = true;
        io.out(
          given === undefined
            ? `Ready! Forwarding the outcome events of ${target.api} to ${forwardTo}. Your webhook signing secret is ${secret} (Ctrl-C to quit)`
            : `Ready! Forwarding the outcome events of ${target.api} to ${forwardTo}, signed with the secret you gave (Ctrl-C to quit)`,
        );
      } else io.out(`${clock()}  reconnected`);
      try {
        for await (const frame of sseEvents(res.body!)) {
          if (frame.id !== null) after = frame.id;
          if (frame.event !== 'outcome') continue;
          await forward(frame, forwardTo, secret, io);
        }
      } catch (error) {
        if (stopping.signal.aborted) break;
        io.out(`${clock()}  the event stream dropped (${(error as Error).message}); reconnecting`);
      }
      if (!stopping.signal.aborted) await pause(RECONNECT_MS[Math.min(attempt++, RECONNECT_MS.length - 1)]!, stopping.signal);
    }
  } finally {
    io.signal?.removeEventListener('abort', stop);
    process.off('SIGINT', stop);
    process.off('SIGTERM', stop);
  }
}

/** Signs and POSTs one event; prints its line. Never throws: a receiver's failure is its line. */
async function forward(frame: SseEvent, url: string, secret: string, io: CliIo): Promise<void> {
  // Read tolerantly: an event type this version does not know (a newer proxy's) is forwarded all the
  // same; only its id and type are needed, to sign it and to print its line.
  let event: { id: string; type: string } | null;
  try {
    const parsed: unknown = JSON.parse(frame.data);
    const { id, type } = (parsed ?? {}) as { id?: unknown; type?: unknown };
    event = typeof id === 'string' && id !== '' && typeof type === 'string' ? { id, type } : null;
  } catch {
    event = null;
  }
  const seq = frame.id ?? '-';
  if (!event) {
    io.out(`${clock()}  [${seq}] an event without an id and a type; skipped`);
    return;
  }
  const started = performance.now();
  let answer: string;
  try {
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'user-agent': 'pix-checkout-listen', ...webhookHeaders(event.id, frame.data, secret) },
      body: frame.data,
      redirect: 'manual',
      signal: AbortSignal.timeout(10_000),
    });
    await res.body?.cancel().catch(() => undefined);
    answer = `${res.status} ${res.statusText}`.trim();
  } catch (error) {
    answer = (error as Error).name === 'TimeoutError' ? 'no answer in 10 s' : `not delivered (${(error as Error).message})`;
  }
  io.out(`${clock()}  [${seq}] ${event.type.padEnd(23)} ${event.id}  -> ${answer} (${Math.round(performance.now() - started)} ms)`);
}

function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener(
      'abort',
      () => {
        clearTimeout(timer);
        resolve();
      },
      { once: true },
    );
  });
}
