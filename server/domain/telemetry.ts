/**
 * What the domain tells the proxy's metrics and traces, as interfaces: server/observability
 * implements them (prom-client, @opentelemetry/api), so the domain imports neither. Each is optional
 * where it is taken: a service built without one counts nothing.
 */

/**
 * What became of one of the partner's notifications (webhook-intake.ts and its route): `accepted`
 * (stored, to be confirmed with the partner), `unreadable` (stored for the operator: it names no
 * reference, or two: reason `ambiguous`) or `rejected` (not stored; the reason says why).
 */
export type NotificationResult = 'accepted' | 'unreadable' | 'rejected';
export type NotificationReason = '' | 'ambiguous' | 'empty' | 'full' | 'not_stored' | 'wrong_path' | 'wrong_source' | 'too_large';

/** Counts a notification. */
export type IntakeTally = (result: NotificationResult, reason?: NotificationReason) => void;

/** What became of one delivery attempt to the merchant's webhook. */
export type DeliveryResult = 'delivered' | 'retry' | 'gave_up';

/** The merchant deliveries' metrics and traces (merchant-notify.ts). */
export interface DeliveryTelemetry {
  /**
   * Runs one attempt's POST inside a span named after it; `headers` get the trace context it
   * carries (`traceparent`, with whatever propagator the operator's OpenTelemetry SDK registered).
   */
  send(delivery: { eventId: string; type: string; attempt: number }, headers: Record<string, string>, post: () => Promise<Response>): Promise<Response>;
  /** What became of the attempt. */
  attempted(result: DeliveryResult): void;
}
