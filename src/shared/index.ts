/**
 * `pix-checkout/shared`, and `pix-checkout-server/shared` (the same files, compiled into each
 * package): the contract between the browser, the proxy and a merchant's server (zod schemas and
 * their types), the error codes, the limits, the statuses, the BR Code parser and CRC, and the
 * CPF/CNPJ checks. No DOM, no node:*.
 */
export * from './contract.ts';
export * from './wire.ts';
export * from './first-screen.ts';
export * from './errors.ts';
export * from './limits.ts';
export * from './status.ts';
export * from './document.ts';
export * from './pix-keys.ts';
export * from './payouts.ts';
export { buildDynamicBrCode, checkBrCode, crc16, describeBrCodeProblem, formatAmount, parseBrCode } from './brcode.ts';
export type { BrCode, BrCodeCheck, BrCodeErrorCode, BrCodeProblem, BrCodeResult, DynamicBrCodeInput } from './brcode.ts';
