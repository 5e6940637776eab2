/**
 * One simulated run: the real proxy (createApp over the real SQLite store, a file in a temp
 * directory) against the simulated partner (world.ts), on a fake clock. It crashes and restarts
 * instances (a new store object on the same file, a new createApp: no graceful work), runs a second
 * instance on the same file, plays the merchant's receiver (the proxy's deliveries go to an
 * in-process fetch), and checks the invariants after every step (invariants.ts).
 *
 * Determinism: the proxy's background loops are off (the sim runs reconciler and delivery passes
 * as commands); its time, timers, ids, jitter and the deliveries' fetch come from the run
 * (createApp's `runtime`: runtime.ts's stepped clock and seeded random source, and the in-process
 * receiver), so nothing global is patched and a seed replays the same run.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createApp, type PixApp } from '../../server/app.ts';
import { createLogger } from '../../server/log.ts';
import type { Runtime } from '../../server/runtime/runtime.ts';
import Database from 'libsql';
import { DB_FILE_NAME, openSqliteStore } from '../../server/store/sqlite/sqlite-store.ts';
import type { Store } from '../../server/store/store.ts';
import { SeededRandom, SimClock, seedOf } from './runtime.ts';
import { SimWorld, type Behaviour } from './world.ts';

export const T0 = Date.UTC(2030, 0, 1, 12);
export const API_KEY = 'sim-api-key-0123456789';
export const SECRET_PATH = 'sim-secret-path-0123456789abcdef';
export const MERCHANT_URL = 'https://merchant.sim.example/hooks/pix';
/** Seconds each code stays payable (the proxy's PIX_EXPIRATION_SECONDS), unless the run draws the longer one (the partner's default hour is then shorter). */
export const EXPIRATION_SECONDS = 600;
export const LONG_EXPIRATION_SECONDS = 3 * 3600;

export interface SimOptions {
  behaviour: Behaviour;
  /** A second instance on the same SQLite file serves the commands that name it. */
  twoInstances: boolean;
}

export interface Instance {
  store: Store;
  app: PixApp;
  /** A call of it never returned (a hung partner call): it must be crashed. */
  hung: boolean;
  /** Its clock: the run's time, and the timers this process set (a crashed one's never fire). */
  clock: SimClock;
  /** Crashed instances are abandoned (not closed gracefully); the run closes their stores at its end. */
  generation: number;
}

/** A checkout the merchant created. */
export interface SimCheckout {
  id: string;
  /** Its description: the simulated partner knows a checkout's payments by it. */
  tag: string;
  valueCents: number;
  /** References of the codes shown to the customer, oldest first. */
  shown: string[];
}

export interface SimResponse {
  status: number;
  body: Record<string, unknown> | null;
}

/** What the merchant's receiver got. */
export interface Receiver {
  /** Fail the next n deliveries (HTTP 500). */
  failNext: number;
  /** Deliveries per event id. */
  received: Map<string, number>;
  /** Each event id's first body. */
  events: Map<string, { type: string; reference: string; checkoutId: string | null }>;
  /** Interleaving: runs while the next delivery is in flight; false makes that delivery fail. */
  duringNext?: (() => Promise<boolean>) | undefined;
}

/** Columns the store fills from its own clock and chance (server/store), not from the proxy's runtime. */
const STORE_STAMPS = new Set(['outbox.claim', 'partner_tokens.saved_at']);

export class Sim {
  clock = T0;
  readonly world: SimWorld;
  readonly dir: string;
  readonly instances: Instance[] = [];
  /** Every store opened, crashed ones included (closed at the end). */
  private readonly stores: Store[] = [];
  /** Reads the file with no cache in front: what is stored, whatever an instance holds in memory. */
  observer!: Store;
  readonly checkouts: SimCheckout[] = [];
  readonly errors: string[] = [];
  readonly receiver: Receiver = { failNext: 0, received: new Map(), events: new Map() };
  /** Payout requests made: idempotency keys in order. */
  readonly keys: string[] = [];
  private keySeq = 0;
  /** What every instance of the run is given with its own clock: the run's seeded random source, the receiver as fetch. */
  readonly runtime: Omit<Runtime, 'clock'>;
  /** Steps taken (for messages). */
  step = 0;
  readonly log: string[] = [];

  /**
   * What the run did, when traced: every request and its answer, every delivery the receiver got,
   * and at the end every stored row (runTrace). Two runs of one seed give the same trace.
   */
  readonly trace: string[] | null;

  constructor(
    readonly options: SimOptions,
    traced = false,
  ) {
    this.trace = traced ? [] : null;
    this.world = new SimWorld(options.behaviour, () => this.clock);
    this.world.shownToCustomer = (reference) => this.checkouts.some((checkout) => checkout.shown.includes(reference));
    this.dir = mkdtempSync(join(process.env.SIM_TMPDIR ?? tmpdir(), 'pix-sim-'));
    this.runtime = {
      random: new SeededRandom(seedOf(options)),
      fetch: (input, init) => {
        const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
        if (url !== MERCHANT_URL) throw new Error(`the simulated proxy reached outside the run: ${url}`);
        return this.receive(init);
      },
    };
  }

  async start(): Promise<void> {
    this.observer = openSqliteStore({ dataDir: this.dir, cacheSize: 0 });
    this.stores.push(this.observer);
    this.instances.push(this.boot(0));
    if (this.options.twoInstances) this.instances.push(this.boot(0));
  }

  private boot(generation: number): Instance {
    const store = openSqliteStore({ dataDir: this.dir });
    this.stores.push(store);
    const { behaviour } = this.options;
    const errors = this.errors;
    const clock = new SimClock(() => this.clock, T0);
    const logger = createLogger({
      level: (process.env.SIM_LOG_LEVEL as 'error' | undefined) ?? 'error',
      destination: {
        write(line: string) {
          errors.push(line);
        },
      },
    });
    const merchantWebhook = { url: MERCHANT_URL, secret: 'whsec_sim_0123456789' };
    const app = createApp({
      partner: this.world,
      store,
      runtime: { ...this.runtime, clock },
      logger,
      background: false,
      rateLimits: false,
      apiKey: API_KEY,
      expirationSeconds: behaviour.expirationSeconds,
      renewals: behaviour.renewals,
      statusCodes: behaviour.setting,
      transferStatusCodes: behaviour.transferSetting,
      webhooks: behaviour.intake === 'secret' ? { secretPath: SECRET_PATH } : undefined,
      merchantWebhook,
      partnerScope: 'sim',
    });
    return { store, app, hung: false, generation, clock };
  }

  private async receive(init: RequestInit | undefined): Promise<Response> {
    this.trace?.push(`delivery ${typeof init?.body === 'string' ? init.body : ''}`);
    const during = this.receiver.duringNext;
    if (during) {
      this.receiver.duringNext = undefined;
      if (!(await during())) return new Response('slow, then failed', { status: 502 });
    }
    if (this.receiver.failNext > 0) {
      this.receiver.failNext--;
      return new Response('down', { status: 500 });
    }
    const body = JSON.parse(typeof init?.body === 'string' ? init.body : '{}') as {
      id: string;
      type: string;
      data: { reference: string; checkout_id: string | null };
    };
    this.receiver.received.set(body.id, (this.receiver.received.get(body.id) ?? 0) + 1);
    if (!this.receiver.events.has(body.id))
      this.receiver.events.set(body.id, { type: body.type, reference: body.data.reference, checkoutId: body.data.checkout_id });
    return new Response(null, { status: 204 });
  }

  instance(via: number): Instance {
    return this.instances[via % this.instances.length]!;
  }

  /** The process of that instance dies: nothing graceful runs; a new one opens the same file. */
  crash(via: number): void {
    const at = via % this.instances.length;
    const old = this.instances[at]!;
    // What was in flight in it never resumes (the simulated partner's hung calls never answer);
    // its processor is told to stop so its leftovers do not act after the "death".
    old.app.pix.processor.close();
    this.instances[at] = this.boot(old.generation + 1);
  }

  /** Lets everything started settle: processing of notifications, reads after a create. */
  async settle(): Promise<void> {
    for (let i = 0; i < 3; i++) {
      await new Promise((resolve) => setImmediate(resolve));
      await Promise.all(this.instances.map((instance) => instance.app.pix.processor.idle()));
    }
  }

  /**
   * A request to an instance. A request that does not answer once everything settled is hung (a
   * partner call that never returns): the instance is marked so the caller crashes it.
   */
  async request(via: number, method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<SimResponse> {
    const instance = this.instance(via);
    const init: RequestInit = { method, headers: { ...headers } };
    if (body !== undefined) {
      init.body = typeof body === 'string' ? body : JSON.stringify(body);
      (init.headers as Record<string, string>)['content-type'] = 'application/json';
    }
    const answer = Promise.resolve(instance.app.request(path, init)).then(async (res) => {
      const text = await res.text();
      let json: Record<string, unknown> | null;
      try {
        json = text ? (JSON.parse(text) as Record<string, unknown>) : null;
      } catch {
        json = null;
      }
      return { status: res.status, body: json };
    });
    const hung = Symbol('hung');
    let settled = false;
    const result = await Promise.race([
      answer.finally(() => (settled = true)),
      (async () => {
        for (let i = 0; i < 50 && !settled; i++) await new Promise((resolve) => setImmediate(resolve));
        return hung;
      })(),
    ]);
    this.trace?.push(
      `${via} ${method} ${path} ${typeof init.body === 'string' ? init.body : ''} -> ${result === hung ? 'hung' : `${(result as SimResponse).status} ${JSON.stringify((result as SimResponse).body)}`}`,
    );
    if (result === hung) {
      instance.hung = true;
      return { status: 0, body: null };
    }
    await this.settle();
    return result as SimResponse;
  }

  /**
   * A notification's POST answered (stored, 202), its processing left to run: for interleavings
   * inside a partner call, which must not wait for work that may wait for that call.
   */
  async postOnly(via: number, path: string, body: string): Promise<number> {
    const res = await this.instance(via).app.request(path, { method: 'POST', body, headers: { 'content-type': 'application/json' } });
    this.trace?.push(`${via} POST ${path} ${body} -> ${res.status} ${await res.text()}`);
    return res.status;
  }

  api(via: number, method: string, path: string, body?: unknown, extra: Record<string, string> = {}): Promise<SimResponse> {
    return this.request(via, method, path, body, { authorization: `Bearer ${API_KEY}`, ...extra });
  }

  newKey(): string {
    const key = `sim-key-${++this.keySeq}`;
    this.keys.push(key);
    return key;
  }

  /** Moves the clock: the partner acts on its new time, then the proxy's timers due by then fire, and their work settles. */
  async advance(ms: number): Promise<void> {
    this.clock += ms;
    this.world.tick();
    await this.fireTimers();
  }

  /** The proxy's timers due by the run's time fire (SimClock), and what they started settles. */
  async fireTimers(): Promise<void> {
    for (;;) {
      let fired = 0;
      for (const instance of this.instances) fired += instance.clock.fireDue();
      if (fired === 0) return;
      await this.settle();
    }
  }

  /**
   * Every row the run stored, table by table in row order, into the trace. Left out: what the
   * store stamps itself, on its own clock and chance (the migrations' dates, when a kept token or
   * verdict was saved, the deliveries' claim tokens), none of which decides anything.
   */
  dumpStore(): void {
    if (!this.trace) return;
    const db = new Database(join(this.dir, DB_FILE_NAME), { readonly: true });
    try {
      const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT IN ('migrations') ORDER BY name").all() as { name: string }[];
      for (const { name } of tables) {
        for (const row of db.prepare(`SELECT * FROM "${name}" ORDER BY rowid`).all() as Record<string, unknown>[]) {
          const kept = Object.entries(row).filter(([column]) => !STORE_STAMPS.has(`${name}.${column}`));
          this.trace.push(`${name} ${JSON.stringify(kept, (_, value: unknown) => (typeof value === 'bigint' ? String(value) : value))}`);
        }
      }
    } finally {
      db.close();
    }
  }

  async close(): Promise<void> {
    for (const instance of this.instances) {
      instance.app.pix.processor.close();
      await instance.app.pix.stop().catch(() => undefined);
    }
    for (const store of this.stores) await store.close().catch(() => undefined);
    rmSync(this.dir, { recursive: true, force: true });
  }
}
