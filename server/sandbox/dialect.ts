/**
 * What a dialect of the sandbox is (dialects.ts has the four): the neutral views of a payment and a
 * transfer the sandbox hands it, the problems it words, and SandboxDialect, the knobs it answers
 * every "not shown" item of the spec with. A dialect writes what goes on the wire and never sees the
 * sandbox's state; the HTTP status of a problem is the same in every dialect (problemStatus).
 */
import {
  PARTNER_STATUS,
  TRANSFER_REFUSAL_HTTP,
  type NotifyType,
  type PartnerStatusCode,
  type PixKeyType,
  type TransferRefusalReason,
} from '../partner/wire.ts';
import type { SandboxWebhookEvent } from './webhooks.ts';

/** The three states of a payment or transfer, by name: what the sandbox keeps, whatever the dialect says. */
export type StatusName = keyof typeof PARTNER_STATUS;
/** The numeric `status` a dialect writes for each state. */
export type StatusNumbering = Readonly<Record<StatusName, number>>;

/** The canonical code's name (PARTNER_STATUS, the sandbox's own numbering). */
export function statusName(status: PartnerStatusCode): StatusName {
  return status === PARTNER_STATUS.approved ? 'approved' : status === PARTNER_STATUS.canceled ? 'canceled' : 'pending';
}

/** An answer: its HTTP status and JSON body; no `body` means an empty answer (a 204). */
export interface DialectAnswer {
  status: number;
  body?: unknown;
}

/** A payment as the sandbox knows it, neutral: every dialect writes it its own way. */
export interface PaymentView {
  id: number;
  externalReference: string;
  value: number;
  callback: string | null;
  status: StatusName;
  /** The BR Code (copy-and-paste text). */
  pixKey: string;
  qrCodeUrl: string;
  checkout: string;
  /** The receiving party's name. */
  favoured: string;
  partner: { name: string; document: string };
  tenant: { id: string; name: string };
  /** Epoch milliseconds, sandbox time. */
  createdAt: number;
  expirationSeconds: number;
  /** Epoch milliseconds, sandbox time, when the answer is written: a dialect with an expired code needs it. */
  now?: number;
  /** The payment was given back after approval (a return): a dialect with a returned code writes it. */
  returned?: boolean;
}

/** A transfer as the sandbox knows it, neutral. */
export interface TransferView {
  id: number;
  externalReference: string;
  value: number;
  status: StatusName;
  pixKey: string;
  pixKeyType: PixKeyType;
  transactionId: string | null;
  end2end: string | null;
  createdAt: number;
  updatedAt: number;
}

/**
 * Why a request is refused. The HTTP status is the same in every dialect (problemStatus); only the
 * body differs (SandboxDialect.errorBody).
 */
export type SandboxProblem =
  /** A body breaking the operation's rules (422): each field and its problem, e.g. `{value: 'must be at least 0.20'}`. */
  | { kind: 'invalid_data'; message: string; fields: Readonly<Record<string, string>>; reason?: 'invalid_data' }
  /** A transfer refused up front for its customer or bank (TRANSFER_REFUSAL_HTTP). */
  | { kind: 'refused'; message: string; reason: Exclude<TransferRefusalReason, 'invalid_data'> }
  /** No token, or one unknown or expired (401). */
  | { kind: 'unauthenticated'; message: string }
  /** Anything else: headers, JSON, sizes, credentials, unknown paths or references, methods, faults, plain HTTP. */
  | { kind: 'request'; status: number; message: string };

export function problemStatus(problem: SandboxProblem): number {
  switch (problem.kind) {
    case 'invalid_data':
      return 422;
    case 'refused':
      return TRANSFER_REFUSAL_HTTP[problem.reason];
    case 'unauthenticated':
      return 401;
    case 'request':
      return problem.status;
  }
}

/** What HEAD .../check (4.4) is asked about. */
export type PaymentCheckState = 'pending' | 'paid' | 'canceled' | 'unknown';

/**
 * One way of answering everything the spec leaves "not shown". Every function returns what goes on
 * the wire; none sees the sandbox's state.
 */
export interface SandboxDialect {
  /** Shown by `GET /_sandbox/dialect` and the banner of `npm run sandbox`. */
  readonly name: string;
  /** `status` of records, create answers, webhooks and the control API's pay/cancel/approve answers. */
  readonly statusCodes: StatusNumbering;
  /** Transfers' `status`, when they are numbered apart from payments (default: statusCodes). */
  readonly transferStatusCodes?: StatusNumbering;
  /**
   * The PIX_STATUS_CODES (and PIX_TRANSFER_STATUS_CODES) a client sets for this dialect, when its
   * numbering has more than the three states (an expired code, a returned one); default: statusCodes'.
   */
  readonly setting?: { payments: string; transfers: string };
  /** The HTTP status of a refused token (no token, unknown or expired): 401 unless said (some services answer 403). */
  readonly tokenRefusedStatus?: 401 | 403;
  /** How the partner API and the webhooks write a time (created_at, updated_at, occurred_at). */
  timestamp(epochMs: number): string;
  /** 4.2: a login that succeeded, with the token and when it expires (sandbox epoch ms). */
  login(token: string, expiresAtMs: number, nowMs: number): DialectAnswer;
  /** 4.1. */
  tenant(tenant: { id: string; name: string }): DialectAnswer;
  /** 4.3: the answer to a create. */
  paymentCreated(payment: PaymentView): DialectAnswer;
  /** 4.5. */
  payment(payment: PaymentView): DialectAnswer;
  /** 4.4: the HTTP status of HEAD .../check (never a body). */
  paymentCheck(state: PaymentCheckState): number;
  /** 4.6, either operation: an accepted transfer (pending). */
  transferAccepted(transfer: TransferView): DialectAnswer;
  /** 4.7. */
  transfer(transfer: TransferView): DialectAnswer;
  /** 4.8: the registration just made. */
  notificationUrlSet(registration: { notificationUrl: string; notifyType: NotifyType }): DialectAnswer;
  /** The body of an error answer (7); its status is problemStatus(problem) in every dialect. */
  errorBody(problem: SandboxProblem): unknown;
  /** 6: the JSON POSTed for an event, in the format notify_type chose (`old` 1, `new` 2). */
  webhookPayload(event: SandboxWebhookEvent, format: 'old' | 'new'): Record<string, unknown>;
}
