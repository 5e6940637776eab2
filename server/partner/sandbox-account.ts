/**
 * The sandbox's published test account: what a client logs in with when nothing is configured. The
 * partner room owns it (like a service's published test keys); the sandbox serves it, and the
 * configuration falls back to it, so neither imports the other.
 */
export const SANDBOX_ACCOUNT = {
  baseUrl: 'https://127.0.0.1:8443',
  /** Written by `npm run sandbox`; trusted as an extra certificate authority. */
  caFile: '.sandbox/cert.pem',
  email: 'sandbox@pix-checkout.test',
  accessKey: 'sandbox-access-key',
  userAgent: 'pix-checkout sandbox (dev@pix-checkout.test)',
} as const;
