/**
 * `import { PixCheckout } from 'pix-checkout/element'`: the class, its events and types, with no
 * registration. Register it under your own tag (or a scoped registry); `pix-checkout` registers it as
 * `<pix-checkout>`.
 */
export { PixCheckout, type PixScreen } from './pix-checkout.ts';
export * from './events.ts';
export type { PixEnvironment } from './controllers/environment.ts';
export type { Translation } from './locales/index.ts';
export type { PaymentView } from './shared/contract.ts';
export type { PaymentStatus } from './shared/status.ts';
