/**
 * `pix-checkout-server`: the proxy to mount in a merchant's server (`createProxy` from the
 * configuration, `createApp` from parts, or the domain alone with `createServices` and its HTTP stack
 * with `createHttpApp`, both over `resolveSettings(...)`), to run on its own (`startProxy`, `serve`), the
 * merchant webhook's signature check (`verifyWebhookSignature`), and what the merchant's own server
 * uses: the typed client of the proxy's API (`createCheckoutClient`), the webhook in one call
 * (`constructEvent`, `webhookHandler`, `webhookFetchHandler`) and a script-tag page's early request of
 * its checkout's payment (`renderPaymentRequest`).
 */
export { createApp, createHttpApp, SECURITY_HEADERS, type AppDeps, type PixApp, type PixRuntime } from './app.ts';
export { createServices, type ServiceParts, type Services } from './services.ts';
export { createProxy, type MountedProxy, type ProxyParts } from './proxy.ts';
export { serve, startProxy, type RunningProxy } from './main.ts';
export {
  ConfigError,
  DEFAULTS,
  SANDBOX_DEFAULTS,
  loadEnv,
  partnerConfig,
  perMinute,
  proxyConfig,
  resolveSettings,
  type AppSettings,
  type PartnerConfig,
  type ProxyConfig,
  type RateLimit,
  type ResolvedSettings,
} from './config/index.ts';
export {
  DEFAULT_TOLERANCE_SECONDS,
  EVENT_ID_HEADER,
  SIGNATURE_HEADER,
  STANDARD_WEBHOOK_HEADERS,
  checkWebhookSignature,
  generateWebhookSecret,
  signWebhook,
  webhookHeaders,
  type SignatureCheck,
  type VerifyOptions,
  type WebhookSecrets,
} from './domain/signature.ts';
export type { OutcomeEvent } from './domain/outcomes.ts';
export {
  CheckoutApiError,
  createCheckoutClient,
  type CheckoutApiErrorCode,
  type CheckoutClient,
  type CheckoutClientOptions,
  type CreateCheckoutInput,
  type CreateRefundInput,
  type CreateTransferInput,
  type IdempotentOptions,
  type TransferListFilter,
} from './merchant/checkout-client.ts';
export {
  WebhookVerificationError,
  constructEvent,
  verifyWebhookSignature,
  webhookFetchHandler,
  webhookHandler,
  type ConstructEventOptions,
  type NodeWebhookHandler,
  type OutcomeEventHandler,
  type WebhookHandlerOptions,
  type WebhookHeaders,
  type WebhookRequest,
  type WebhookVerificationErrorCode,
} from './merchant/webhook-events.ts';
export { renderPaymentRequest, type RenderPaymentRequestOptions } from './merchant/payment-request.ts';
export { createPartnerClient, type PartnerClient } from './partner/client.ts';
export { openSqliteStore } from './store/sqlite/sqlite-store.ts';
export type { Store } from './store/store.ts';
export { createLogger, type Logger } from './log.ts';
export { closeServer } from './http/close-server.ts';
