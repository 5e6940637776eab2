/**
 * The merchant's server-to-server extras (API key): the accounting export, the stream of outcome
 * events `pix-checkout listen` forwards, and the OpenAPI document of the whole HTTP API.
 */
import { z } from 'zod/mini';

/** Routes under the API's base path (`/api`). */
export const MERCHANT_PATHS = {
  /** GET, API key: the accounting export (ReportQuery), CSV or JSON, streamed. */
  reports: '/reports',
  /** GET, API key: outcome events as Server-Sent Events (OutcomeStreamQuery), for `pix-checkout listen`. */
  events: '/events',
  /** GET, public: the OpenAPI 3.1 document of this API. */
  openapi: '/openapi.json',
} as const;

export const REPORT_FORMATS = ['csv', 'json'] as const;
export type ReportFormat = (typeof REPORT_FORMATS)[number];

/** The longest range one export covers, in days. */
export const REPORT_MAX_DAYS = 366;

const isCalendarDate = (text: string) => {
  const [y, m, d] = text.split('-').map(Number);
  const date = new Date(Date.UTC(y!, m! - 1, d));
  return date.getUTCFullYear() === y && date.getUTCMonth() === m! - 1 && date.getUTCDate() === d;
};

/** A calendar day in the merchant's time zone, `YYYY-MM-DD`. */
export const ReportDate = /* @__PURE__ */ z
  .string()
  .check(z.regex(/^\d{4}-\d{2}-\d{2}$/, 'must be a date, YYYY-MM-DD'), z.refine(isCalendarDate, 'must be a calendar date'));

/** Days from `from` to `to`, both included. */
export const reportDays = (from: string, to: string): number => Math.round((Date.parse(`${to}T00:00:00Z`) - Date.parse(`${from}T00:00:00Z`)) / 86_400_000) + 1;

/** True for a time zone Intl knows (IANA names, `UTC`): a report's `time_zone` and PIX_TIME_ZONE. */
export function isTimeZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

/**
 * GET {endpoint}/reports: what was created from the start of `from` to the end of `to` (both
 * included), days in `time_zone` (default: the proxy's PIX_TIME_ZONE).
 */
export const ReportQuery = /* @__PURE__ */ z
  .strictObject({
    from: ReportDate,
    to: ReportDate,
    format: z.optional(z.enum(REPORT_FORMATS, { error: 'must be csv or json' })),
    /** An IANA time zone, such as America/Sao_Paulo. */
    time_zone: z.optional(z.string().check(z.regex(/^[A-Za-z0-9_+\-/]{1,64}$/, 'must be an IANA time zone such as America/Sao_Paulo'))),
  })
  .check(
    z.superRefine((q, ctx) => {
      if (!isCalendarDate(q.from) || !isCalendarDate(q.to)) return;
      const days = reportDays(q.from, q.to);
      if (days < 1) ctx.issues.push({ code: 'custom', path: ['to'], message: 'must not be before from', input: q.to });
      else if (days > REPORT_MAX_DAYS)
        ctx.issues.push({ code: 'custom', path: ['to'], message: `must be at most ${REPORT_MAX_DAYS} days after from`, input: q.to });
    }),
  );
export type ReportQuery = z.infer<typeof ReportQuery>;

/** What a row is: a checkout, a payment (a QR code), a refund (a transfer back to a checkout's payer), a payout. */
export const REPORT_KINDS = ['checkout', 'payment', 'refund', 'payout'] as const;

/** One row of the export; the CSV's columns are these keys, in this order. */
export const ReportRow = /* @__PURE__ */ z.object({
  kind: z.enum(REPORT_KINDS),
  /** The checkout's id (co_...), the payment's partner reference, the transfer's id (tr_...). */
  id: z.string(),
  /** A payment's and a transfer's reference at the partner; the merchant's reference of a payout. */
  reference: z.nullable(z.string()),
  checkout_id: z.nullable(z.string()),
  order_id: z.nullable(z.string()),
  status: z.string(),
  /** Reais, two decimals, as text: exact. */
  amount: z.string(),
  /** ISO 8601 with the time zone's offset. */
  created_at: z.string(),
  /** When it became final (paid, canceled, approved...), same form; null while open. */
  settled_at: z.nullable(z.string()),
});
export type ReportRow = z.infer<typeof ReportRow>;

/** The totals that end the export: one per kind and status, with the count and the sum. */
export const ReportTotal = /* @__PURE__ */ z.object({ kind: z.enum(REPORT_KINDS), status: z.string(), count: z.number(), amount: z.string() });
export type ReportTotal = z.infer<typeof ReportTotal>;

/** The JSON export, whole (it is streamed: `rows` first, `totals` at the end). */
export const Report = /* @__PURE__ */ z.object({
  from: z.string(),
  to: z.string(),
  time_zone: z.string(),
  rows: z.array(ReportRow),
  totals: z.array(ReportTotal),
});
export type Report = z.infer<typeof Report>;

/**
 * GET {endpoint}/events (`text/event-stream`): each outcome event recorded after `after` (an SSE id
 * this stream gave; default: only those recorded from now on), as `event: outcome`, `id: <seq>`,
 * `data: <the event's JSON, byte for byte as the webhook sends it>`. A reconnecting EventSource sends
 * Last-Event-ID, which counts as `after`.
 */
export const OutcomeStreamQuery = /* @__PURE__ */ z.strictObject({
  after: z.optional(z.string().check(z.regex(/^\d{1,15}$/, 'must be an event sequence number this stream gave'))),
});
