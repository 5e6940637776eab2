/**
 * The partner service's limits (spec section 8) and the few limits of our own that the spec leaves
 * open. Every check in the widget, the proxy, the client and the sandbox reads them from here.
 */
export const LIMITS = {
  /** Payment value in reais (spec 4.3, 8). */
  paymentValue: { min: 0.2, max: 10_000 },
  /** Transfer value in reais (spec 4.6, 8). */
  transferValue: { min: 0.2, max: 49_000 },
  /** Characters (code points) of a payment description (spec 4.3). */
  descriptionMaxLength: 50,
  /** Seconds until a QR code expires when creation does not say (spec 4.3). */
  defaultExpirationSeconds: 3600,
  /** An unpaid payment is canceled this long after it expires (spec 3, 8). */
  cancelAfterExpirationSeconds: 3600,
  /** Webhook attempts after the first (spec 6, 8). */
  webhookRetries: 2,
  /** Access token lifetime (spec 5). */
  tokenLifetimeSeconds: 5 * 365 * 24 * 3600,
  /** Our own bound on a customer's name: the spec sets none, a proof of payment shows a line. */
  customerNameMaxLength: 120,
  /** Our own bound on a partner reference (percent-encoded in a path): the spec sets none. */
  referenceMaxLength: 200,
  /** Our own bound on a merchant's order id. */
  orderIdMaxLength: 64,
  /** Our own bound on a JSON body the proxy accepts: a real one is under 500 bytes. */
  maxJsonBodyBytes: 4 * 1024,
} as const;

/** True when `value` is a finite amount with at most two decimals (cents), immune to float noise. */
export function isCents(value: number): boolean {
  return Number.isFinite(value) && Math.abs(value * 100 - Math.round(value * 100)) < 1e-6;
}

/** Length in code points, as the spec and the BR Code count characters. */
export function charCount(text: string): number {
  return [...text].length;
}

/** Formats reais as the spec writes limits (0.20, 10,000.00) for error messages. */
export function formatReais(value: number): string {
  return value.toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 });
}

/**
 * Why a text the customer will read (a description on the proof of payment, a payer's name) cannot be
 * sent as it is, or null when it can: control characters (a line break, a NUL), bidirectional
 * overrides (which can reverse what a bank app shows), and lone surrogates (half an emoji, which no
 * encoding can carry).
 */
export function printableTextProblem(text: string): string | null {
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x20 || (code >= 0x7f && code <= 0x9f)) return 'must not contain control characters (line breaks, tabs)';
  }
  if (/[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/.test(text)) return 'must not contain bidirectional control characters';
  if (/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/.test(text)) return 'must not contain a broken character (a lone surrogate)';
  return null;
}
