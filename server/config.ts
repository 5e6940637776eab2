/**
 * Configuration from the environment (and an optional `.env` file), parsed once with every problem
 * listed at once. With no partner credentials at all, everything points at the local sandbox
 * (`npm run sandbox`), so a new user needs no configuration.
 */
import { readFileSync } from 'node:fs';
import { z } from 'zod/mini';
import { USER_AGENT_PATTERN } from '../src/shared/partner.ts';
import { DEFAULT_ACCOUNT } from './sandbox/state.ts';

/** The sandbox `npm run sandbox` starts, and its published test account. */
export const SANDBOX_DEFAULTS = {
  baseUrl: 'https://127.0.0.1:8443',
  caFile: '.sandbox/cert.pem',
  email: DEFAULT_ACCOUNT.email,
  accessKey: DEFAULT_ACCOUNT.accessKey,
  userAgent: 'pix-checkout sandbox (dev@pix-checkout.test)',
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
    let value = match[2] ?? '';
    if (/^(["']).*\1$/.test(value)) value = value.slice(1, -1);
    out[match[1]!] = value;
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
