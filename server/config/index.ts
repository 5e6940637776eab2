/**
 * The configuration room: the table of settings (settings.ts), the kinds of value (kinds.ts), the
 * reader (parse.ts), the rules between variables (proxy-config.ts) and the table of docs/configuration.md (readme.ts).
 */
export { DEFAULTS, landValues, readSettings, settingNames, type AppLanded, type Defaults, type Reading, type Settings, type Values } from './parse.ts';
export {
  ConfigError,
  SANDBOX_DEFAULTS,
  loadEnv,
  parseDotenv,
  partnerConfig,
  perMinute,
  proxyConfig,
  type AppSettings,
  type MerchantWebhookPolicy,
  type PartnerConfig,
  type ProxyConfig,
  type RateLimit,
  type ReconcileSettings,
} from './proxy-config.ts';
export { LOG_LEVELS, MIN_API_KEY_LENGTH, SETTINGS, isDatabaseUrl, type Setting, type SettingName } from './settings.ts';
export { TUNABLES } from './tunables.ts';
export type { Kind } from './kinds.ts';
