/** The proxy's own defaults, read by createApp (for merchants mounting it) and by config.ts alike. */
export const PROXY_DEFAULTS = {
  /** New payments a checkout may issue after its first one expires. */
  renewals: 3,
  /** Payments a client may ask for per minute. */
  rateLimitCreatePerMinute: 30,
  /** Status reads and stream opens per client per minute. */
  rateLimitStatusPerMinute: 600,
  /** A stored unfinished status younger than this is served without asking the partner. */
  staleAfterMs: 2000,
  /** How often a payment with open streams is asked about. */
  watchIntervalMs: 2000,
} as const;
