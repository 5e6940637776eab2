/**
 * The partner's notifications: `POST {basePath}/webhooks/partner[/<secret>]`. Checks who is calling
 * (source address, secret path segment), reads the raw body (size-limited) and hands it to the intake
 * (domain/webhooks/intake.ts), which stores it before the answer: 202 once stored, 503 when the store
 * cannot take it (so the service tries again). What is kept and why is the intake's policy; this file
 * only speaks HTTP.
 */
import { Hono, type Context, type MiddlewareHandler } from 'hono';
import { errorBody } from '../../src/shared/errors.ts';
import { normalizeIp, type WebhookIntake } from '../domain/webhooks/intake.ts';
import { PARTNER_MAX_BODY_BYTES } from '../partner/wire.ts';
import { readBodyBytes } from '../http/body.ts';
import { allowOnly } from '../http/method-not-allowed.ts';
import type { Logger } from '../log.ts';

/** Where the partner's notifications arrive, under the API's base path. */
export const WEBHOOK_PATH = '/webhooks/partner';

/** The path as it may be logged or echoed: the secret segment (PIX_WEBHOOK_SECRET_PATH) masked. */
export function maskWebhookSecret(path: string): string {
  const at = path.indexOf(`${WEBHOOK_PATH}/`);
  return at === -1 ? path : `${path.slice(0, at + WEBHOOK_PATH.length)}/…`;
}

export interface WebhookReceiverDeps {
  intake: WebhookIntake;
  log: Logger;
  /** The caller's address (X-Forwarded-For through trusted proxies, else the socket). */
  clientOf: (c: Context) => string;
  /** The per-source limit, applied when no source allow-list is set (an allowed source is the partner). */
  limitPerSource: MiddlewareHandler;
}

export function webhookRoutes({ intake, log: baseLog, clientOf, limitPerSource }: WebhookReceiverDeps): Hono {
  const routes = new Hono();

  const handle = async (c: Context, given: string | undefined) => {
    const log = baseLog.child({ req_id: c.get('reqId'), webhook: 'partner' });
    if (intake.secretRequired) {
      if (!intake.secretMatches(given)) {
        log.warn('webhook refused: wrong secret path');
        intake.refused('wrong_path');
        return c.json(errorBody('not_found', `Nothing at ${c.req.method} ${maskWebhookSecret(c.req.path)}.`), 404);
      }
    } else if (given !== undefined) {
      intake.refused('wrong_path');
      return c.json(errorBody('not_found', `Nothing at ${c.req.method} ${maskWebhookSecret(c.req.path)}.`), 404);
    }
    if (intake.sourcesListed) {
      const source = clientOf(c);
      if (!intake.sourceAllowed(source)) {
        log.warn({ source: normalizeIp(source) }, 'webhook refused: source address not allowed');
        intake.refused('wrong_source');
        return c.json(errorBody('forbidden', 'Notifications are accepted only from the payment service (PIX_WEBHOOK_SOURCE_IPS).'), 403);
      }
    }

    const raw = await readRawBody(c, PARTNER_MAX_BODY_BYTES);
    if (raw === null) {
      log.warn('webhook refused: body too large');
      intake.refused('too_large');
      return c.json(errorBody('payload_too_large', `A notification is at most ${PARTNER_MAX_BODY_BYTES} bytes.`), 413);
    }
    const result = await intake.receive(raw, c.req.header('content-type'), log);
    switch (result.kind) {
      case 'stored':
        return c.json({ received: true }, 202);
      case 'empty':
        return c.json(errorBody('invalid_json', 'The notification is empty (did a body parser run before the proxy?).'), 400);
      case 'full':
        return c.json(errorBody('not_ready', 'Too many notifications are waiting; try again later.'), 503, { 'retry-after': '60' });
      case 'not_stored':
        return c.json(errorBody('not_ready', 'Could not record the notification; try again.'), 503);
    }
  };

  // The per-source limit is for strangers: a listed source or the right secret is the partner, whose
  // bursts (a resend from its panel) must never be refused, since it retries only twice.
  const limit: MiddlewareHandler = intake.sourcesListed ? (_c, next) => next() : limitPerSource;
  const limitStrangers: MiddlewareHandler = (c, next) => (intake.secretMatches(c.req.param('secret')) ? next() : limit(c, next));
  routes.post(WEBHOOK_PATH, limit, (c) => handle(c, undefined));
  routes.post(`${WEBHOOK_PATH}/:secret`, limitStrangers, (c) => handle(c, c.req.param('secret')));
  allowOnly(routes, WEBHOOK_PATH, 'POST');
  allowOnly(routes, `${WEBHOOK_PATH}/:secret`, 'POST');
  return routes;
}

/** The body as text, read up to `maxBytes`; null when larger. Invalid UTF-8 becomes U+FFFD (and then fails JSON.parse or the schema). */
export async function readRawBody(c: Context, maxBytes: number): Promise<string | null> {
  const bytes = await readBodyBytes(c, maxBytes);
  return bytes === null ? null : new TextDecoder('utf-8').decode(bytes);
}
