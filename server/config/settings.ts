/**
 * Every setting of the proxy, the command line and the sandbox, one entry per environment variable:
 * its kind (type and range), its default, one line of doc (docs/configuration.md's table is
 * rendered from it: `npm run docs:config`; its links are relative to docs/) and where its value lands (`at`, a path in the settings
 * and in DEFAULTS). The parsed configuration, its types and DEFAULTS are derived from this table;
 * the numbers no variable sets are TUNABLES (tunables.ts). A new setting is one entry here, then its use.
 */
import { isIP } from 'node:net';
import { z } from 'zod/mini';
import { LIMITS } from '../../src/shared/limits.ts';
import { isTimeZone } from '../../src/shared/merchant.ts';
import { PARTNER_CLIENT_DEFAULTS } from '../partner/client.ts';
import { SANDBOX_ACCOUNT } from '../partner/sandbox-account.ts';
import { DEFAULT_STATUS_CODES, DEFAULT_TRANSFER_STATUS_CODES, formatStatusCodes, parseStatusCodes, type StatusCodes } from '../partner/status-codes.ts';
import { USER_AGENT_PATTERN } from '../partner/wire.ts';
import { TUNABLES } from './tunables.ts';
import { checked, flag, list, milliseconds, oneOf, reais, seconds, text, wholeNumber, type Kind } from './kinds.ts';

/** One environment variable. */
export interface Setting<T = unknown> {
  kind: Kind<T>;
  /** Who reads it: the partner's settings (the proxy and the command line), the proxy's, or the sandbox process's own. */
  for: 'partner' | 'proxy' | 'sandbox';
  /** Its value when unset; absent: none, or one that depends on sandbox mode (`shown` says which). */
  default?: T;
  /** docs/configuration.md's Default cell when `default` does not say it all. */
  shown?: string;
  /** docs/configuration.md's Meaning cell (markdown, one line). */
  doc: string;
  /** Where the value lands in the settings and its default in DEFAULTS (a dotted path); absent: read by name where it is used. */
  at?: string;
  /** createApp takes it as an option at the same place. */
  app?: true;
}

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

/** The minimum length of PIX_API_KEY: long enough that guessing is hopeless (`openssl rand -hex 32`). */
export const MIN_API_KEY_LENGTH = 32;

/** postgres://[user[:password]@]host[:port]/database[?options]. */
export function isDatabaseUrl(raw: string): boolean {
  try {
    const url = new URL(raw);
    return (url.protocol === 'postgres:' || url.protocol === 'postgresql:') && url.hostname !== '' && url.pathname.length > 1;
  } catch {
    return false;
  }
}

/** 32 bytes as 64 hex digits or as base64 (url-safe too): domain/personal-data.ts's parseDataKey reads it. */
export function isDataKey(raw: string): boolean {
  const text = raw.trim();
  if (/^[0-9a-fA-F]{64}$/.test(text)) return true;
  return /^[A-Za-z0-9+/_-]{43}=?$/.test(text) && Buffer.from(text.replace(/-/g, '+').replace(/_/g, '/'), 'base64').length === 32;
}

/** PIX_STATUS_CODES and PIX_TRANSFER_STATUS_CODES: every code by meaning, or the older three codes in order. */
const statusCodesKind = checked<StatusCodes>(
  z.pipe(
    z
      .string()
      .check(
        z.refine(
          (text) => parseStatusCodes(text) !== null,
          'must name each code by meaning, each code once: pending=<n>,approved=<n>,canceled=<n> required, expired=<n> (or expired_unpayable=<n>), returned=<n>, failed=<n> optional, several codes as <n>|<n> (or the older <n>,<n>,<n>: pending, approved, canceled)',
        ),
      ),
    z.transform((text) => parseStatusCodes(text)!),
  ),
  '`pending=<n>,approved=<n>,canceled=<n>[,expired=<n>][,returned=<n>][,failed=<n>]` (`<n>|<n>` for several), or three codes in that order',
  formatStatusCodes,
);
const nonEmpty = () => z.string().check(z.minLength(1, 'must not be empty'));
const httpsOnly = (raw: string) => {
  try {
    return new URL(raw).protocol === 'https:';
  } catch {
    return false;
  }
};

/** The table, in docs/configuration.md's order. */
export const SETTINGS = {
  PIX_BASE_URL: {
    for: 'partner',
    kind: checked(z.url({ protocol: /^https$/, error: 'must be an https:// URL (the service accepts HTTPS only)' }), 'https URL'),
    shown: `\`${SANDBOX_ACCOUNT.baseUrl}\` (sandbox)`,
    doc: "the partner service's base URL; `https://` only",
  },
  PIX_EMAIL: {
    for: 'partner',
    kind: checked(z.email('must be an e-mail address'), 'e-mail address'),
    shown: 'sandbox account',
    doc: 'the partner login; goes with `PIX_ACCESS_KEY`',
  },
  PIX_ACCESS_KEY: { for: 'partner', kind: checked(nonEmpty(), 'text'), shown: 'sandbox account', doc: 'the partner login; goes with `PIX_EMAIL`' },
  PIX_TOKEN: { for: 'partner', kind: checked(nonEmpty(), 'text'), doc: 'a token from an earlier login, instead of or besides the login' },
  PIX_USER_AGENT: {
    for: 'partner',
    kind: checked(z.string().check(z.regex(USER_AGENT_PATTERN, 'must be "Company (contact@example.com)"')), '`Company (contact@example.com)`'),
    shown: "sandbox's",
    doc: 'how the proxy names itself to the partner; required outside the sandbox',
  },
  PIX_CA_FILE: {
    for: 'partner',
    kind: checked(nonEmpty(), 'file path'),
    shown: `\`${SANDBOX_ACCOUNT.caFile}\` in sandbox mode`,
    doc: 'an extra certificate authority to trust (PEM)',
  },
  PIX_TIMEOUT_MS: {
    for: 'partner',
    kind: checked(
      z.coerce.number().check(z.int('must be whole milliseconds'), z.gte(100, 'must be at least 100'), z.lte(120_000, 'must be at most 120000')),
      'milliseconds, 100 to 120000',
    ),
    default: PARTNER_CLIENT_DEFAULTS.timeoutMs,
    doc: 'deadline of each call to the partner',
    at: 'partnerTimeoutMs',
  },
  PIX_STATUS_CODES: {
    for: 'partner',
    kind: statusCodesKind,
    default: DEFAULT_STATUS_CODES,
    shown: `\`${formatStatusCodes(DEFAULT_STATUS_CODES)}\` (the sandbox's)`,
    doc:
      "what the partner's numeric payment `status` codes mean (the spec does not say): every code the partner documents, by meaning " +
      '(`pending`, `approved`, `canceled`, and `expired`, `returned`, `failed` when it has them; `canceled=4|5` for several). Checked at run time: see [docs/partner-status-codes.md](partner-status-codes.md)',
  },
  PIX_TRANSFER_STATUS_CODES: {
    for: 'partner',
    kind: statusCodesKind,
    default: DEFAULT_TRANSFER_STATUS_CODES,
    shown: `\`${formatStatusCodes(DEFAULT_TRANSFER_STATUS_CODES)}\` (the sandbox's)`,
    doc: "what the partner's numeric transfer `status` codes mean, in the same form; verified apart from the payments' (whose codes never settle a transfer): see [docs/partner-status-codes.md](partner-status-codes.md)",
  },
  PIX_TOKEN_FILE: {
    for: 'partner',
    kind: checked(nonEmpty(), 'file path'),
    default: '.data/partner-token.json',
    doc: "the command line's token file when there is no `PIX_DATABASE_URL` (with it, the command line keeps its token in that database, as the proxy does)",
    at: 'tokenFile',
  },
  PIX_API_KEY: {
    for: 'proxy',
    kind: text({
      type: `text, at least ${MIN_API_KEY_LENGTH} characters`,
      trim: false,
      check: [
        (key) => key.length >= MIN_API_KEY_LENGTH && /^[\x21-\x7e]+$/.test(key),
        `must be at least ${MIN_API_KEY_LENGTH} printable characters without spaces`,
      ],
    }),
    shown: `\`${TUNABLES.sandboxApiKey}\` in sandbox mode`,
    doc: "your server's key for `/api/checkouts`; required outside the sandbox; compared in constant time",
  },
  PIX_ALLOWED_ORIGINS: {
    for: 'proxy',
    kind: list({ type: 'comma-separated origins' }),
    shown: '`*` in sandbox mode, else none',
    doc: 'origins of your pages allowed to call the browser API (CORS); `*` only in the sandbox; `https://` except for localhost. The origin of `PIX_PUBLIC_URL` is always allowed',
  },
  PIX_PUBLIC_URL: {
    for: 'proxy',
    kind: text({ type: 'https URL' }),
    shown: "none (the dev stack's own URL in the sandbox)",
    doc: "the https URL the proxy is reached at; its origin may call the browser API (never guessed from the request's `Host`)",
  },
  PIX_OPEN_AMOUNT: { for: 'proxy', kind: flag(), default: false, doc: 'let the browser choose the amount (`POST /api/payments`)' },
  PIX_OPEN_AMOUNT_MIN: { for: 'proxy', kind: reais(), default: LIMITS.paymentValue.min, doc: 'the smallest open amount' },
  PIX_OPEN_AMOUNT_MAX: { for: 'proxy', kind: reais(), default: LIMITS.paymentValue.max, doc: 'the largest open amount' },
  PIX_RENEWALS: {
    for: 'proxy',
    kind: wholeNumber(0, 100),
    default: 3,
    doc: 'new payments a checkout may issue after its first one expires',
    at: 'renewals',
    app: true,
  },
  PIX_REFUND_OVERPAYMENTS: {
    for: 'proxy',
    kind: flag(),
    default: false,
    doc: 'a checkout paid more than once (an expired code paid after its renewal): refund the extra to the payer automatically, as a refund labelled `overpayment`, when the payer\'s key is known. The partner\'s records name no payer key, so today the overpayment is reported instead (a warn log and `checkout.overpaid` with `refund: "payer_key_unknown"`); off, it is reported with `refund: "off"`. Either way you refund the extra (`POST /api/checkouts/:id/refunds`)',
    at: 'refundOverpayments',
    app: true,
  },
  PIX_EXPIRATION_SECONDS: {
    for: 'proxy',
    kind: seconds(60, 7 * 24 * 3600),
    default: LIMITS.defaultExpirationSeconds,
    doc: 'how long each QR code stays payable',
    at: 'expirationSeconds',
    app: true,
  },
  PIX_CALLBACK_URL: {
    for: 'proxy',
    kind: text({ type: 'https URL', trim: false, check: [httpsOnly, 'must be an https:// URL'] }),
    doc: 'where the hosted checkout sends the payer after paying, when a checkout names no `callback`; `https://` only',
  },
  PIX_DATA_DIR: {
    for: 'proxy',
    kind: text({ type: 'directory' }),
    default: '.data',
    doc: 'directory of the SQLite file `pix-checkout.db` (created on first start); unused with `PIX_DATABASE_URL`',
    at: 'dataDir',
  },
  PIX_DATABASE_URL: {
    for: 'proxy',
    kind: text({
      type: 'postgres URL',
      // The value may hold a password: the problem names the variable, never the value.
      check: [isDatabaseUrl, 'must be a postgres:// (or postgresql://) URL naming the database, e.g. postgres://user:password@host:5432/pix'],
    }),
    shown: 'none (SQLite)',
    doc: '`postgres://user:password@host:5432/db[?sslmode=verify-full&sslrootcert=<path>]`: keep everything in Postgres instead, shared by every instance given the same URL ([several instances](postgres.md); TLS: [Postgres over TLS](postgres.md#postgres-over-tls)); never logged',
  },
  PIX_DATABASE_POOL_SIZE: {
    for: 'proxy',
    kind: wholeNumber(1, 100),
    default: 10,
    doc: "Postgres connections per instance (one more listens for the other instances' changes)",
    at: 'cluster.poolSize',
  },
  PIX_CLAIM_SECONDS: {
    for: 'proxy',
    kind: seconds(5, 3600, true),
    default: 30_000,
    doc: "with Postgres: how long an instance's claim on a notification or a delivery lasts; an instance that dies leaves its claimed work to the others this long after",
    at: 'cluster.claimMs',
  },
  PIX_RETENTION_DAYS: {
    for: 'proxy',
    kind: wholeNumber(1, 3650, 'days'),
    default: 180,
    doc: "days a final record keeps its customer's personal data (a checkout's name and document, a payout's Pix key); after them they are erased, and processed partner notifications and delivered outbox bodies pruned; amounts, references and states stay ([Personal data](personal-data.md))",
    at: 'retentionDays',
    app: true,
  },
  PIX_DATA_KEY: {
    for: 'proxy',
    kind: text({
      type: '32 bytes, base64 or hex',
      // The value is a secret: the problem names the variable, never the value.
      check: [isDataKey, 'must be 32 bytes as 64 hex digits or base64 (openssl rand -base64 32)'],
    }),
    shown: 'none (documents kept as given)',
    doc: "encrypts each customer's document at rest (AES-256-GCM) and keys the hash `data export/erase --document` find it by; keep it as you keep the database's backups: a lost key makes the stored documents unreadable (payments go on without them); never logged",
    at: 'dataKey',
    app: true,
  },
  PIX_DATABASE_STATEMENT_TIMEOUT_MS: {
    for: 'proxy',
    kind: milliseconds(100, 600_000),
    default: 5000,
    doc: "one deadline per request for the store: all its statements and waits end this long after it began (a pooled connection, locks; Postgres `statement_timeout` and `lock_timeout`, SQLite's `busy_timeout`, derived from what is left; at least 1 s more after each partner answer, to record it); past it the request answers `503 store_unavailable` and the log names the cause, instead of hanging while a table is locked or the database is frozen. Outside requests (the loops), the longest one Postgres statement may run, a lock wait ending at 3 s ([stalls](proxy.md#stalls-and-outages))",
    at: 'databaseStatementTimeoutMs',
    app: true,
  },
  PORT: { for: 'proxy', kind: wholeNumber(0, 65535), default: 8787, doc: 'port to listen on (`serve --port` too)', at: 'port' },
  HOST: {
    for: 'proxy',
    kind: text({ type: 'address' }),
    default: '127.0.0.1',
    doc: 'address to listen on; `0.0.0.0` in a container (`serve --host` too)',
    at: 'host',
  },
  PIX_RATE_LIMIT_CREATE: {
    for: 'proxy',
    kind: wholeNumber(0, 1_000_000),
    default: 30,
    doc: 'payments a client may ask for per minute (a third at once); 0 turns it off',
    at: 'rateLimitCreatePerMinute',
  },
  PIX_RATE_LIMIT_STATUS: {
    for: 'proxy',
    kind: wholeNumber(0, 1_000_000),
    default: 600,
    doc: 'status reads and stream opens per client per minute (a third at once); 0 turns it off',
    at: 'rateLimitStatusPerMinute',
  },
  PIX_RATE_LIMIT_WEBHOOK: {
    for: 'proxy',
    kind: wholeNumber(0, 1_000_000),
    default: 600,
    doc: 'partner notifications per source per minute when `PIX_WEBHOOK_SOURCE_IPS` is not set (listed sources are never limited); 0 turns it off',
    at: 'webhookIntake.perSourcePerMinute',
  },
  PIX_TRUSTED_PROXIES: {
    for: 'proxy',
    kind: wholeNumber(0, 10),
    default: 0,
    doc: "reverse proxies in front whose `X-Forwarded-For` is trusted for the client's address; 0 uses the socket's address",
    at: 'trustedProxies',
    app: true,
  },
  PIX_WEBHOOK_SECRET_PATH: {
    for: 'proxy',
    kind: text({
      type: '16 to 128 of `A-Za-z0-9_-`',
      check: [(path) => /^[A-Za-z0-9_-]{16,128}$/.test(path), 'must be 16 to 128 letters, digits, - or _ (openssl rand -hex 16)'],
    }),
    doc: "a secret last path segment the partner's notifications must use; see [webhooks.md](webhooks.md). With neither this nor `PIX_WEBHOOK_SOURCE_IPS`, the proxy warns at start and `/ready` lists a warning",
  },
  PIX_WEBHOOK_SOURCE_IPS: {
    for: 'proxy',
    kind: list({ type: 'comma-separated IP addresses', item: [(ip) => isIP(ip) !== 0, (ip) => `: ${ip} is not an IP address`] }),
    shown: 'any',
    doc: "addresses notifications are accepted from (the service's published IP); `X-Forwarded-For` is read through `PIX_TRUSTED_PROXIES`",
  },
  PIX_MERCHANT_WEBHOOK_URL: {
    for: 'proxy',
    kind: text({ type: 'https URL' }),
    doc: "your backend's URL, told of every outcome by a signed POST (https; http only for localhost, or any host in sandbox mode); retried for 3 days, disabled after a whole day of failures until `pix-checkout deliveries resume`",
  },
  PIX_MERCHANT_WEBHOOK_SECRET: {
    for: 'proxy',
    kind: text({ type: `whsec_<base64> (Standard Webhooks), or text of at least ${MIN_API_KEY_LENGTH} characters; several separated by spaces`, trim: false }),
    doc: 'the signing secret of those POSTs (Standard Webhooks `webhook-signature`); several at once while rotating, each signs every delivery; required with the URL ([docs/webhooks.md](webhooks.md))',
  },
  PIX_TIME_ZONE: {
    for: 'proxy',
    kind: text({ type: 'IANA time zone', check: [(zone) => isTimeZone(zone), 'must be an IANA time zone such as America/Sao_Paulo'] }),
    default: 'America/Sao_Paulo',
    doc: "the merchant's time zone: the accounting export (`GET /api/reports`, `pix-checkout report`) reads its dates and writes its times in it",
    at: 'timeZone',
    app: true,
  },
  PIX_RECONCILE_TICK_MS: {
    for: 'proxy',
    kind: milliseconds(100, 600_000),
    default: 5000,
    doc: 'time between reconciler passes',
    at: 'reconcile.tickMs',
    app: true,
  },
  PIX_RECONCILE_EVERY_S: {
    for: 'proxy',
    kind: seconds(1, 3600, true),
    default: 60_000,
    doc: 'how often an open payment or transfer is asked about',
    at: 'reconcile.everyMs',
    app: true,
  },
  PIX_RECONCILE_NEAR_S: {
    for: 'proxy',
    kind: seconds(1, 3600, true),
    default: 10_000,
    doc: "how often near a payment's expiry and its automatic cancellation",
    at: 'reconcile.nearMs',
    app: true,
  },
  PIX_METRICS_TOKEN: {
    for: 'proxy',
    kind: text({
      type: `text, at least ${MIN_API_KEY_LENGTH} characters`,
      trim: false,
      check: [
        (token) => token.length >= MIN_API_KEY_LENGTH && /^[\x21-\x7e]+$/.test(token),
        `must be at least ${MIN_API_KEY_LENGTH} printable characters without spaces`,
      ],
    }),
    shown: 'none (`/metrics` answers 404)',
    doc: 'serves `GET /metrics` (Prometheus text) to a scraper sending `Authorization: Bearer <token>`; never logged, compared in constant time ([metrics](metrics.md))',
    at: 'metricsToken',
    app: true,
  },
  PIX_SHUTDOWN_GRACE_MS: {
    for: 'proxy',
    kind: milliseconds(0, 600_000),
    default: 15_000,
    doc: "on SIGTERM or SIGINT, how long work in flight (requests, merchant deliveries, a reconciler pass) may take to finish while `/ready` and new work answer `503 shutting_down`; 2 s later the process exits 1 naming what still ran. Keep it above `PIX_TIMEOUT_MS` and below your orchestrator's stop timeout (Kubernetes' 30 s) ([stopping](deployment.md#stopping-and-deploying))",
    at: 'shutdown.graceMs',
  },
  PIX_SHUTDOWN_DRAIN_MS: {
    for: 'proxy',
    kind: milliseconds(0, 60_000),
    default: 0,
    shown: '`0`; `5000` behind a balancer (`PIX_TRUSTED_PROXIES` set), at most the grace period',
    doc: 'on SIGTERM, how long to keep listening (answering `/ready` and new work `503 shutting_down`, the rest as usual) before closing the port, for a load balancer that must see `/ready` fail before it stops sending; counted within the grace period. Behind a balancer, set it to its probe interval times its failures to mark an instance down; `0` there is warned about at start ([stopping](proxy.md#stalls-and-outages))',
    at: 'shutdown.drainMs',
  },
  PIX_LOG_LEVEL: { for: 'proxy', kind: oneOf(LOG_LEVELS), default: 'info', doc: 'how much the proxy logs', at: 'logLevel' },
  PIX_STREAMS: {
    for: 'proxy',
    kind: flag(),
    default: true,
    doc: 'serve live status streams (SSE); `false` makes the widget poll',
    at: 'streams',
    app: true,
  },
  PIX_STREAMS_PER_CLIENT: {
    for: 'proxy',
    kind: wholeNumber(0, 1_000_000),
    default: 20,
    doc: "status streams one client address may hold open on one instance (one per open tab; an office or a carrier's NAT shares an address); past it `429 too_many_streams` and the widget polls; `0` no cap",
    at: 'streamsPerClient',
    app: true,
  },
  PIX_STREAMS_PER_PAYMENT: {
    for: 'proxy',
    kind: wholeNumber(0, 1_000_000),
    default: 200,
    doc: 'status streams of one payment open at once on one instance, on the same terms',
    at: 'streamsPerPayment',
    app: true,
  },
  PIX_READY_CACHE_MS: {
    for: 'proxy',
    kind: milliseconds(0, 60_000),
    default: 500,
    doc: 'how long `/ready` keeps a ready answer, so a load balancer probing often costs little; never a failure, nor a ready answer once a store operation failed. Above 1 s, `/ready` may lag a frozen database by more than 2 s (its store check gives up after 1 s); `0` asks at every probe ([stalls](proxy.md#stalls-and-outages))',
    at: 'readinessCacheMs',
    app: true,
  },
  PIX_STALE_AFTER_MS: {
    for: 'proxy',
    kind: milliseconds(0, 60_000),
    default: 2000,
    doc: "a stored unfinished status younger than this is served without asking the partner, while the partner's notifications look late or missing, and near a payment's expiry",
    at: 'staleAfterMs',
    app: true,
  },
  PIX_WATCH_INTERVAL_MS: {
    for: 'proxy',
    kind: milliseconds(250, 60_000),
    default: 2000,
    doc: 'how often a payment with open streams is asked about, on the same terms',
    at: 'watchIntervalMs',
    app: true,
  },
  PIX_WEBHOOK_READ_INTERVAL_MS: {
    for: 'proxy',
    kind: milliseconds(250, 60_000),
    default: 10_000,
    doc: "while the partner's notifications arrive on time, both of the above instead: pending payments are read from the store and the partner asked at most this often ([proxy.md](proxy.md#partner-reads-follow-the-webhooks)); `/ready` shows the pace (`reads`)",
    at: 'partnerReads.trustedMs',
  },
  SANDBOX_PORT: {
    for: 'sandbox',
    kind: wholeNumber(0, 65535),
    default: Number(new URL(SANDBOX_ACCOUNT.baseUrl).port),
    doc: 'port of `pix-checkout sandbox` and `npm run sandbox` (the sandbox alone; `--port` too; 0 picks a free one)',
  },
  PIX_SANDBOX_DIALECT: {
    for: 'sandbox',
    kind: text({ type: 'a dialect of server/sandbox/dialects.ts' }),
    default: 'default',
    doc: 'how the sandbox alone answers where the spec is silent (`--dialect` too)',
  },
} as const satisfies Record<string, Setting<any>>; // eslint-disable-line @typescript-eslint/no-explicit-any -- each entry keeps its own type

export type SettingName = keyof typeof SETTINGS;
