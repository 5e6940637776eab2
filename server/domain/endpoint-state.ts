/**
 * The merchant's webhook endpoint, as the deliveries found it: failing since when (the first failure
 * after its last success), and disabled once it has answered nothing but failures for a whole day
 * (`disableAfterMs`). Disabled, nothing more is sent to it; what is pending waits until an operator
 * runs `pix-checkout deliveries resume` (resumeEndpoint). Kept in the store's key-value records (the
 * ones the partner's token lives in), one record for the configured URL, so a restart and every
 * instance sharing the store agree; a new URL starts afresh.
 */
import type { Logger } from '../log.ts';
import type { TokenStore } from '../partner/token-store.ts';

/** The store key of the endpoint's record. */
export const ENDPOINT_STATE_KEY = 'merchant-webhook-endpoint';

interface EndpointRecord {
  url: string;
  failing_since: number;
  disabled_at: number | null;
  last_error: string | null;
}

export class EndpointState {
  private record: EndpointRecord | null = null;

  constructor(
    private readonly kv: TokenStore,
    private readonly url: string,
    private readonly disableAfterMs: number,
    private readonly log: Logger,
  ) {}

  get disabled(): boolean {
    return this.record?.disabled_at != null;
  }

  /** Since when the endpoint has failed without a success (epoch ms, the proxy's clock), or null. */
  get failingSince(): number | null {
    return this.record?.failing_since ?? null;
  }

  /** Reads the record again (another instance, or `deliveries resume`, may have changed it); answers whether it is disabled. */
  async refresh(): Promise<boolean> {
    const raw = await this.kv.load(ENDPOINT_STATE_KEY);
    let record: EndpointRecord | null;
    try {
      record = raw ? (JSON.parse(raw) as EndpointRecord) : null;
    } catch {
      record = null;
    }
    this.record = record && record.url === this.url && Number.isFinite(record.failing_since) ? record : null;
    return this.disabled;
  }

  async succeeded(): Promise<void> {
    if (this.record === null) return;
    this.record = null;
    await this.kv.clear(ENDPOINT_STATE_KEY);
  }

  /** A failed attempt at `at`: starts the failing time, or disables the endpoint when it has lasted `disableAfterMs`. */
  async failed(at: number, error: string): Promise<void> {
    if (this.record === null) {
      this.record = { url: this.url, failing_since: at, disabled_at: null, last_error: error };
      await this.save();
      return;
    }
    if (this.record.disabled_at !== null || at - this.record.failing_since < this.disableAfterMs) return;
    this.record = { ...this.record, disabled_at: at, last_error: error };
    await this.save();
    this.log.error(
      {
        failing_since: new Date(this.record.failing_since).toISOString(),
        last_error: error,
        hours: Math.round((at - this.record.failing_since) / 3_600_000),
      },
      'merchant webhook endpoint disabled: it has answered nothing but failures for a day; deliveries wait until `pix-checkout deliveries resume`',
    );
  }

  /** What /ready says while it is disabled, else null. */
  warning(): string | null {
    const r = this.record;
    if (r?.disabled_at == null) return null;
    return (
      `the merchant webhook (PIX_MERCHANT_WEBHOOK_URL) is disabled since ${new Date(r.disabled_at).toISOString()}: ` +
      `it answered nothing but failures from ${new Date(r.failing_since).toISOString()} (last: ${r.last_error ?? 'unknown'}); ` +
      'outcomes wait in the outbox: fix the receiver, then run pix-checkout deliveries resume'
    );
  }

  private async save(): Promise<void> {
    await this.kv.save(ENDPOINT_STATE_KEY, JSON.stringify(this.record));
  }
}

/** Turns the endpoint back on and makes every pending delivery due now, with a new retry window: how many wait. */
export async function resumeEndpoint(
  store: { tokens: TokenStore; outbox: { resume(now: number): Promise<number> } },
  now: number,
): Promise<{ wasDisabled: boolean; queued: number }> {
  const raw = await store.tokens.load(ENDPOINT_STATE_KEY);
  let wasDisabled = false;
  try {
    wasDisabled = raw !== null && (JSON.parse(raw) as EndpointRecord).disabled_at != null;
  } catch {
    // A record that does not parse is cleared all the same.
  }
  await store.tokens.clear(ENDPOINT_STATE_KEY);
  return { wasDisabled, queued: await store.outbox.resume(now) };
}

/**
 * A receiver's Retry-After as milliseconds from `nowMs` (wall clock): delay-seconds or an HTTP date
 * (RFC 9110 10.2.3); null when absent or unreadable, 0 for a date past.
 */
export function retryAfterMs(value: string | null, nowMs: number): number | null {
  if (value === null) return null;
  const text = value.trim();
  if (/^\d{1,10}$/.test(text)) return Number(text) * 1000;
  const date = Date.parse(text);
  return Number.isFinite(date) && /[a-z]/i.test(text) ? Math.max(0, date - nowMs) : null;
}
