/**
 * Fault injection, so a client can be tested against the failures a real network and a real service
 * have: added latency, 5xx answers, dropped connections, malformed JSON and lost webhooks, each at a
 * chosen rate. HTTP faults strike the partner API only (never the control API, so a test can always
 * reset them), optionally only under a path prefix; they strike before the request is processed,
 * except malformed_json, which mangles the real answer, and late_answer, which holds the answer of a
 * request already carried out (the case a client must not repeat blindly).
 */
import type { IncomingMessage } from 'node:http';
import type { MiddlewareHandler } from 'hono';

export const FAULT_KINDS = ['latency', 'late_answer', 'server_error', 'drop_connection', 'malformed_json', 'drop_webhook'] as const;
export type FaultKind = (typeof FAULT_KINDS)[number];

export interface Fault {
  id: number;
  kind: FaultKind;
  /** Chance that the fault strikes one request (or one webhook delivery), 0..1. */
  rate: number;
  /** Only requests whose path starts with this; null for every partner path. Not for drop_webhook. */
  path_prefix: string | null;
  /** latency (before the request is processed) and late_answer (after): milliseconds added. */
  latency_ms: number | null;
  /** server_error: the status answered, 500..599 (in-process, any error status: a 409, a firewall's 400). */
  status: number | null;
  /** server_error: the body answered instead of the dialect's error (JSON when it starts with `{`, else HTML), in-process only. */
  body?: string | null;
  /** How many more times it may strike; null for no end. At 0 it is removed. */
  times: number | null;
}

export type FaultInput = Omit<Fault, 'id' | 'times'> & { times?: number | null };

/** A small seeded generator (mulberry32): the same seed strikes the same requests. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export class FaultInjector {
  private faults: Fault[] = [];
  private nextId = 1;

  constructor(private readonly random: () => number = Math.random) {}

  add(input: FaultInput): Fault {
    const fault = { id: this.nextId++, ...input, times: input.times ?? null };
    this.faults.push(fault);
    return fault;
  }

  remove(id: number): boolean {
    const before = this.faults.length;
    this.faults = this.faults.filter((fault) => fault.id !== id);
    return this.faults.length < before;
  }

  reset(): void {
    this.faults = [];
  }

  list(): readonly Fault[] {
    return this.faults;
  }

  /** Rolls every fault of `kind` that applies to `path`; the ones that strike. */
  strike(kind: FaultKind, path?: string): Fault[] {
    const struck = this.faults.filter(
      (fault) => fault.kind === kind && (path === undefined || fault.path_prefix === null || path.startsWith(fault.path_prefix)) && this.roll(fault.rate),
    );
    for (const fault of struck) {
      if (fault.times !== null && --fault.times <= 0) this.remove(fault.id);
    }
    return struck;
  }

  /** True when a drop_webhook fault strikes this delivery. */
  readonly dropsWebhook = (): boolean => this.strike('drop_webhook').length > 0;

  private roll(rate: number): boolean {
    // Rates 0 and 1 never consume randomness, so they stay exact whatever else is configured.
    if (rate <= 0) return false;
    if (rate >= 1) return true;
    return this.random() < rate;
  }
}

/**
 * The partner API's fault middleware; the Node request (from @hono/node-server) lets it drop the
 * connection. `errorBody` words a server_error's body (the sandbox's dialect does).
 */
export function faultMiddleware(
  faults: FaultInjector,
  errorBody: (status: number, message: string) => unknown = (_status, message) => ({ message }),
): MiddlewareHandler<{ Bindings: { incoming?: IncomingMessage } }> {
  return async (c, next) => {
    const path = c.req.path;
    const delay = faults.strike('latency', path).reduce((sum, fault) => sum + (fault.latency_ms ?? 0), 0);
    if (delay > 0) await new Promise((resolve) => setTimeout(resolve, delay).unref());

    if (faults.strike('drop_connection', path).length > 0) {
      const socket = c.env?.incoming?.socket;
      if (socket) {
        socket.destroy();
        // Nobody will read this answer: the connection is gone.
        return c.body(null, 503);
      }
    }
    const error = faults.strike('server_error', path)[0];
    if (error) {
      const status = error.status ?? 503;
      if (error.body != null) {
        const type = error.body.trimStart().startsWith('{') ? 'application/json' : 'text/html; charset=utf-8';
        return c.body(error.body, status as 503, { 'content-type': type });
      }
      return c.json(errorBody(status, 'Service unavailable (sandbox fault).'), status as 503);
    }

    await next();
    const late = faults.strike('late_answer', path).reduce((sum, fault) => sum + (fault.latency_ms ?? 0), 0);
    if (late > 0) await new Promise((resolve) => setTimeout(resolve, late).unref());
    // An answer with no body (HEAD, a 204) has nothing to cut.
    if (c.req.method !== 'HEAD' && c.res.body !== null && faults.strike('malformed_json', path).length > 0) {
      const text = await c.res.text();
      // Cut mid-document: what a proxy that truncates or a half-written answer looks like.
      const broken = text.slice(0, Math.max(1, Math.floor(text.length / 2)));
      const headers = new Headers(c.res.headers);
      headers.delete('content-length');
      c.res = new Response(broken, { status: c.res.status, headers });
    }
  };
}
