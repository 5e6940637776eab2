/**
 * The configuration room: the table of settings (settings.ts), the kinds of value (kinds.ts), the
 * reader (parse.ts), the rules between variables (proxy-config.ts), createApp's settings resolved
 * (resolve.ts) and the table of docs/configuration.md (readme.ts).
 */
export { DEFAULTS, landValues, readSettings, settingNames, type AppLanded, type Defaults, type Reading, type Settings, type Values } from './parse.ts';
export {
  ConfigError,
  SANDBOX_API_KEY,
  SANDBOX_DEFAULTS,
  loadEnv,
  parseDotenv,
  partnerConfig,
  proxyConfig,
  type PartnerConfig,
  type ProxyConfig,
} from './proxy-config.ts';
export {
  perMinute,
  resolveSettings,
  type AppSettings,
  type MerchantWebhookPolicy,
  type RateLimit,
  type ReconcileSettings,
  type ResolvedSettings,
} from './resolve.ts';
export { LOG_LEVELS, MIN_API_KEY_LENGTH, SETTINGS, isDatabaseUrl, type Setting, type SettingName } from './settings.ts';
export { TUNABLES } from './tunables.ts';
export type { Kind } from './kinds.ts';
