/**
 * createApp's settings, resolved once: what its caller leaves out takes its default here, so nothing
 * below server/config reads DEFAULTS. The resolved type is derived from the table (its `app` entries
 * and the numbers beside them, as DEFAULTS holds them) plus the shapes the rules between variables
 * give (proxy-config.ts); AppSettings, what createApp takes, is that type with every member optional.
 */
import { DEFAULT_STATUS_CODES, type AnyStatusCodes } from '../partner/status-codes.ts';
import { DEFAULTS, type AppLanded, type Defaults } from './parse.ts';
import { SETTINGS, type Setting } from './settings.ts';

/** A per-client limit: sustained requests per minute, and how many may come at once. */
export interface RateLimit {
  perMinute: number;
  burst: number;
}

/** A limit of `n` requests a minute, a third of which may come at once; 0 is no limit. */
export function perMinute(n: number): RateLimit {
  return { perMinute: n, burst: Math.max(1, Math.ceil(n / 3)) };
}

/** A default's type as a setting holds it: `'/api'` is a string, a schedule any list of numbers. */
type Widen<T> = T extends string
  ? string
  : T extends number
    ? number
    : T extends boolean
      ? boolean
      : T extends readonly (infer E)[]
        ? readonly Widen<E>[]
        : T extends object
          ? { -readonly [K in keyof T]: Widen<T[K]> }
          : T;

/** The table's settings createApp takes (its `app` entries, where they land) and where it serves. */
type Tabled = Widen<Pick<Defaults, keyof AppLanded | 'basePath'>>;

/** The numbers no variable sets that the services use, from DEFAULTS. */
type Tuned = Widen<Pick<Defaults, 'partnerReads' | 'webhookIntake' | 'readinessDeadlineMs' | 'readinessStoreDeadlineMs'>>;

/** The reconciler's timing. */
export type ReconcileSettings = Tabled['reconcile'];

/** The merchant webhook's delivery policy. */
export type MerchantWebhookPolicy = Widen<Defaults['merchantWebhook']>;

/** The merchant's backend, told of every outcome by a signed POST (domain/merchant-notify.ts). */
interface MerchantEndpoint {
  url: string;
  secret: string | readonly string[];
}

/** The settings of a shape of their own: what the rules between variables make of them (proxyConfig()). */
interface Shaped {
  /** The merchant server's key for the server-to-server endpoints; without it they answer 401. */
  apiKey: string | undefined;
  /** Origins of the merchant pages allowed to call the browser API; `*` allows any (sandbox only). */
  allowedOrigins: readonly string[];
  /** The proxy's public URL (https://pay.shop.example): its origin may call the browser API. */
  publicUrl: string | undefined;
  /** Let the browser choose the amount, within these bounds (`POST /payments`); default off. */
  openAmount: { min: number; max: number } | false;
  /** Where the hosted checkout sends the payer after paying, when a checkout names none (https). */
  defaultCallback: string | undefined;
  /** Per-client limits on creating and on reading, and per source on the partner's notifications; `false` turns them off. */
  rateLimits: { create: RateLimit; status: RateLimit; webhook: RateLimit } | false;
  /** The partner's notifications (`POST {basePath}/webhooks/partner[/<secretPath>]`). */
  webhooks: { secretPath: string | undefined; sourceIps: readonly string[] };
  /** The merchant's backend and its delivery policy; none: no deliveries. */
  merchantWebhook: (MerchantEndpoint & MerchantWebhookPolicy) | undefined;
  /** What the partner's numeric status codes mean; checked at run time (domain/numbering/status-numbering.ts). Default: the sandbox's. */
  statusCodes: AnyStatusCodes;
  /** What the partner's numeric transfer status codes mean, verified apart (PIX_TRANSFER_STATUS_CODES); none: the stated or the sandbox's. */
  transferStatusCodes: AnyStatusCodes | undefined;
}

/** Every setting createApp's services and routes use, each with its value. */
export interface ResolvedSettings extends Tabled, Tuned, Shaped {
  /** How often the outcome feed looks for what it has not sent yet (the deliveries' pace). */
  feedPollMs: number;
}

type Loose<T> = { [K in keyof T]?: T[K] | undefined };
type Optional<T> = { [K in keyof T]?: (T[K] extends readonly unknown[] ? T[K] : T[K] extends object ? Optional<T[K]> : T[K]) | undefined };

/**
 * How the proxy behaves: the options of createApp that are settings (its parts, the store and the
 * partner client, come beside them), read from the environment by proxyConfig() under the same
 * names. What is left out takes its default (resolveSettings).
 */
export type AppSettings = Optional<Tabled> &
  Loose<Omit<Shaped, 'rateLimits' | 'webhooks' | 'merchantWebhook'>> & {
    /** Per-client limits; a limit left out of an object takes its default; `false` turns them off. */
    rateLimits?: { create: RateLimit; status: RateLimit; webhook?: RateLimit | undefined } | false | undefined;
    webhooks?: Loose<Shaped['webhooks']> | undefined;
    /** The merchant's backend; its delivery policy defaults to DEFAULTS.merchantWebhook's. */
    merchantWebhook?: (MerchantEndpoint & Partial<MerchantWebhookPolicy>) | undefined;
    /** While the partner's notifications arrive on time, how fresh a pending status must be instead (and how often a watched one is polled). */
    webhookReadIntervalMs?: number | undefined;
  };

/** The top-level keys of Tabled: where the table's `app` entries land, and the base path. */
const TABLED_KEYS = [
  ...new Set(
    Object.values(SETTINGS as Record<string, Setting>)
      .filter((setting) => setting.app)
      .map((setting) => setting.at!.split('.')[0]!),
  ),
  'basePath',
] as (keyof Tabled)[];

/** Fills what `given` leaves out from DEFAULTS: `given`'s groups member by member. */
export function resolveSettings(given: AppSettings): ResolvedSettings {
  const tabled = Object.fromEntries(TABLED_KEYS.map((key) => [key, filled(DEFAULTS[key], given[key])])) as Tabled;
  const limits = given.rateLimits;
  return {
    ...tabled,
    partnerReads: { ...DEFAULTS.partnerReads, trustedMs: given.webhookReadIntervalMs ?? DEFAULTS.partnerReads.trustedMs },
    webhookIntake: DEFAULTS.webhookIntake,
    readinessDeadlineMs: DEFAULTS.readinessDeadlineMs,
    readinessStoreDeadlineMs: DEFAULTS.readinessStoreDeadlineMs,
    feedPollMs: DEFAULTS.merchantWebhook.pollMs,
    apiKey: given.apiKey,
    allowedOrigins: given.allowedOrigins ?? [],
    publicUrl: given.publicUrl,
    openAmount: given.openAmount ?? false,
    defaultCallback: given.defaultCallback,
    rateLimits:
      limits === false
        ? false
        : {
            create: limits?.create ?? perMinute(DEFAULTS.rateLimitCreatePerMinute),
            status: limits?.status ?? perMinute(DEFAULTS.rateLimitStatusPerMinute),
            webhook: limits?.webhook ?? perMinute(DEFAULTS.webhookIntake.perSourcePerMinute),
          },
    webhooks: { secretPath: given.webhooks?.secretPath, sourceIps: given.webhooks?.sourceIps ?? [] },
    merchantWebhook: given.merchantWebhook
      ? { ...filled(DEFAULTS.merchantWebhook, given.merchantWebhook), url: given.merchantWebhook.url, secret: given.merchantWebhook.secret }
      : undefined,
    statusCodes: given.statusCodes ?? DEFAULT_STATUS_CODES,
    transferStatusCodes: given.transferStatusCodes,
  };
}

const isGroup = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** The default with what is given over it: a group member by member (one given as undefined leaves its default), anything else whole. */
function filled<T>(fallback: T, given: unknown): T {
  if (!isGroup(fallback)) return (given ?? fallback) as T;
  const members = isGroup(given) ? given : {};
  return Object.fromEntries(Object.entries(fallback).map(([key, value]) => [key, filled(value, members[key])])) as T;
}
