/**
 * Configuration from the environment (and an optional `.env` file), parsed once with every problem
 * listed at once. With no partner credentials at all, everything points at the local sandbox
 * (`npm run sandbox`), so a new user needs no configuration.
 */
import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { z } from 'zod/mini';
import { LIMITS, formatReais, isCents } from '../src/shared/limits.ts';
import { USER_AGENT_PATTERN } from './partner/wire.ts';
import { PROXY_DEFAULTS } from './defaults.ts';
import { DEFAULT_ACCOUNT } from './sandbox/state.ts';

/** The sandbox `npm run sandbox` starts, and its published test account. */
export const SANDBOX_DEFAULTS = {
  baseUrl: 'https://127.0.0.1:8443',
  caFile: '.sandbox/cert.pem',
  email: DEFAULT_ACCOUNT.email,
  accessKey: DEFAULT_ACCOUNT.accessKey,
  userAgent: 'pix-checkout sandbox (dev@pix-checkout.test)',
  /** The merchant server's API key in sandbox mode: a published test value, like the account. */
  apiKey: 'sandbox-api-key',
} as const;

const Env = z.object({
  PIX_BASE_URL: z.optional(z.url({ protocol: /^https$/, error: 'must be an https:// URL (the service accepts HTTPS only)' })),
  PIX_EMAIL: z.optional(z.email('must be an e-mail address')),
  PIX_ACCESS_KEY: z.optional(z.string().check(z.minLength(1, 'must not be empty'))),
  PIX_TOKEN: z.optional(z.string().check(z.minLength(1, 'must not be empty'))),
  PIX_USER_AGENT: z.optional(z.string().check(z.regex(USER_AGENT_PATTERN, 'must be "Company (contact@example.com)"'))),
  PIX_CA_FILE: z.optional(z.string().check(z.minLength(1, 'must not be empty'))),
  PIX_TIMEOUT_MS: z.optional(z.coerce.number().check(z.int('must be whole milliseconds'), z.gte(100, 'must be at least 100'), z.lte(120_000, 'must be at most 120000'))),
  PIX_TOKEN_FILE: z.optional(z.string().check(z.minLength(1, 'must not be empty'))),
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
  const problems: string[] = parsed.success ? [] : parsed.error.issues.map((i) => `${String(i.path[0])} ${i.message === 'Invalid input' ? 'is invalid' : i.message}`);
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
    baseUrl: e.PIX_BASE_URL ?? SANDBOX_DEFAULTS.baseUrl,
    credentials: sandbox
      ? { email: SANDBOX_DEFAULTS.email, accessKey: SANDBOX_DEFAULTS.accessKey }
      : e.PIX_EMAIL && e.PIX_ACCESS_KEY
        ? { email: e.PIX_EMAIL, accessKey: e.PIX_ACCESS_KEY }
        : null,
    token: e.PIX_TOKEN ?? null,
    userAgent: e.PIX_USER_AGENT ?? SANDBOX_DEFAULTS.userAgent,
    caFile: e.PIX_CA_FILE ?? (sandbox ? SANDBOX_DEFAULTS.caFile : null),
    timeoutMs: e.PIX_TIMEOUT_MS ?? 10_000,
    tokenFile: e.PIX_TOKEN_FILE ?? '.data/partner-token.json',
  };
}

/** Everything `pix-checkout serve` (server/main.ts) needs: the partner's settings and the proxy's own. */
export interface ProxyConfig {
  partner: PartnerConfig;
  /** In sandbox mode without PIX_API_KEY, the sandbox's published key. */
  apiKey: string;
  allowedOrigins: string[];
  openAmount: { min: number; max: number } | false;
  renewals: number;
  expirationSeconds: number;
  dataDir: string;
  port: number;
  host: string;
  defaultCallback: string | undefined;
  /** Requests per minute per client; 0 turns a limit off. */
  rateLimitCreate: number;
  rateLimitStatus: number;
  trustedProxies: number;
  logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  streams: boolean;
  staleAfterMs: number;
  watchIntervalMs: number;
  /** The partner's notifications: secret last path segment and allowed source addresses. */
  webhookSecretPath: string | undefined;
  webhookSourceIps: string[];
  /** The merchant's backend, told of every outcome (signed); undefined when not configured. */
  merchantWebhook: { url: string; secret: string } | undefined;
  /** The reconciler: ms between passes, s between questions about one payment (normal, near expiry). */
  reconcileTickMs: number;
  reconcileEverySeconds: number;
  reconcileNearSeconds: number;
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
    apiKey = SANDBOX_DEFAULTS.apiKey;
  } else if (apiKey.length < MIN_API_KEY_LENGTH || !/^[\x21-\x7e]+$/.test(apiKey)) {
    problems.push(`PIX_API_KEY must be at least ${MIN_API_KEY_LENGTH} printable characters without spaces`);
  }

  const allowedOrigins: string[] = [];
  for (const item of (env.PIX_ALLOWED_ORIGINS ?? (sandbox ? '*' : '')).split(',').map((s) => s.trim()).filter(Boolean)) {
    if (item === '*') {
      if (sandbox) allowedOrigins.push('*');
      else problems.push('PIX_ALLOWED_ORIGINS may not be * outside the sandbox: list your shop\'s origins');
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
    let ok = false;
    try {
      ok = new URL(callback).protocol === 'https:';
    } catch {
      ok = false;
    }
    if (!ok) problems.push('PIX_CALLBACK_URL must be an https:// URL');
  }

  const logLevel = (env.PIX_LOG_LEVEL ?? 'info').trim().toLowerCase();
  if (!(LOG_LEVELS as readonly string[]).includes(logLevel)) problems.push(`PIX_LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}`);

  const secretPath = env.PIX_WEBHOOK_SECRET_PATH?.trim() || undefined;
  if (secretPath !== undefined && !/^[A-Za-z0-9_-]{16,128}$/.test(secretPath)) {
    problems.push('PIX_WEBHOOK_SECRET_PATH must be 16 to 128 letters, digits, - or _ (openssl rand -hex 16)');
  }
  const sourceIps = (env.PIX_WEBHOOK_SOURCE_IPS ?? '').split(',').map((s) => s.trim()).filter(Boolean);
  for (const ip of sourceIps) if (!isIP(ip)) problems.push(`PIX_WEBHOOK_SOURCE_IPS: ${ip} is not an IP address`);
  const merchantUrl = env.PIX_MERCHANT_WEBHOOK_URL?.trim() || undefined;
  const merchantSecret = env.PIX_MERCHANT_WEBHOOK_SECRET || undefined;
  if (merchantUrl !== undefined) {
    let url: URL | null = null;
    try {
      url = new URL(merchantUrl);
    } catch {
      url = null;
    }
    const local = url !== null && ['localhost', '127.0.0.1', '[::1]'].includes(url.hostname);
    if (!url || !(url.protocol === 'https:' || (url.protocol === 'http:' && (local || sandbox)))) {
      problems.push('PIX_MERCHANT_WEBHOOK_URL must be an https:// URL (http only for localhost)');
    }
    if (merchantSecret === undefined || merchantSecret.length < MIN_API_KEY_LENGTH) {
      problems.push(`PIX_MERCHANT_WEBHOOK_SECRET is required with PIX_MERCHANT_WEBHOOK_URL (at least ${MIN_API_KEY_LENGTH} characters)`);
    }
  } else if (merchantSecret !== undefined) {
    problems.push('PIX_MERCHANT_WEBHOOK_SECRET is set but PIX_MERCHANT_WEBHOOK_URL is not');
  }

  const config = {
    webhookSecretPath: secretPath,
    webhookSourceIps: sourceIps,
    merchantWebhook: merchantUrl && merchantSecret ? { url: merchantUrl, secret: merchantSecret } : undefined,
    reconcileTickMs: int('PIX_RECONCILE_TICK_MS', 5000, 100, 600_000),
    reconcileEverySeconds: int('PIX_RECONCILE_EVERY_S', 60, 1, 3600),
    reconcileNearSeconds: int('PIX_RECONCILE_NEAR_S', 10, 1, 3600),
    apiKey,
    allowedOrigins,
    openAmount: openAmountOn ? { min, max } : (false as const),
    renewals: int('PIX_RENEWALS', PROXY_DEFAULTS.renewals, 0, 100),
    expirationSeconds: int('PIX_EXPIRATION_SECONDS', LIMITS.defaultExpirationSeconds, 60, 7 * 24 * 3600),
    dataDir: env.PIX_DATA_DIR?.trim() || '.data',
    port: int('PORT', 8787, 0, 65535),
    host: env.HOST?.trim() || '127.0.0.1',
    defaultCallback: callback || undefined,
    rateLimitCreate: int('PIX_RATE_LIMIT_CREATE', PROXY_DEFAULTS.rateLimitCreatePerMinute, 0, 1_000_000),
    rateLimitStatus: int('PIX_RATE_LIMIT_STATUS', PROXY_DEFAULTS.rateLimitStatusPerMinute, 0, 1_000_000),
    trustedProxies: int('PIX_TRUSTED_PROXIES', 0, 0, 10),
    logLevel: logLevel as ProxyConfig['logLevel'],
    streams: bool('PIX_STREAMS', true),
    staleAfterMs: int('PIX_STALE_AFTER_MS', PROXY_DEFAULTS.staleAfterMs, 0, 60_000),
    watchIntervalMs: int('PIX_WATCH_INTERVAL_MS', PROXY_DEFAULTS.watchIntervalMs, 250, 60_000),
  };
  if (problems.length > 0 || !partner) throw new ConfigError(problems);
  return { partner, ...config };
}
