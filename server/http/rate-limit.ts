/**
 * Per-client rate limits: an in-memory token bucket per client address, refilled continuously. Per
 * instance, also when several share a Postgres store: they protect each instance, and a shared counter
 * would cost a database round trip on every status read; behind N instances a client gets up to N
 * times the limit (divide the settings, or limit at the load balancer). Nothing here decides money.
 */
import type { Context, MiddlewareHandler } from 'hono';
import { getConnInfo } from '@hono/node-server/conninfo';
import { errorBody } from '../../src/shared/errors.ts';
import type { RateLimit } from '../config/index.ts';

interface Bucket {
  tokens: number;
  at: number;
}

/** How many idle buckets may pile up before full ones are swept (each is a few dozen bytes). */
const SWEEP_AT = 10_000;

export class TokenBuckets {
  private readonly buckets = new Map<string, Bucket>();
  private readonly perMs: number;

  constructor(
    private readonly limit: RateLimit,
    private readonly now: () => number,
  ) {
    this.perMs = limit.perMinute / 60_000;
  }

  /** Takes one token for `key`: 0 when allowed, else the seconds until one is available. */
  take(key: string): number {
    const now = this.now();
    const bucket = this.buckets.get(key) ?? { tokens: this.limit.burst, at: now };
    bucket.tokens = Math.min(this.limit.burst, bucket.tokens + Math.max(0, now - bucket.at) * this.perMs);
    bucket.at = now;
    if (!this.buckets.has(key)) {
      if (this.buckets.size >= SWEEP_AT) this.sweep(now);
      this.buckets.set(key, bucket);
    }
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return 0;
    }
    return Math.max(1, Math.ceil((1 - bucket.tokens) / this.perMs / 1000));
  }

  /** Forgets buckets that have refilled: they are the same as a new one. */
  private sweep(now: number): void {
    for (const [key, bucket] of this.buckets) {
      if (bucket.tokens + (now - bucket.at) * this.perMs >= this.limit.burst) this.buckets.delete(key);
    }
  }
}

/**
 * The client's address. Behind `trustedProxies` reverse proxies, the address the nearest of them
 * saw is read from X-Forwarded-For (counting from the right, as each proxy appends); otherwise the
 * socket's peer, since a client can write any X-Forwarded-For it likes. From the header's value and
 * the socket's address, for the app and for the status read's fast path (http/fast-read.ts) alike.
 */
export function addressOf(trustedProxies: number): (forwardedFor: string | undefined, peer: string | undefined) => string {
  return (forwardedFor, peer) => {
    if (trustedProxies > 0) {
      const hops = (forwardedFor ?? '')
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean);
      const address = hops[hops.length - trustedProxies];
      if (address) return address;
    }
    return peer ?? 'unknown';
  };
}

/** The client's address of a request in the app (see addressOf). */
export function clientAddress(trustedProxies: number): (c: Context) => string {
  const address = addressOf(trustedProxies);
  return (c) => {
    let peer: string | undefined;
    try {
      peer = getConnInfo(c).remote.address;
    } catch {
      // Mounted where no Node socket is exposed (app.request, another adapter): one shared bucket.
    }
    return address(trustedProxies > 0 ? c.req.header('x-forwarded-for') : undefined, peer);
  };
}

/** The middleware for one limit, or one that lets everything through when there is none. */
export function limiter(limit: RateLimit | undefined, clientOf: (c: Context) => string, now: () => number): MiddlewareHandler {
  return bucketLimiter(limit ? new TokenBuckets(limit, now) : undefined, clientOf);
}

/** The middleware over `buckets` (shared with the fast path), or one that lets everything through. */
export function bucketLimiter(buckets: TokenBuckets | undefined, clientOf: (c: Context) => string): MiddlewareHandler {
  return buckets ? rateLimit(buckets, clientOf) : (_c, next) => next();
}

export function rateLimit(buckets: TokenBuckets, clientOf: (c: Context) => string): MiddlewareHandler {
  return async (c, next) => {
    const wait = buckets.take(clientOf(c));
    if (wait === 0) return next();
    return c.json(errorBody('rate_limited', `Too many requests; try again in ${wait} s.`), 429, { 'retry-after': String(wait) });
  };
}
