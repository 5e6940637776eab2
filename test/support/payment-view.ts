/** A payment as the proxy answers the browser (src/shared/contract.ts PaymentView), for tests that need one without a stack. */
export const PAYMENT_VIEW = {
  reference: 'a'.repeat(32),
  status: 'pending',
  value: 12.34,
  brcode: '000201',
  qr_code_url: 'https://example.test/qr.svg',
  checkout_url: 'https://example.test/pay',
  created_at: '2026-11-29T00:00:00Z',
  expires_at: '2026-11-29T00:30:00Z',
  server_time: '2026-11-29T00:00:01Z',
} as const;
