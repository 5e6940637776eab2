/**
 * Configuration from the environment (and an optional `.env` file), parsed once with every problem
 * listed at once. With no partner credentials at all, everything points at the local sandbox
 * (`npm run sandbox`), so a new user needs no configuration.
 */
import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { z } from 'zod/mini';
import { LIMITS, formatReais, isCents } from '../src/shared/limits.ts';
import { PARTNER_CLIENT_DEFAULTS } from './partner/client.ts';
import { SANDBOX_ACCOUNT } from './partner/sandbox-account.ts';
import { DEFAULT_STATUS_CODES, parseStatusCodes, type StatusCodes } from './partner/status-codes.ts';
import { USER_AGENT_PATTERN } from './partner/wire.ts';

/**
 * Every default of the proxy, the command line and createApp, in one place: createApp fills what its
 * caller leaves out from here, and proxyConfig() from the environment with these as fallbacks.
 */
export const DEFAULTS = {
  /** Where the API is served: the widget's `endpoint`. */
  basePath: '/api',
  /** Seconds each QR code stays payable. */
  expirationSeconds: LIMITS.defaultExpirationSeconds,
  /** New payments a checkout may issue after its first one expires. */
  renewals: 3,
  /** Refund a checkout's extra payment to its payer automatically, when the payer's key is known (PIX_REFUND_OVERPAYMENTS). */
  refundOverpayments: false,
  /** Serve live status streams (Server-Sent Events). */
  streams: true,
  /**
   * Status streams open at once on one instance: from one client address (a page holds one per open
   * tab; an office or a carrier's NAT shares an address), and of one payment. Past either, 429
   * `too_many_streams` and the widget polls. 0: no cap.
   */
  streamsPerClient: 20,
  streamsPerPayment: 200,
  /** A stored unfinished status younger than this is served without asking the partner. */
  staleAfterMs: 2000,
  /** How often a payment with open streams is asked about. */
  watchIntervalMs: 2000,
  /**
   * Partner reads follow the webhooks' health (domain/webhook-health.ts): while the partner's
   * notifications arrive on time, a pending payment is asked about at most every `trustedMs`
   * (PIX_WEBHOOK_READ_INTERVAL_MS); when they stop or lag, and near a payment's expiry, every
   * staleAfterMs / watchIntervalMs as above.
   */
  partnerReads: {
    trustedMs: 10_000,
    recentMs: 10 * 60_000,
    graceMs: 10_000,
    lateMs: 5000,
    evidence: 3,
    nearExpiryMs: 60_000,
  },
  /** Payments a client may ask for per minute (a third at once). */
  rateLimitCreatePerMinute: 30,
  /** Status reads and stream opens per client per minute (a third at once). */
  rateLimitStatusPerMinute: 600,
  /** Reverse proxies in front whose X-Forwarded-For is trusted. */
  trustedProxies: 0,
  /** The largest JSON body a proxy endpoint accepts; a real one is under 500 bytes. */
  maxJsonBodyBytes: 4 * 1024,
  /** How long /ready keeps its answer, so a probing load balancer costs the partner nothing. */
  readinessCacheMs: 5000,
  /** The partner's notifications (routes/webhooks.ts, domain/webhook-processor.ts). */
  webhookIntake: {
    /** Stored notifications confirmed with the partner at once. */
    concurrency: 8,
    /** One reference is confirmed with the partner at most this often (real time); notifications meanwhile share the answer. */
    confirmIntervalMs: 2000,
    /** Notifications per minute from one source, when no source allow-list is set (a third at once). */
    perSourcePerMinute: 600,
    /** Notifications waiting to be confirmed, at most: past it the intake answers 503 and the partner retries. */
    pendingCap: 10_000,
    /** A notification the partner has not confirmed in this long is marked `expired` (the reconciler still follows the payment). */
    pendingRetentionMs: 24 * 3_600_000,
    /**
     * A confirmation that could not be applied yet (the partner still says pending, its code's meaning
     * is not known yet, it is down) is tried again after `firstRetryMs`, doubling up to `maxRetryMs`:
     * an authenticated notification's words while the payment is open (until `retryMarginMs` before
     * its automatic cancellation: after it, a final code may be that cancellation, and stale words
     * must not read it), a notification without them `plainRetries` times.
     */
    firstRetryMs: 1000,
    maxRetryMs: 30_000,
    plainRetries: 8,
    retryMarginMs: 5 * 60_000,
    /**
     * Unreadable notifications are kept whole, this many an hour; past it (a flood from an open
     * intake) only their first `auditBytes`, so anyone able to post cannot fill the disk.
     */
    unreadableWholePerHour: 100,
    auditBytes: 1024,
  },
  /** The reconciler (domain/reconciler.ts). */
  reconcile: {
    /** Time between passes (real time). */
    tickMs: 5000,
    /** How often an open payment or transfer is asked about. */
    everyMs: 60_000,
    /** How often near a payment's expiry and its automatic cancellation. */
    nearMs: 10_000,
    /** How close counts as near. */
    nearWindowMs: 5 * 60_000,
    /** Partner calls in flight at most. */
    concurrency: 8,
    /** Records looked at per pass at most. */
    batch: 5000,
    /**
     * A payment still open this long after its automatic cancellation (an hour after expiry) cannot
     * be decided from what the partner answers: it is parked, read again only every `parkedEveryMs`,
     * and reported (/ready, the log).
     */
    parkAfterCancelMs: 15 * 60_000,
    parkedEveryMs: 3_600_000,
  },
  /** The merchant webhook's delivery and retry policy (domain/merchant-notify.ts). */
  merchantWebhook: {
    /** Deadline of one attempt. */
    timeoutMs: 10_000,
    /** First retry delay, doubled on each failure (with jitter), capped at maxDelayMs. */
    baseDelayMs: 10_000,
    maxDelayMs: 3_600_000,
    /** Stop retrying this long after the outcome; `deliveries replay` sends it again. */
    giveUpAfterMs: 24 * 3_600_000,
    /** How often due deliveries are looked for (real time); new outcomes wake the worker at once. */
    pollMs: 1000,
    /** Deliveries in flight at most. */
    concurrency: 8,
  },
  /** Deadline of each partner call: the partner client's own default. */
  partnerTimeoutMs: PARTNER_CLIENT_DEFAULTS.timeoutMs,
  /** The command line's token file (the proxy keeps its token in the store). */
  tokenFile: '.data/partner-token.json',
  /** Directory of the SQLite file (when no PIX_DATABASE_URL names a Postgres database). */
  dataDir: '.data',
  /** Several instances over one Postgres (store/postgres/). */
  cluster: {
    /** Connections in each instance's pool. */
    poolSize: 10,
    /**
     * How long an instance's claim on a notification or a delivery lasts: longer than the work it
     * covers (a partner call, a delivery: 10 s each by default); an instance that dies leaves its
     * claimed work to the others this long after.
     */
    claimMs: 30_000,
  },
  port: 8787,
  host: '127.0.0.1',
  logLevel: 'info',
  /** The merchant server's API key in sandbox mode: a published test value, like the account. */
  sandboxApiKey: 'sandbox-api-key',
} as const;

/**
 * The sandbox `npm run sandbox` starts, its published test account, and the API key of sandbox mode.
 * Kept under this name for the package's users; the account itself lives in partner/.
 */
export const SANDBOX_DEFAULTS = { ...SANDBOX_ACCOUNT, apiKey: DEFAULTS.sandboxApiKey } as const;

const Env = z.object({
  PIX_BASE_URL: z.optional(z.url({ protocol: /^https$/, error: 'must be an https:// URL (the service accepts HTTPS only)' })),
  PIX_EMAIL: z.optional(z.email('must be an e-mail address')),
  PIX_ACCESS_KEY: z.optional(z.string().check(z.minLength(1, 'must not be empty'))),
  PIX_TOKEN: z.optional(z.string().check(z.minLength(1, 'must not be empty'))),
  PIX_USER_AGENT: z.optional(z.string().check(z.regex(USER_AGENT_PATTERN, 'must be "Company (contact@example.com)"'))),
  PIX_CA_FILE: z.optional(z.string().check(z.minLength(1, 'must not be empty'))),
  PIX_TIMEOUT_MS: z.optional(
    z.coerce.number().check(z.int('must be whole milliseconds'), z.gte(100, 'must be at least 100'), z.lte(120_000, 'must be at most 120000')),
  ),
  PIX_TOKEN_FILE: z.optional(z.string().check(z.minLength(1, 'must not be empty'))),
  PIX_STATUS_CODES: z.optional(
    z
      .string()
      .check(
        z.refine(
          (text) => parseStatusCodes(text) !== null,
          'must be three different codes: pending=<n>,approved=<n>,canceled=<n> (or <n>,<n>,<n> in that order)',
        ),
      ),
  ),
});

export interface PartnerConfig {
  /** True when nothing was configured and the local sandbox is used. */
  sandbox: boolean;
  baseUrl: string;
  credentials: { email: string; accessKey: string } | null;
  token: string | null;
  userAgent: string;
  caFile: string | null;
  timeoutMs: number;
  /** Where a token from login is kept between runs (0600). */
  tokenFile: string;
  /** What the partner's numeric status codes mean (PIX_STATUS_CODES; the sandbox's numbering by default). */
  statusCodes: StatusCodes;
}

export class ConfigError extends Error {
  override readonly name = 'ConfigError';
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
  }
}

/** `KEY=value` lines; `#` comments; values may be quoted. Variables already set win. */
export function parseDotenv(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.trim();
    if (!line || line.startsWith('#')) continue;
    const match = /^(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*)$/.exec(line);
    if (!match) continue;
    const value = match[2] ?? '';
    // Quoted: the text between the quotes. Unquoted: up to a comment (` #`, as dotenv reads it); a
    // `#` inside a value (`abc#def`) is kept.
    const quoted = /^(["'])(.*?)\1\s*(?:#.*)?$/.exec(value);
    out[match[1]!] = quoted ? quoted[2]! : value.replace(/\s+#.*$/, '');
  }
  return out;
}

/** The environment with `.env` (if present) underneath it. */
export function loadEnv(env: NodeJS.ProcessEnv = process.env, dotenvPath = '.env'): Record<string, string | undefined> {
  let fromFile: Record<string, string> = {};
  try {
    fromFile = parseDotenv(readFileSync(dotenvPath, 'utf8'));
  } catch {
    // No .env: the environment alone.
  }
  return { ...fromFile, ...env };
}

export function partnerConfig(env: Record<string, string | undefined> = loadEnv()): PartnerConfig {
  const parsed = Env.safeParse(env, { reportInput: false });
  const problems: string[] = parsed.success
    ? []
    : parsed.error.issues.map((i) => `${String(i.path[0])} ${i.message === 'Invalid input' ? 'is invalid' : i.message}`);
  const e = parsed.success ? parsed.data : ({} as z.infer<typeof Env>);
  const sandbox = env.PIX_BASE_URL === undefined && env.PIX_EMAIL === undefined && env.PIX_ACCESS_KEY === undefined && env.PIX_TOKEN === undefined;

  if (!sandbox) {
    if (env.PIX_BASE_URL === undefined) problems.push('PIX_BASE_URL is required when credentials are set');
    if (env.PIX_USER_AGENT === undefined) problems.push('PIX_USER_AGENT is required outside the sandbox ("Company (contact@example.com)")');
    if ((env.PIX_EMAIL === undefined) !== (env.PIX_ACCESS_KEY === undefined)) problems.push('PIX_EMAIL and PIX_ACCESS_KEY go together');
    if (env.PIX_TOKEN === undefined && env.PIX_EMAIL === undefined) problems.push('set PIX_EMAIL and PIX_ACCESS_KEY, or PIX_TOKEN');
  }
  if (problems.length > 0) throw new ConfigError(problems);

  return {
    sandbox,
    baseUrl: e.PIX_BASE_URL ?? SANDBOX_ACCOUNT.baseUrl,
    credentials: sandbox
      ? { email: SANDBOX_ACCOUNT.email, accessKey: SANDBOX_ACCOUNT.accessKey }
      : e.PIX_EMAIL && e.PIX_ACCESS_KEY
        ? { email: e.PIX_EMAIL, accessKey: e.PIX_ACCESS_KEY }
        : null,
    token: e.PIX_TOKEN ?? null,
    userAgent: e.PIX_USER_AGENT ?? SANDBOX_ACCOUNT.userAgent,
    caFile: e.PIX_CA_FILE ?? (sandbox ? SANDBOX_ACCOUNT.caFile : null),
    timeoutMs: e.PIX_TIMEOUT_MS ?? DEFAULTS.partnerTimeoutMs,
    tokenFile: e.PIX_TOKEN_FILE ?? DEFAULTS.tokenFile,
    statusCodes: (e.PIX_STATUS_CODES !== undefined ? parseStatusCodes(e.PIX_STATUS_CODES) : null) ?? DEFAULT_STATUS_CODES,
  };
}

/** A per-client limit: sustained requests per minute, and how many may come at once. */
export interface RateLimit {
  perMinute: number;
  burst: number;
}

/** A limit of `n` requests a minute, a third of which may come at once; 0 is no limit. */
export function perMinute(n: number): RateLimit {
  return { perMinute: n, burst: Math.max(1, Math.ceil(n / 3)) };
}

/** The reconciler's timing; DEFAULTS.reconcile fills what is left out. */
export type ReconcileSettings = { -readonly [K in keyof typeof DEFAULTS.reconcile]: number };

/** The merchant webhook's delivery policy; DEFAULTS.merchantWebhook fills what is left out. */
export type MerchantWebhookPolicy = { -readonly [K in keyof typeof DEFAULTS.merchantWebhook]: number };

/**
 * How the proxy behaves: the options of createApp that are settings (its parts, the store and the
 * partner client, come beside them), read from the environment by proxyConfig() under the same
 * names. What is left out comes from DEFAULTS.
 */
export interface AppSettings {
  /** The merchant server's key for the server-to-server endpoints; without it they answer 401. */
  apiKey?: string | undefined;
  /** Seconds each QR code stays payable. */
  expirationSeconds?: number | undefined;
  /** Origins of the merchant pages allowed to call the browser API; `*` allows any (sandbox only). */
  allowedOrigins?: readonly string[] | undefined;
  /** Where the API is served (default `/api`): the widget's `endpoint`. */
  basePath?: string | undefined;
  /** The proxy's public URL (https://pay.shop.example): its origin may call the browser API. */
  publicUrl?: string | undefined;
  /** Serve live status streams (Server-Sent Events). */
  streams?: boolean | undefined;
  /** Status streams open at once per client address, and per payment (one instance's); 0: no cap. */
  streamsPerClient?: number | undefined;
  streamsPerPayment?: number | undefined;
  /** How often a watched payment is asked about upstream. */
  watchIntervalMs?: number | undefined;
  /** A stored, unfinished status younger than this is served without asking the partner. */
  staleAfterMs?: number | undefined;
  /** While the partner's notifications arrive on time, how fresh a pending status must be instead (and how often a watched one is polled). */
  webhookReadIntervalMs?: number | undefined;
  /** Payments a checkout may issue after its first one expires. */
  renewals?: number | undefined;
  /** Refund a checkout's extra payment to its payer when the payer's key is known; otherwise it is reported. Default false. */
  refundOverpayments?: boolean | undefined;
  /** Let the browser choose the amount, within these bounds (`POST /payments`); default off. */
  openAmount?: { min: number; max: number } | false | undefined;
  /** Where the hosted checkout sends the payer after paying, when a checkout names none (https). */
  defaultCallback?: string | undefined;
  /** Per-client limits on creating and on reading, and per source on the partner's notifications; `false` turns them off. */
  rateLimits?: { create: RateLimit; status: RateLimit; webhook?: RateLimit } | false | undefined;
  /** Reverse proxies in front whose X-Forwarded-For is trusted for the client's address. */
  trustedProxies?: number | undefined;
  /** The partner's notifications (`POST {basePath}/webhooks/partner[/<secretPath>]`). */
  webhooks?: { secretPath?: string | undefined; sourceIps?: readonly string[] | undefined } | undefined;
  /** The merchant's backend, told of every outcome by a signed POST (domain/merchant-notify.ts). */
  merchantWebhook?: ({ url: string; secret: string } & Partial<MerchantWebhookPolicy>) | undefined;
  /** The reconciler's timing (domain/reconciler.ts). */
  reconcile?: Partial<ReconcileSettings> | undefined;
  /** What the partner's numeric status codes mean; checked at run time (domain/status-numbering.ts). Default: the sandbox's. */
  statusCodes?: StatusCodes | undefined;
}

/** Everything `pix-checkout serve` needs: the partner's settings, createApp's, and the process's own. */
export interface ProxyConfig extends AppSettings {
  partner: PartnerConfig;
  /** In sandbox mode without PIX_API_KEY, the sandbox's published key. */
  apiKey: string;
  publicUrl: string | undefined;
  allowedOrigins: string[];
  openAmount: { min: number; max: number } | false;
  renewals: number;
  refundOverpayments: boolean;
  expirationSeconds: number;
  defaultCallback: string | undefined;
  rateLimits: { create: RateLimit; status: RateLimit; webhook: RateLimit } | false;
  trustedProxies: number;
  streams: boolean;
  streamsPerClient: number;
  streamsPerPayment: number;
  staleAfterMs: number;
  watchIntervalMs: number;
  webhookReadIntervalMs: number;
  webhooks: { secretPath: string | undefined; sourceIps: string[] };
  merchantWebhook: { url: string; secret: string } | undefined;
  reconcile: Pick<ReconcileSettings, 'tickMs' | 'everyMs' | 'nearMs'>;
  dataDir: string;
  /** PIX_DATABASE_URL: Postgres, shared by several instances; undefined: SQLite in dataDir. Holds a password: never logged. */
  database: { url: string; poolSize: number; claimMs: number } | undefined;
  port: number;
  host: string;
  logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

/** The minimum length of PIX_API_KEY: long enough that guessing is hopeless (`openssl rand -hex 32`). */
export const MIN_API_KEY_LENGTH = 32;

/**
 * Reads the proxy's configuration; throws one ConfigError listing every problem, the partner's
 * included. With no partner credentials it is sandbox mode and needs nothing at all.
 */
export function proxyConfig(env: Record<string, string | undefined> = loadEnv()): ProxyConfig {
  const problems: string[] = [];
  let partner: PartnerConfig | null = null;
  try {
    partner = partnerConfig(env);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    problems.push(...error.problems);
  }
  const sandbox = partner?.sandbox ?? false;

  const int = (name: string, fallback: number, min: number, max: number): number => {
    const raw = env[name];
    if (raw === undefined || raw === '') return fallback;
    const value = Number(raw);
    if (!/^\d+$/.test(raw.trim()) || value < min || value > max) {
      problems.push(`${name} must be a whole number from ${min} to ${max}`);
      return fallback;
    }
    return value;
  };
  const bool = (name: string, fallback: boolean): boolean => {
    const raw = env[name]?.trim().toLowerCase();
    if (raw === undefined || raw === '') return fallback;
    if (['true', '1', 'yes', 'on'].includes(raw)) return true;
    if (['false', '0', 'no', 'off'].includes(raw)) return false;
    problems.push(`${name} must be true or false`);
    return fallback;
  };
  const reais = (name: string, fallback: number): number => {
    const raw = env[name];
    if (raw === undefined || raw === '') return fallback;
    const value = Number(raw);
    const { min, max } = LIMITS.paymentValue;
    if (!/^\d+(\.\d{1,2})?$/.test(raw.trim()) || !isCents(value) || value < min || value > max) {
      problems.push(`${name} must be an amount in reais from ${formatReais(min)} to ${formatReais(max)} (the partner's limits)`);
      return fallback;
    }
    return value;
  };

  let apiKey = env.PIX_API_KEY;
  if (apiKey === undefined || apiKey === '') {
    if (!sandbox) problems.push(`PIX_API_KEY is required: the key your server sends to create checkouts (at least ${MIN_API_KEY_LENGTH} characters)`);
    apiKey = DEFAULTS.sandboxApiKey;
  } else if (apiKey.length < MIN_API_KEY_LENGTH || !/^[\x21-\x7e]+$/.test(apiKey)) {
    problems.push(`PIX_API_KEY must be at least ${MIN_API_KEY_LENGTH} printable characters without spaces`);
  }

  const allowedOrigins: string[] = [];
  for (const item of (env.PIX_ALLOWED_ORIGINS ?? (sandbox ? '*' : ''))
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)) {
    if (item === '*') {
      if (sandbox) allowedOrigins.push('*');
      else problems.push("PIX_ALLOWED_ORIGINS may not be * outside the sandbox: list your shop's origins");
      continue;
    }
    let url: URL | null = null;
    try {
      url = new URL(item);
    } catch {
      // reported below
    }
    if (!url || !/^https?:$/.test(url.protocol) || url.origin !== item.replace(/\/$/, '')) {
      problems.push(`PIX_ALLOWED_ORIGINS: ${item} is not an origin like https://shop.example`);
      continue;
    }
    if (url.protocol === 'http:' && !sandbox && !['localhost', '127.0.0.1', '[::1]'].includes(url.hostname)) {
      problems.push(`PIX_ALLOWED_ORIGINS: ${item} must be https:// (http only for localhost)`);
      continue;
    }
    allowedOrigins.push(url.origin);
  }

  const openAmountOn = bool('PIX_OPEN_AMOUNT', false);
  const min = reais('PIX_OPEN_AMOUNT_MIN', LIMITS.paymentValue.min);
  const max = reais('PIX_OPEN_AMOUNT_MAX', LIMITS.paymentValue.max);
  if (min > max) problems.push('PIX_OPEN_AMOUNT_MIN must not be above PIX_OPEN_AMOUNT_MAX');

  const callback = env.PIX_CALLBACK_URL;
  if (callback !== undefined && callback !== '') {
    let ok: boolean;
    try {
      ok = new URL(callback).protocol === 'https:';
    } catch {
      ok = false;
    }
    if (!ok) problems.push('PIX_CALLBACK_URL must be an https:// URL');
  }

  /** An https:// URL; http:// only for localhost, or anywhere in the sandbox. */
  const webUrl = (raw: string) => {
    let url: URL | null;
    try {
      url = new URL(raw);
    } catch {
      url = null;
    }
    const local = url !== null && ['localhost', '127.0.0.1', '[::1]'].includes(url.hostname);
    return url !== null && (url.protocol === 'https:' || (url.protocol === 'http:' && (local || sandbox)));
  };
  const publicUrl = env.PIX_PUBLIC_URL?.trim() || undefined;
  if (publicUrl !== undefined && !webUrl(publicUrl)) problems.push('PIX_PUBLIC_URL must be the https:// URL the proxy is reached at (http only for localhost)');

  const logLevel = (env.PIX_LOG_LEVEL ?? DEFAULTS.logLevel).trim().toLowerCase();
  if (!(LOG_LEVELS as readonly string[]).includes(logLevel)) problems.push(`PIX_LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}`);

  const secretPath = env.PIX_WEBHOOK_SECRET_PATH?.trim() || undefined;
  if (secretPath !== undefined && !/^[A-Za-z0-9_-]{16,128}$/.test(secretPath)) {
    problems.push('PIX_WEBHOOK_SECRET_PATH must be 16 to 128 letters, digits, - or _ (openssl rand -hex 16)');
  }
  const sourceIps = (env.PIX_WEBHOOK_SOURCE_IPS ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  for (const ip of sourceIps) if (!isIP(ip)) problems.push(`PIX_WEBHOOK_SOURCE_IPS: ${ip} is not an IP address`);
  const merchantUrl = env.PIX_MERCHANT_WEBHOOK_URL?.trim() || undefined;
  const merchantSecret = env.PIX_MERCHANT_WEBHOOK_SECRET || undefined;
  if (merchantUrl !== undefined) {
    if (!webUrl(merchantUrl)) problems.push('PIX_MERCHANT_WEBHOOK_URL must be an https:// URL (http only for localhost)');
    if (merchantSecret === undefined || merchantSecret.length < MIN_API_KEY_LENGTH) {
      problems.push(`PIX_MERCHANT_WEBHOOK_SECRET is required with PIX_MERCHANT_WEBHOOK_URL (at least ${MIN_API_KEY_LENGTH} characters)`);
    }
  } else if (merchantSecret !== undefined) {
    problems.push('PIX_MERCHANT_WEBHOOK_SECRET is set but PIX_MERCHANT_WEBHOOK_URL is not');
  }

  const databaseUrl = env.PIX_DATABASE_URL?.trim() || undefined;
  if (databaseUrl !== undefined && !isDatabaseUrl(databaseUrl)) {
    // The value may hold a password: the problem names the variable, never the value.
    problems.push('PIX_DATABASE_URL must be a postgres:// (or postgresql://) URL naming the database, e.g. postgres://user:password@host:5432/pix');
  }

  const rateLimitCreate = int('PIX_RATE_LIMIT_CREATE', DEFAULTS.rateLimitCreatePerMinute, 0, 1_000_000);
  const rateLimitStatus = int('PIX_RATE_LIMIT_STATUS', DEFAULTS.rateLimitStatusPerMinute, 0, 1_000_000);
  const rateLimitWebhook = int('PIX_RATE_LIMIT_WEBHOOK', DEFAULTS.webhookIntake.perSourcePerMinute, 0, 1_000_000);
  const unlimited = perMinute(Number.MAX_SAFE_INTEGER);
  const config = {
    apiKey,
    allowedOrigins,
    openAmount: openAmountOn ? { min, max } : (false as const),
    renewals: int('PIX_RENEWALS', DEFAULTS.renewals, 0, 100),
    refundOverpayments: bool('PIX_REFUND_OVERPAYMENTS', DEFAULTS.refundOverpayments),
    expirationSeconds: int('PIX_EXPIRATION_SECONDS', DEFAULTS.expirationSeconds, 60, 7 * 24 * 3600),
    defaultCallback: callback || undefined,
    publicUrl,
    rateLimits:
      rateLimitCreate > 0 || rateLimitStatus > 0 || rateLimitWebhook > 0
        ? {
            create: rateLimitCreate > 0 ? perMinute(rateLimitCreate) : unlimited,
            status: rateLimitStatus > 0 ? perMinute(rateLimitStatus) : unlimited,
            webhook: rateLimitWebhook > 0 ? perMinute(rateLimitWebhook) : unlimited,
          }
        : (false as const),
    trustedProxies: int('PIX_TRUSTED_PROXIES', DEFAULTS.trustedProxies, 0, 10),
    streams: bool('PIX_STREAMS', DEFAULTS.streams),
    streamsPerClient: int('PIX_STREAMS_PER_CLIENT', DEFAULTS.streamsPerClient, 0, 1_000_000),
    streamsPerPayment: int('PIX_STREAMS_PER_PAYMENT', DEFAULTS.streamsPerPayment, 0, 1_000_000),
    staleAfterMs: int('PIX_STALE_AFTER_MS', DEFAULTS.staleAfterMs, 0, 60_000),
    watchIntervalMs: int('PIX_WATCH_INTERVAL_MS', DEFAULTS.watchIntervalMs, 250, 60_000),
    webhookReadIntervalMs: int('PIX_WEBHOOK_READ_INTERVAL_MS', DEFAULTS.partnerReads.trustedMs, 250, 60_000),
    webhooks: { secretPath, sourceIps },
    merchantWebhook: merchantUrl && merchantSecret ? { url: merchantUrl, secret: merchantSecret } : undefined,
    reconcile: {
      tickMs: int('PIX_RECONCILE_TICK_MS', DEFAULTS.reconcile.tickMs, 100, 600_000),
      everyMs: int('PIX_RECONCILE_EVERY_S', DEFAULTS.reconcile.everyMs / 1000, 1, 3600) * 1000,
      nearMs: int('PIX_RECONCILE_NEAR_S', DEFAULTS.reconcile.nearMs / 1000, 1, 3600) * 1000,
    },
    dataDir: env.PIX_DATA_DIR?.trim() || DEFAULTS.dataDir,
    database: databaseUrl
      ? {
          url: databaseUrl,
          poolSize: int('PIX_DATABASE_POOL_SIZE', DEFAULTS.cluster.poolSize, 1, 100),
          claimMs: int('PIX_CLAIM_SECONDS', DEFAULTS.cluster.claimMs / 1000, 5, 3600) * 1000,
        }
      : undefined,
    port: int('PORT', DEFAULTS.port, 0, 65535),
    host: env.HOST?.trim() || DEFAULTS.host,
    logLevel: logLevel as ProxyConfig['logLevel'],
  };
  if (problems.length > 0 || !partner) throw new ConfigError(problems);
  return { partner, ...config, statusCodes: partner.statusCodes };
}

/** postgres://[user[:password]@]host[:port]/database[?options]. */
export function isDatabaseUrl(raw: string): boolean {
  try {
    const url = new URL(raw);
    return (url.protocol === 'postgres:' || url.protocol === 'postgresql:') && url.hostname !== '' && url.pathname.length > 1;
  } catch {
    return false;
  }
}
