/**
 * Per-client rate limits: an in-memory token bucket per client address, refilled continuously. Per
 * instance, also when several share a Postgres store: they protect each instance, and a shared counter
 * would cost a database round trip on every status read; behind N instances a client gets up to N
 * times the limit (divide the settings, or limit at the load balancer). Nothing here decides money.
 */
import type { Context, MiddlewareHandler } from 'hono';
import { getConnInfo } from '@hono/node-server/conninfo';
import { errorBody } from '../../src/shared/errors.ts';
import type { RateLimit } from '../config.ts';

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
 * socket's peer, since a client can write any X-Forwarded-For it likes.
 */
export function clientAddress(trustedProxies: number): (c: Context) => string {
  return (c) => {
    if (trustedProxies > 0) {
      const hops = (c.req.header('x-forwarded-for') ?? '')
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean);
      const address = hops[hops.length - trustedProxies];
      if (address) return address;
    }
    try {
      return getConnInfo(c).remote.address ?? 'unknown';
    } catch {
      // Mounted where no Node socket is exposed (app.request, another adapter): one shared bucket.
      return 'unknown';
    }
  };
}

/** The middleware for one limit, or one that lets everything through when there is none. */
export function limiter(limit: RateLimit | undefined, clientOf: (c: Context) => string, now: () => number): MiddlewareHandler {
  return limit ? rateLimit(new TokenBuckets(limit, now), clientOf) : (_c, next) => next();
}

export function rateLimit(buckets: TokenBuckets, clientOf: (c: Context) => string): MiddlewareHandler {
  return async (c, next) => {
    const wait = buckets.take(clientOf(c));
    if (wait === 0) return next();
    return c.json(errorBody('rate_limited', `Too many requests; try again in ${wait} s.`), 429, { 'retry-after': String(wait) });
  };
}
