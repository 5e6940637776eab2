/**
 * The rows both stores keep, under the same column names, and the records made of them: one mapping
 * for SQLite and Postgres (a flag is 0/1 in one, a boolean in the other).
 */
import type {
  CheckoutRecord,
  DeliveryAttemptRecord,
  DisputeRecord,
  OutboxEntry,
  PaymentRecord,
  PaymentReturnRecord,
  PayoutRecord,
  PayoutState,
  TransferRecord,
  WebhookEventRecord,
} from './store.ts';

export interface TransferRow {
  reference: string;
  partner_status: number;
  final: number | boolean;
  value_cents: number | null;
  created_at: number;
  updated_at: number;
  transaction_id?: string | null;
}

export interface PayoutRow {
  seq: number;
  id: string;
  idempotency_key: string;
  request_hash: string;
  kind: PayoutRecord['kind'];
  checkout_id: string | null;
  value_cents: number;
  pix_key: string;
  pix_key_type: string | null;
  customer_document: string | null;
  merchant_reference: string | null;
  transaction_id: string;
  state: PayoutState;
  reference: string | null;
  reason: string | null;
  reason_message: string | null;
  created_at: number;
  updated_at: number;
  personal_data_erased_at?: number | null;
}

export const toPayout = (r: PayoutRow): PayoutRecord & { seq: number } => ({
  seq: r.seq,
  id: r.id,
  idempotencyKey: r.idempotency_key,
  requestHash: r.request_hash,
  kind: r.kind,
  checkoutId: r.checkout_id,
  valueCents: r.value_cents,
  pixKey: r.pix_key,
  pixKeyType: r.pix_key_type,
  customerDocument: r.customer_document,
  merchantReference: r.merchant_reference,
  transactionId: r.transaction_id,
  state: r.state,
  reference: r.reference,
  reason: r.reason,
  reasonMessage: r.reason_message,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
  // Only when set: a record as the domain wrote it reads back the same.
  ...(r.personal_data_erased_at != null ? { personalDataErasedAt: r.personal_data_erased_at } : {}),
});

export interface OutboxRow {
  id: number;
  event_id: string;
  type: string;
  reference: string;
  body: string;
  created_at: number;
  state: OutboxEntry['state'];
  attempts: number;
  next_attempt_at: number;
  delivered_at: number | null;
  last_error: string | null;
  claim?: string | null;
}

export const toTransfer = (r: TransferRow): TransferRecord => ({
  reference: r.reference,
  partnerStatus: r.partner_status,
  final: r.final === 1 || r.final === true,
  valueCents: r.value_cents,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
  transactionId: r.transaction_id ?? null,
});

export const toOutbox = (r: OutboxRow): OutboxEntry => ({
  id: r.id,
  eventId: r.event_id,
  type: r.type,
  reference: r.reference,
  body: r.body,
  createdAt: r.created_at,
  state: r.state,
  attempts: r.attempts,
  nextAttemptAt: r.next_attempt_at,
  deliveredAt: r.delivered_at,
  lastError: r.last_error,
  claim: r.claim ?? null,
});

export interface PaymentRow {
  reference: string;
  checkout_id: string | null;
  value_cents: number;
  description: string | null;
  partner_status: number;
  brcode: string;
  qr_code_url: string;
  checkout_url: string;
  created_at: number;
  expires_at: number;
  transaction_id: string;
  updated_at: number;
  final: number | boolean;
  favoured: string | null;
  reported_value_cents?: number | null;
  returned_cents?: number | null;
}

export interface CheckoutRow {
  id: string;
  order_id: string;
  value_cents: number;
  description: string | null;
  customer_name: string | null;
  customer_document: string | null;
  callback: string | null;
  payment_reference: string | null;
  renewals_used: number;
  created_at: number;
  customer_document_hash?: string | null;
  personal_data_erased_at?: number | null;
  replaces?: string | null;
}

export const toPayment = (r: PaymentRow): PaymentRecord => ({
  reference: r.reference,
  checkoutId: r.checkout_id,
  valueCents: r.value_cents,
  description: r.description,
  partnerStatus: r.partner_status,
  brcode: r.brcode,
  qrCodeUrl: r.qr_code_url,
  checkoutUrl: r.checkout_url,
  createdAt: r.created_at,
  expiresAt: r.expires_at,
  transactionId: r.transaction_id,
  updatedAt: r.updated_at,
  final: r.final === 1 || r.final === true,
  favoured: r.favoured,
  reportedValueCents: r.reported_value_cents ?? null,
  // Only when set: a record as the domain wrote it reads back the same.
  ...(r.returned_cents != null ? { returnedCents: Number(r.returned_cents) } : {}),
});

export interface ReturnRow {
  reference: string;
  returned_cents: number | string;
  source: string;
  recorded_at: number | string;
}

export const toReturn = (r: ReturnRow): PaymentReturnRecord => ({
  reference: r.reference,
  returnedCents: Number(r.returned_cents),
  source: r.source,
  recordedAt: Number(r.recorded_at),
});

export const toCheckout = (r: CheckoutRow): CheckoutRecord => ({
  id: r.id,
  orderId: r.order_id,
  valueCents: r.value_cents,
  description: r.description,
  name: r.customer_name,
  document: r.customer_document,
  callback: r.callback,
  paymentReference: r.payment_reference,
  renewalsUsed: r.renewals_used,
  createdAt: r.created_at,
  // Only when set: a record as the domain wrote it reads back the same.
  ...(r.customer_document_hash != null ? { documentHash: r.customer_document_hash } : {}),
  ...(r.personal_data_erased_at != null ? { personalDataErasedAt: r.personal_data_erased_at } : {}),
  ...(r.replaces != null ? { replaces: r.replaces } : {}),
});

export interface DisputeRow {
  id: number;
  reference: string;
  checkout_id: string | null;
  recorded_status: number;
  notified: DisputeRecord['notified'];
  webhook_event_id: number | null;
  opened_at: number;
  resolved_at: number | null;
  resolution: string | null;
}

export const toDispute = (r: DisputeRow): DisputeRecord => ({
  id: r.id,
  reference: r.reference,
  checkoutId: r.checkout_id,
  recordedStatus: r.recorded_status,
  notified: r.notified,
  webhookEventId: r.webhook_event_id,
  openedAt: r.opened_at,
  resolvedAt: r.resolved_at,
  resolution: r.resolution,
});

export interface DeliveryAttemptRow {
  delivery_id: number;
  at: number;
  status: number | null;
  error: string | null;
  duration_ms: number;
}

export const toAttempt = (r: DeliveryAttemptRow): DeliveryAttemptRecord => ({
  deliveryId: r.delivery_id,
  at: r.at,
  status: r.status,
  error: r.error,
  durationMs: r.duration_ms,
});

/** A stored notification; `result` and `authenticated` only when the statement selected them. */
export interface WebhookEventRow {
  id: number;
  raw_body: string;
  received_at: number;
  processed_at: number | null;
  result?: string | null;
  authenticated?: number | boolean;
  original_bytes?: number | null;
}

export const toWebhookEvent = (r: WebhookEventRow): WebhookEventRecord => ({
  id: r.id,
  rawBody: r.raw_body,
  receivedAt: r.received_at,
  processedAt: r.processed_at,
  ...(r.result !== undefined ? { result: r.result } : {}),
  ...(r.authenticated === 1 || r.authenticated === true ? { authenticated: true } : {}),
  ...(r.original_bytes != null ? { originalBytes: Number(r.original_bytes) } : {}),
});

/** A row read with its checkout's order id (a LEFT JOIN: null without a checkout). */
export type WithOrder<Row> = Row & { order_id: string | null };
