/**
 * The partner's notifications: `POST {basePath}/webhooks/partner[/<secret>]`. Checks who is calling
 * (source address, secret path segment), reads the raw body (size-limited), writes it to the store,
 * and only then answers 202. Nothing upstream is asked before answering: the event is processed
 * afterwards (domain/webhook-processor.ts). A store that cannot take the write answers 503, so the
 * service tries again.
 *
 * The receiver keeps everything that passed the source and secret checks: the partner stops after
 * two retries, so a 4xx would lose an event for good. A notification (JSON or form-encoded) that
 * names a reference in any plausible field (partner/notification.ts) is stored to be confirmed with
 * the partner, whoever it is about; one we cannot read at all is stored whole too, already
 * processed with the result `unreadable` (or `ambiguous`: it names two different references), logged,
 * and listed for the operator
 * (`pix-checkout webhook received --unreadable`). Calls from a wrong source or to a wrong secret path
 * are refused and not stored (anyone can send them, so storing them would let anyone fill the disk).
 */
import { timingSafeEqual } from 'node:crypto';
import { Hono, type Context, type MiddlewareHandler } from 'hono';
import { DEFAULTS } from '../config.ts';
import { errorBody } from '../../src/shared/errors.ts';
import { examineNotification, notificationBody, type PartnerNotification } from '../partner/notification.ts';
import { PARTNER_MAX_BODY_BYTES } from '../partner/wire.ts';
import { readBodyBytes } from '../http/body.ts';
import { allowOnly } from '../http/method-not-allowed.ts';
import type { Logger } from '../log.ts';
import type { Store } from '../store/store.ts';

/** Where the partner's notifications arrive, under the API's base path. */
export const WEBHOOK_PATH = '/webhooks/partner';

/** The path as it may be logged or echoed: the secret segment (PIX_WEBHOOK_SECRET_PATH) masked. */
export function maskWebhookSecret(path: string): string {
  const at = path.indexOf(`${WEBHOOK_PATH}/`);
  return at === -1 ? path : `${path.slice(0, at + WEBHOOK_PATH.length)}/…`;
}

export interface WebhookReceiverDeps {
  store: Store;
  now: () => number;
  log: Logger;
  /** The secret last path segment the partner must call; none when unset. */
  secretPath?: string | undefined;
  /** Addresses notifications may come from; any when empty. */
  sourceIps?: readonly string[];
  /** The caller's address (X-Forwarded-For through trusted proxies, else the socket). */
  clientOf: (c: Context) => string;
  /** Called after the event is stored (and before the answer is sent): process it. */
  received: (id: number, rawBody: string, event: PartnerNotification) => void;
  /** The per-source limit, applied when no source allow-list is set (an allowed source is the partner). */
  limitPerSource: MiddlewareHandler;
}

export function webhookRoutes(deps: WebhookReceiverDeps): Hono {
  const routes = new Hono();
  const allowed = new Set((deps.sourceIps ?? []).map(normalizeIp));
  const secret = deps.secretPath ? Buffer.from(deps.secretPath) : null;
  /** When the last unreadable notifications came (the last hour's). */
  const unreadable: number[] = [];

  const handle = async (c: Context, given: string | undefined) => {
    const log = deps.log.child({ req_id: c.get('reqId'), webhook: 'partner' });
    if (secret) {
      const ok = secretMatches(given);
      if (!ok) {
        log.warn('webhook refused: wrong secret path');
        return c.json(errorBody('not_found', `Nothing at ${c.req.method} ${maskWebhookSecret(c.req.path)}.`), 404);
      }
    } else if (given !== undefined) {
      return c.json(errorBody('not_found', `Nothing at ${c.req.method} ${maskWebhookSecret(c.req.path)}.`), 404);
    }
    if (allowed.size > 0) {
      const source = normalizeIp(deps.clientOf(c));
      if (!allowed.has(source)) {
        log.warn({ source }, 'webhook refused: source address not allowed');
        return c.json(errorBody('forbidden', 'Notifications are accepted only from the payment service (PIX_WEBHOOK_SOURCE_IPS).'), 403);
      }
    }

    const raw = await readRawBody(c, PARTNER_MAX_BODY_BYTES);
    if (raw === null) {
      log.warn('webhook refused: body too large');
      return c.json(errorBody('payload_too_large', `A notification is at most ${PARTNER_MAX_BODY_BYTES} bytes.`), 413);
    }
    const receivedAt = deps.now();
    if (raw.trim() === '') {
      // Nothing to keep: the partner always sends a body, so an empty one is a body parser that ran before the proxy.
      log.warn('webhook refused: empty body');
      return c.json(errorBody('invalid_json', 'The notification is empty (did a body parser run before the proxy?).'), 400);
    }
    const reading = examineNotification(notificationBody(raw, c.req.header('content-type')));
    if (!('notification' in reading)) {
      // Kept and acknowledged: answering 4xx would lose it for good. Whole, unless a flood of them
      // is arriving: then only its start (the intake may be open to anyone). One naming two different
      // references is processed as neither: the operator decides.
      const result = 'ambiguous' in reading ? 'ambiguous' : 'unreadable';
      const hourAgo = receivedAt - 3_600_000;
      while (unreadable.length > 0 && unreadable[0]! <= hourAgo) unreadable.shift();
      const whole = unreadable.length < DEFAULTS.webhookIntake.unreadableWholePerHour;
      unreadable.push(receivedAt);
      try {
        const kept = whole ? raw : raw.slice(0, DEFAULTS.webhookIntake.auditBytes);
        const id = await deps.store.webhookEvents.addRejected(kept, receivedAt, result);
        const fields = { webhook_event: id, bytes: Buffer.byteLength(raw) };
        if ('ambiguous' in reading) {
          log.warn(
            { ...fields, references: reading.ambiguous.slice(0, 5) },
            'webhook ambiguous: it names different references; stored for the operator (pix-checkout webhook received --unreadable)',
          );
        } else log.error(fields, 'webhook unreadable: stored for the operator (pix-checkout webhook received --unreadable)');
      } catch (error) {
        log.error({ err: { message: (error as Error).message } }, 'webhook not stored: answering 503 so the service retries');
        return c.json(errorBody('not_ready', 'Could not record the notification; try again.'), 503);
      }
      return c.json({ received: true }, 202);
    }
    const event = reading.notification;

    let id: number;
    try {
      // Bounded: past the cap the service is asked to retry (503) rather than the disk filling up.
      if ((await deps.store.webhookEvents.countUnprocessed(DEFAULTS.webhookIntake.pendingCap)) >= DEFAULTS.webhookIntake.pendingCap) {
        log.error({ cap: DEFAULTS.webhookIntake.pendingCap }, 'webhook not stored: too many notifications wait for confirmation');
        return c.json(errorBody('not_ready', 'Too many notifications are waiting; try again later.'), 503, { 'retry-after': '60' });
      }
      id = await deps.store.webhookEvents.add(raw, receivedAt);
    } catch (error) {
      log.error({ err: { message: (error as Error).message } }, 'webhook not stored: answering 503 so the service retries');
      return c.json(errorBody('not_ready', 'Could not record the notification; try again.'), 503);
    }
    deps.received(id, raw, event);
    return c.json({ received: true }, 202);
  };

  // Constant time: the secret segment is a credential.
  function secretMatches(given: string | undefined): boolean {
    const candidate = Buffer.from(given ?? '');
    return secret !== null && candidate.length === secret.length && timingSafeEqual(candidate, secret);
  }
  // The per-source limit is for strangers: a listed source or the right secret is the partner, whose
  // bursts (a resend from its panel) must never be refused, since it retries only twice.
  const limit: MiddlewareHandler = allowed.size > 0 ? (_c, next) => next() : deps.limitPerSource;
  const limitStrangers: MiddlewareHandler = (c, next) => (secretMatches(c.req.param('secret')) ? next() : limit(c, next));
  routes.post(WEBHOOK_PATH, limit, (c) => handle(c, undefined));
  routes.post(`${WEBHOOK_PATH}/:secret`, limitStrangers, (c) => handle(c, c.req.param('secret')));
  allowOnly(routes, WEBHOOK_PATH, 'POST');
  allowOnly(routes, `${WEBHOOK_PATH}/:secret`, 'POST');
  return routes;
}

/** IPv4-mapped IPv6 (`::ffff:1.2.3.4`, what a dual-stack socket reports) is the IPv4 address. */
export function normalizeIp(address: string): string {
  const trimmed = address.trim().toLowerCase();
  return trimmed.startsWith('::ffff:') && trimmed.includes('.') ? trimmed.slice(7) : trimmed;
}

/** The body as text, read up to `maxBytes`; null when larger. Invalid UTF-8 becomes U+FFFD (and then fails JSON.parse or the schema). */
export async function readRawBody(c: Context, maxBytes: number): Promise<string | null> {
  const bytes = await readBodyBytes(c, maxBytes);
  return bytes === null ? null : new TextDecoder('utf-8').decode(bytes);
}
