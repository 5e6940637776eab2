/**
 * Who may call the browser API from a page: CORS for the allowed origins (PIX_ALLOWED_ORIGINS), and
 * a refusal of POSTs from any other page before anything is created.
 */
import type { Context, MiddlewareHandler } from 'hono';
import { cors } from 'hono/cors';
import { HttpError } from './errors.ts';
import { addHeaders, requestHeader } from './response-headers.ts';

export type OriginCheck = (origin: string) => boolean;

/** `*` allows any origin (sandbox only); otherwise the exact origins listed. */
export function originCheck(origins: readonly string[]): OriginCheck {
  const anyOrigin = origins.includes('*');
  return (origin) => anyOrigin || origins.includes(origin);
}

const VARY_ORIGIN: Readonly<Record<string, string>> = Object.freeze({ vary: 'Origin' });

/**
 * CORS for the browser API: preflights answered by hono/cors; on other requests the same headers it
 * would add (Access-Control-Allow-Origin for an allowed origin, and Vary: Origin), added to the
 * request's header bag rather than onto the built answer.
 */
export function browserCors(allowed: OriginCheck): MiddlewareHandler {
  const preflight = cors({ origin: (origin) => (allowed(origin) ? origin : null), allowMethods: ['GET', 'POST'], allowHeaders: ['content-type'], maxAge: 600 });
  const headersFor = corsHeaders(allowed);
  return (c, next) => {
    if (c.req.method === 'OPTIONS') return preflight(c, next);
    return addHeaders(c, headersFor(requestHeader(c, 'origin')), next);
  };
}

/**
 * The CORS headers of an answer other than a preflight, for a request from `origin`: the app's
 * middleware above and the status read's fast path (http/fast-read.ts) both add these.
 */
export function corsHeaders(allowed: OriginCheck): (origin: string | undefined) => Readonly<Record<string, string>> {
  return (origin) => (origin && allowed(origin) ? { 'access-control-allow-origin': origin, vary: 'Origin' } : VARY_ORIGIN);
}

/**
 * Browsers send Origin on every POST, and a page on another origin can fire a "simple" POST with no
 * preflight: one from a page that is neither allowed nor the proxy's own origin (its public URL,
 * PIX_PUBLIC_URL; never guessed from the request's Host, which the client writes) is refused.
 */
export function sameOriginOrAllowed(allowed: OriginCheck, ownOrigin: string | undefined): MiddlewareHandler {
  return async (c: Context, next) => {
    const origin = c.req.header('origin');
    if (origin === undefined || allowed(origin) || origin === ownOrigin) return next();
    throw new HttpError(403, 'forbidden', refusedOrigin(origin));
  };
}

/**
 * The 403's message: the origin refused (the page's own, as its browser sent it; cut short, never a
 * secret) and the two settings that would let it in. The widget logs it in the page's console.
 */
export function refusedOrigin(origin: string): string {
  const named = origin.length > 200 ? `${origin.slice(0, 200)}…` : origin;
  return (
    `The origin ${JSON.stringify(named)} may not call the payment API: list it in PIX_ALLOWED_ORIGINS, ` +
    "or set PIX_PUBLIC_URL to the proxy's public URL when the page is on the proxy's own origin (a mounted proxy: your site's)."
  );
}
