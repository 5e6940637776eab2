/**
 * What the partner client is given and what it gives back: its options, its log and observation
 * lines, and the typed results of each operation (server/partner/client.ts builds it).
 */
import type { CreatePartnerPaymentRequest, KeyTransferRequest, NotifyType, SolicitTransferRequest } from './wire.ts';
import type { PaymentAnswer, TransferAnswer } from './read.ts';
import type { Found } from './read-fields.ts';
import type { TokenStore } from './token-store.ts';
import type { Runtime } from '../runtime/runtime.ts';

export interface PartnerClientOptions {
  /** https:// base URL of the service (or of the sandbox). */
  baseUrl: string;
  /** Used to log in when there is no token, and again when the token is refused. */
  credentials?: { email: string; accessKey: string } | null;
  /** A token from an earlier login; it lives 5 years. */
  token?: string | null;
  /** Keeps the token from a login across restarts (default: memory only). */
  tokenStore?: TokenStore;
  /** `Company (contact@example.com)`, required by the service on every request. */
  userAgent: string;
  /** Extra certificate authority to trust, PEM (the sandbox's certificate). */
  ca?: string | null;
  /** Deadline of each attempt. */
  timeoutMs?: number;
  /** Attempts of a safe operation (read, HEAD, login, notification URL) before giving up. */
  attempts?: number;
  /** First backoff delay; doubled at each retry, with jitter. */
  backoffMs?: number;
  /** One line per attempt: operation, status, duration. Never headers, bodies or secrets. */
  log?: (entry: PartnerLogEntry) => void;
  /** Told of every 2xx answer read: where each used value was found, and the answer's shape with values redacted (doctor). */
  observe?: (answer: ObservedAnswer) => void;
  /** The clock, for the token's lifetime. */
  now?: () => number;
  /** Time, timers and chance: the attempts' durations, the backoff and its jitter, the transaction ids (default the real ones). */
  runtime?: Partial<Pick<Runtime, 'clock' | 'random'>> | undefined;
}

/** What a client is created with when its options leave these out. */
export const PARTNER_CLIENT_DEFAULTS = {
  /** Deadline of each attempt. */
  timeoutMs: 10_000,
  /** Attempts of a safe operation (read, HEAD, login, notification URL). */
  attempts: 3,
  /** First pause between attempts, doubled each time, with jitter. */
  backoffMs: 250,
} as const;

export interface PartnerLogEntry {
  operation: string;
  method: string;
  path: string;
  attempt: number;
  /** HTTP status, or 0 when no answer came. */
  status: number;
  durationMs: number;
  outcome: 'ok' | 'retry' | 'error';
}

/** A 2xx answer as read: its HTTP status, its shape (values replaced by their types) and where each used field was. */
export interface ObservedAnswer {
  operation: string;
  status: number;
  /** null when there was no body. */
  shape: unknown;
  found: Found;
  /** An error answer (4xx, 5xx): only its shape is told. */
  error?: boolean;
}

export type CreatePaymentInput = Omit<CreatePartnerPaymentRequest, 'tenant_id'>;

export interface CreatedPayment {
  externalReference: string;
  /** The copy-and-paste code. */
  pixKey: string;
  qrCodeUrl: string | null;
  checkoutUrl: string | null;
  /** Epoch ms as the service gave it; null when its answer did not say (then the caller's clock decides). */
  createdAt: number | null;
  /** The status of the new payment, when the answer carried one (pending by definition: domain/numbering/status-numbering.ts checks it). */
  status: PaymentAnswer['status'];
  /** The partner-side `transaction_id` the request carried. */
  transactionId: string;
  /** Who is being paid, when the answer says (spec 2.1 `favoured`). */
  favoured: string | null;
}

/** The payment details (4.5), as read: any field may be null but the reference. */
export type PaymentDetails = Omit<PaymentAnswer, 'found' | 'externalReference'> & { externalReference: string };

/** A transfer record (4.6, 4.7), as read. */
export type TransferDetails = Omit<TransferAnswer, 'found' | 'externalReference'> & { externalReference: string };

/**
 * What the quick check (4.4) answered: its HTTP status only, which means nothing certain (the spec
 * does not say); `hint` is its reading under the assumed mapping (PAYMENT_CHECK_HTTP). Never decide
 * a payment's state from it: read the details (4.5).
 */
export interface PaymentCheck {
  httpStatus: number;
  hint: 'paid' | 'pending' | 'canceled' | 'not_found' | 'unknown';
}

export interface PartnerClient {
  login(): Promise<void>;
  getTenant(): Promise<{ id: string; name: string | null }>;
  createPayment(input: CreatePaymentInput): Promise<CreatedPayment>;
  checkPayment(externalReference: string): Promise<PaymentCheck>;
  getPayment(externalReference: string): Promise<PaymentDetails>;
  solicitTransferForCustomer(input: SolicitTransferRequest): Promise<TransferDetails>;
  transferToKey(input: KeyTransferRequest): Promise<TransferDetails>;
  checkTransfer(externalReference: string): Promise<TransferDetails>;
  /**
   * Sets the notification URL (4.8). `notify_type` is sent only when given. The answer may say
   * nothing (204): then `confirmed` is false and the URL and type are the ones sent.
   */
  setNotificationUrl(input: {
    notification_url: string;
    notify_type?: NotifyType;
  }): Promise<{ notificationUrl: string; notifyType: number | null; confirmed: boolean }>;
}
