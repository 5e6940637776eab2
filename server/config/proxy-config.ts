/**
 * Configuration from the environment (and an optional `.env` file), read through the table
 * (settings.ts) once, with every problem listed at once. Here only the rules between variables: sandbox
 * mode (no partner credentials at all: everything points at the local sandbox, so a new user needs
 * no configuration), what goes together, and the shapes createApp takes (resolve.ts).
 */
import { readFileSync } from 'node:fs';
import { SANDBOX_ACCOUNT } from '../partner/sandbox-account.ts';
import type { StatusCodes } from '../partner/status-codes.ts';
import { landValues, readSettings, type Settings } from './parse.ts';
import { perMinute, type AppSettings } from './resolve.ts';
import { MIN_API_KEY_LENGTH } from './settings.ts';
import { TUNABLES } from './tunables.ts';
import { webhookSecretProblem, webhookSecrets } from '../domain/signature.ts';

/**
 * The sandbox `npm run sandbox` starts, its published test account, and the API key of sandbox mode.
 * Kept under this name for the package's users; the account itself lives in partner/.
 */
export const SANDBOX_DEFAULTS = { ...SANDBOX_ACCOUNT, apiKey: TUNABLES.sandboxApiKey } as const;

/** The merchant server's API key in sandbox mode: a published test value, printed where a developer needs it. */
export const SANDBOX_API_KEY = SANDBOX_DEFAULTS.apiKey;

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
  /** What the partner's numeric transfer status codes mean (PIX_TRANSFER_STATUS_CODES; the sandbox's numbering by default, never the payments'). */
  transferStatusCodes: StatusCodes;
}

export function partnerConfig(env: Record<string, string | undefined> = loadEnv()): PartnerConfig {
  const { values: v, problems } = readSettings(env, 'partner');
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
    baseUrl: v.PIX_BASE_URL ?? SANDBOX_ACCOUNT.baseUrl,
    credentials: sandbox
      ? { email: SANDBOX_ACCOUNT.email, accessKey: SANDBOX_ACCOUNT.accessKey }
      : v.PIX_EMAIL && v.PIX_ACCESS_KEY
        ? { email: v.PIX_EMAIL, accessKey: v.PIX_ACCESS_KEY }
        : null,
    token: v.PIX_TOKEN ?? null,
    userAgent: v.PIX_USER_AGENT ?? SANDBOX_ACCOUNT.userAgent,
    caFile: v.PIX_CA_FILE ?? (sandbox ? SANDBOX_ACCOUNT.caFile : null),
    timeoutMs: v.PIX_TIMEOUT_MS,
    tokenFile: v.PIX_TOKEN_FILE,
    statusCodes: v.PIX_STATUS_CODES,
    transferStatusCodes: v.PIX_TRANSFER_STATUS_CODES,
  };
}

const LOCAL_HOSTS = ['localhost', '127.0.0.1', '[::1]'];

/** Everything `pix-checkout serve` needs: the partner's settings, createApp's, and the process's own. */
export type ProxyConfig = AppSettings & ReturnType<typeof proxyConfig>;

/**
 * Reads the proxy's configuration; throws one ConfigError listing every problem, the partner's
 * included. With no partner credentials it is sandbox mode and needs nothing at all.
 */
export function proxyConfig(env: Record<string, string | undefined> = loadEnv()) {
  const problems: string[] = [];
  let partner: PartnerConfig | null = null;
  try {
    partner = partnerConfig(env);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    problems.push(...error.problems);
  }
  const sandbox = partner?.sandbox ?? false;
  const { values: v, problems: found, invalid } = readSettings(env, 'proxy');
  problems.push(...found);

  let apiKey = v.PIX_API_KEY;
  if (apiKey === undefined) {
    if (!sandbox && !invalid.has('PIX_API_KEY'))
      problems.push(`PIX_API_KEY is required: the key your server sends to create checkouts (at least ${MIN_API_KEY_LENGTH} characters)`);
    apiKey = TUNABLES.sandboxApiKey;
  }

  const allowedOrigins: string[] = [];
  for (const item of v.PIX_ALLOWED_ORIGINS ?? (sandbox ? ['*'] : [])) {
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
    if (url.protocol === 'http:' && !sandbox && !LOCAL_HOSTS.includes(url.hostname)) {
      problems.push(`PIX_ALLOWED_ORIGINS: ${item} must be https:// (http only for localhost)`);
      continue;
    }
    allowedOrigins.push(url.origin);
  }

  const { PIX_OPEN_AMOUNT_MIN: min, PIX_OPEN_AMOUNT_MAX: max } = v;
  if (min > max) problems.push('PIX_OPEN_AMOUNT_MIN must not be above PIX_OPEN_AMOUNT_MAX');

  /** An https:// URL; http:// only for localhost, or anywhere in the sandbox. */
  const webUrl = (raw: string) => {
    let url: URL | null;
    try {
      url = new URL(raw);
    } catch {
      url = null;
    }
    const local = url !== null && LOCAL_HOSTS.includes(url.hostname);
    return url !== null && (url.protocol === 'https:' || (url.protocol === 'http:' && (local || sandbox)));
  };
  const publicUrl = v.PIX_PUBLIC_URL;
  if (publicUrl !== undefined && !webUrl(publicUrl)) problems.push('PIX_PUBLIC_URL must be the https:// URL the proxy is reached at (http only for localhost)');

  const { PIX_MERCHANT_WEBHOOK_URL: merchantUrl, PIX_MERCHANT_WEBHOOK_SECRET: merchantSecret } = v;
  if (merchantUrl !== undefined) {
    if (!webUrl(merchantUrl)) problems.push('PIX_MERCHANT_WEBHOOK_URL must be an https:// URL (http only for localhost)');
    const secrets = merchantSecret === undefined ? [] : webhookSecrets(merchantSecret);
    if (secrets.length === 0 || secrets.some((s) => s.length < MIN_API_KEY_LENGTH)) {
      problems.push(
        `PIX_MERCHANT_WEBHOOK_SECRET is required with PIX_MERCHANT_WEBHOOK_URL (a whsec_ secret, or at least ${MIN_API_KEY_LENGTH} characters; several separated by spaces)`,
      );
    }
    for (const secret of secrets) {
      const problem = webhookSecretProblem(secret);
      if (problem) problems.push(`PIX_MERCHANT_WEBHOOK_SECRET: ${problem}`);
    }
  } else if (merchantSecret !== undefined) {
    problems.push('PIX_MERCHANT_WEBHOOK_SECRET is set but PIX_MERCHANT_WEBHOOK_URL is not');
  }

  const settings = landValues(v, 'proxy') as Settings;
  const { rateLimitCreatePerMinute: create, rateLimitStatusPerMinute: status } = settings;
  const webhook = settings.webhookIntake.perSourcePerMinute;
  const unlimited = perMinute(Number.MAX_SAFE_INTEGER);
  const databaseUrl = v.PIX_DATABASE_URL;
  // Behind a balancer (PIX_TRUSTED_PROXIES), an unset drain is not 0: the port closing at the signal
  // would refuse connections before the balancer's probes saw /ready fail.
  const drainUnset = (env.PIX_SHUTDOWN_DRAIN_MS ?? '').trim() === '';
  const drainMs =
    drainUnset && settings.trustedProxies > 0 ? Math.min(TUNABLES.shutdown.balancerDrainMs, settings.shutdown.graceMs) : settings.shutdown.drainMs;
  const config = {
    ...settings,
    basePath: TUNABLES.basePath,
    /** The process exits 1 this long after the grace period even if the store has not closed. */
    shutdown: { ...settings.shutdown, drainMs, hardCutMarginMs: TUNABLES.shutdown.hardCutMarginMs },
    apiKey,
    allowedOrigins,
    openAmount: v.PIX_OPEN_AMOUNT ? { min, max } : (false as const),
    defaultCallback: v.PIX_CALLBACK_URL,
    publicUrl,
    rateLimits:
      create > 0 || status > 0 || webhook > 0
        ? {
            create: create > 0 ? perMinute(create) : unlimited,
            status: status > 0 ? perMinute(status) : unlimited,
            webhook: webhook > 0 ? perMinute(webhook) : unlimited,
          }
        : (false as const),
    webhookReadIntervalMs: settings.partnerReads.trustedMs,
    webhooks: { secretPath: v.PIX_WEBHOOK_SECRET_PATH, sourceIps: v.PIX_WEBHOOK_SOURCE_IPS ?? [] },
    merchantWebhook: merchantUrl && merchantSecret ? { url: merchantUrl, secret: merchantSecret as string | readonly string[] } : undefined,
    /** PIX_DATABASE_URL: Postgres, shared by several instances; undefined: SQLite in dataDir. Holds a password: never logged. */
    database: databaseUrl ? { url: databaseUrl, ...settings.cluster } : undefined,
  };
  if (problems.length > 0 || !partner) throw new ConfigError(problems);
  return { partner, ...config, statusCodes: partner.statusCodes, transferStatusCodes: partner.transferStatusCodes };
}
