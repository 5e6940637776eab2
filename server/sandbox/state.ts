/**
 * The sandbox's memory and its rules of time: the partner account, its tokens, the payments and
 * transfers it has issued, and their way to a final outcome. Everything that happens because time
 * passed (a payment canceled an hour after it expired, a bank answering a transfer) happens in
 * settleDue(), which runs whenever the clock jumps, before every request, and on a small real-time
 * interval (server.ts); every final outcome goes out as a webhook exactly once.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { normalizeDocument } from '../../src/shared/document.ts';
import { LIMITS } from '../../src/shared/limits.ts';
import { PARTNER_STATUS, type PartnerStatusCode, type PixKeyType, type TransferRefusalReason, type WebhookOutcome } from '../partner/wire.ts';
import { SANDBOX_ACCOUNT } from '../partner/sandbox-account.ts';
import type { SandboxClock } from './clock.ts';
import { CustomerRegistry, type SandboxCustomer } from './customers.ts';
import { SANDBOX_DIALECTS, type SandboxDialect } from './dialects.ts';
import { FaultInjector } from './faults.ts';
import { WebhookDispatcher, type WebhookOptions } from './webhooks.ts';

export interface SandboxAccount {
  email: string;
  accessKey: string;
  tenant: { id: string; name: string };
  partner: { name: string; document: string };
  /** Name and city printed in every BR Code this account issues. */
  merchant: { name: string; city: string };
}

/** The test account `npm run sandbox` prints; documented in server/sandbox/README.md. */
export const DEFAULT_ACCOUNT: SandboxAccount = {
  email: SANDBOX_ACCOUNT.email,
  accessKey: SANDBOX_ACCOUNT.accessKey,
  tenant: { id: '6f1c2a4e-8b3d-4c5e-9f60-7a8b9c0d1e2f', name: 'Loja Sandbox' },
  partner: { name: 'Loja Sandbox LTDA', document: '11.222.333/0001-81' },
  merchant: { name: 'Loja Sandbox', city: 'Sao Paulo' },
};

/** How long the customers' banks take to answer a transfer, in sandbox seconds. */
export interface BankTiming {
  /** Default 5: the demo sees transfers settle by themselves. */
  answerAfterSeconds?: number;
  /** For customers whose bank is slow (`late`). Default 600. */
  lateAnswerAfterSeconds?: number;
}

export interface SandboxPayment {
  id: number;
  externalReference: string;
  value: number;
  callback: string | null;
  description: string | null;
  customer: { name: string; document: string } | null;
  expirationSeconds: number;
  transactionId: string | null;
  createdAt: number;
  status: PartnerStatusCode;
  paidAt: number | null;
  /** When it reached its final status (paid or canceled). */
  finalAt: number | null;
  pixKey: string;
  /** Reais given back to the payer after it was paid (a Pix return), in all; 0 when none. */
  returned?: number;
}

export interface SandboxTransfer {
  id: number;
  externalReference: string;
  /** Which operation of 4.6 started it. */
  operation: 'solicit-for-customer' | 'pix-key/transfer';
  value: number;
  pixKey: string;
  pixKeyType: PixKeyType;
  /** The key owner's document, without punctuation (normalizeDocument: a CNPJ keeps its letters). */
  customerDocument: string;
  transactionId: string | null;
  createdAt: number;
  updatedAt: number;
  status: PartnerStatusCode;
  /** When the bank answers by itself, and what; the control API may answer first. */
  bankAnswerAt: number;
  bankAnswer: WebhookOutcome;
  /** The Pix end-to-end id, set when the transfer is approved. */
  end2end: string | null;
}

export interface TransferRequest {
  operation: SandboxTransfer['operation'];
  value: number;
  pixKey: string;
  pixKeyType: PixKeyType;
  /** Given by solicit-for-customer only: the key must be this customer's. */
  customerDocument?: string;
  transactionId?: string;
}

/** A refusal for the customer or the bank (the body's own checks refuse invalid data before). */
export type TransferRefusal = { reason: Exclude<TransferRefusalReason, 'invalid_data'>; message: string };

export type Outcome = { ok: true } | { ok: false; reason: string };

export class SandboxState {
  /** The valid tokens; tests read it (no token may leak) and clear it (to make the client log in again). */
  readonly tokens = new Set<string>();
  private readonly tokenExpiry = new Map<string, number>();
  readonly payments = new Map<string, SandboxPayment>();
  readonly transfers = new Map<string, SandboxTransfer>();
  readonly customers: CustomerRegistry;
  readonly faults: FaultInjector;
  readonly webhooks: WebhookDispatcher;
  /**
   * How the sandbox answers what the spec does not show (dialects.ts): read at every answer and
   * every webhook, so `PUT /_sandbox/dialect` switches it at once. The state itself keeps the
   * canonical numbering whatever the dialect.
   */
  dialect: SandboxDialect;
  private readonly bank: Required<BankTiming>;
  private nextId = 1;

  constructor(
    readonly account: SandboxAccount,
    readonly clock: SandboxClock,
    options: {
      bank?: BankTiming;
      webhooks?: WebhookOptions;
      random?: () => number;
      customers?: readonly SandboxCustomer[];
      dialect?: SandboxDialect;
    } = {},
  ) {
    this.dialect = options.dialect ?? SANDBOX_DIALECTS.default;
    this.customers = new CustomerRegistry(options.customers);
    this.faults = new FaultInjector(options.random);
    this.webhooks = new WebhookDispatcher(clock.now, this.faults.dropsWebhook, options.webhooks ?? {}, (event, format) =>
      this.dialect.webhookPayload(event, format),
    );
    this.bank = { answerAfterSeconds: 5, lateAnswerAfterSeconds: 600, ...options.bank };
    clock.onJump(() => this.settleDue());
  }

  /** A token valid for LIMITS.tokenLifetimeSeconds of sandbox time (spec 5). */
  issueToken(): string {
    const token = randomBytes(32).toString('base64url');
    this.tokens.add(token);
    this.tokenExpiry.set(token, this.clock.now() + LIMITS.tokenLifetimeSeconds * 1000);
    return token;
  }

  /** When a token stops being valid, sandbox time; a token put in `tokens` by hand never expires. */
  tokenExpiresAt(token: string): number {
    return this.tokenExpiry.get(token) ?? Infinity;
  }

  isTokenValid(token: string): boolean {
    return this.tokens.has(token) && this.clock.now() < this.tokenExpiresAt(token);
  }

  newPaymentIdentity(): { id: number; externalReference: string } {
    return { id: this.nextId++, externalReference: newReference() };
  }

  expiresAt(payment: SandboxPayment): number {
    return payment.createdAt + payment.expirationSeconds * 1000;
  }

  /** Spec 3: an unpaid payment is canceled 1 hour after its expiration time. */
  cancelsAt(payment: SandboxPayment): number {
    return this.expiresAt(payment) + LIMITS.cancelAfterExpirationSeconds * 1000;
  }

  /**
   * Marks a payment paid, as the payer's bank would. Allowed until it is canceled: the spec keeps an
   * unpaid payment open for an hour past its expiration, so a late payment can still arrive.
   */
  pay(payment: SandboxPayment): Outcome {
    const refused = this.finalReason(payment.status, 'payment');
    if (refused) return refused;
    payment.paidAt = this.clock.now();
    this.finishPayment(payment, 'approved');
    return { ok: true };
  }

  /**
   * Gives `value` reais (default: what is left) of a paid payment back to its payer, as a Pix return
   * ("devolução") would: the payment stays paid, and a notification says how much was returned in all
   * (the central bank's `devolucoes` list on the payment's record: webhooks.ts `withReturns`).
   */
  returnPayment(payment: SandboxPayment, value?: number): Outcome {
    if (payment.status !== PARTNER_STATUS.approved) return { ok: false, reason: 'only a paid payment can be returned' };
    const left = Math.round((payment.value - (payment.returned ?? 0)) * 100) / 100;
    const amount = value ?? left;
    if (!(amount > 0) || amount > left) return { ok: false, reason: `at most ${left.toFixed(2)} is left to return` };
    payment.returned = Math.round(((payment.returned ?? 0) + amount) * 100) / 100;
    this.webhooks.emit({
      kind: 'payment',
      outcome: 'approved',
      occurredAt: this.clock.now(),
      transaction: paymentTransaction(payment),
      returned: payment.returned,
    });
    return { ok: true };
  }

  /** Cancels a pending payment now (control API), as the service does an hour after expiration. */
  cancelPayment(payment: SandboxPayment): Outcome {
    const refused = this.finalReason(payment.status, 'payment');
    if (refused) return refused;
    this.finishPayment(payment, 'canceled');
    return { ok: true };
  }

  /**
   * The checks of 4.6 after the body's own: the key must be registered to the requester (the given
   * customer, or for pix-key/transfer any known customer), whose KYC is approved, and whose bank does
   * not refuse. An accepted transfer waits for the bank.
   */
  requestTransfer(request: TransferRequest): { ok: true; transfer: SandboxTransfer } | { ok: false; refusal: TransferRefusal } {
    const owner = this.customers.ownerOf(request.pixKey, request.pixKeyType);
    const requester = request.customerDocument === undefined ? owner : this.customers.byDocumentOf(request.customerDocument);
    if (!owner || !requester || owner !== requester) {
      return refuse(
        'key_owner_mismatch',
        request.customerDocument === undefined ? 'The key is not registered to a customer of this partner.' : 'The key does not belong to the customer.',
      );
    }
    if (owner.kyc !== 'approved') return refuse('kyc_not_approved', `The customer's KYC is ${owner.kyc}, not approved.`);
    if (owner.bank === 'refuses') return refuse('bank_refused', "The customer's bank refused the transfer.");

    const now = this.clock.now();
    const delaySeconds = owner.bank === 'late' ? this.bank.lateAnswerAfterSeconds : this.bank.answerAfterSeconds;
    const transfer: SandboxTransfer = {
      id: this.nextId++,
      externalReference: newReference(),
      operation: request.operation,
      value: request.value,
      pixKey: request.pixKey,
      pixKeyType: request.pixKeyType,
      customerDocument: normalizeDocument(owner.document),
      transactionId: request.transactionId ?? null,
      createdAt: now,
      updatedAt: now,
      status: PARTNER_STATUS.pending,
      bankAnswerAt: now + delaySeconds * 1000,
      bankAnswer: owner.bank === 'cancels' ? 'canceled' : 'approved',
      end2end: null,
    };
    this.transfers.set(transfer.externalReference, transfer);
    return { ok: true, transfer };
  }

  /** Gives a pending transfer its final outcome now, as its bank would (control API). */
  settleTransfer(transfer: SandboxTransfer, outcome: WebhookOutcome): Outcome {
    const refused = this.finalReason(transfer.status, 'transfer');
    if (refused) return refused;
    const now = this.clock.now();
    transfer.status = outcome === 'approved' ? PARTNER_STATUS.approved : PARTNER_STATUS.canceled;
    transfer.updatedAt = now;
    if (outcome === 'approved') transfer.end2end = newEnd2EndId(now);
    this.webhooks.emit({
      kind: 'transfer',
      outcome,
      occurredAt: now,
      transaction: {
        id: transfer.id,
        externalReference: transfer.externalReference,
        value: transfer.value,
        transactionId: transfer.transactionId,
        end2end: transfer.end2end,
        createdAt: transfer.createdAt,
      },
    });
    return { ok: true };
  }

  /** Everything that is due by the sandbox clock, in the order it fell due. */
  settleDue(): void {
    const now = this.clock.now();
    const due: { at: number; settle: () => void }[] = [];
    for (const payment of this.payments.values()) {
      if (payment.status === PARTNER_STATUS.pending && now >= this.cancelsAt(payment)) {
        due.push({ at: this.cancelsAt(payment), settle: () => this.cancelPayment(payment) });
      }
    }
    for (const transfer of this.transfers.values()) {
      if (transfer.status === PARTNER_STATUS.pending && now >= transfer.bankAnswerAt) {
        due.push({ at: transfer.bankAnswerAt, settle: () => this.settleTransfer(transfer, transfer.bankAnswer) });
      }
    }
    due.sort((a, b) => a.at - b.at).forEach((item) => item.settle());
  }

  private finishPayment(payment: SandboxPayment, outcome: WebhookOutcome): void {
    const now = this.clock.now();
    payment.status = outcome === 'approved' ? PARTNER_STATUS.approved : PARTNER_STATUS.canceled;
    payment.finalAt = now;
    this.webhooks.emit({
      kind: 'payment',
      outcome,
      occurredAt: now,
      transaction: paymentTransaction(payment),
    });
  }

  private finalReason(status: PartnerStatusCode, kind: 'payment' | 'transfer'): Outcome | null {
    if (status === PARTNER_STATUS.approved) return { ok: false, reason: `the ${kind} is already ${kind === 'payment' ? 'paid' : 'approved'}` };
    if (status === PARTNER_STATUS.canceled) return { ok: false, reason: `the ${kind} is canceled` };
    return null;
  }
}

function refuse(reason: TransferRefusal['reason'], message: string): { ok: false; refusal: TransferRefusal } {
  return { ok: false, refusal: { reason, message } };
}

function newReference(): string {
  return randomUUID().replaceAll('-', '');
}

/**
 * A Pix end-to-end id: `E`, the paying institution's ISPB (8 digits; the sandbox's is made up),
 * yyyyMMddHHmm in UTC, and 11 letters and digits.
 */
function newEnd2EndId(now: number): string {
  const stamp = new Date(now).toISOString().replace(/\D/g, '').slice(0, 12);
  return `E99999999${stamp}${randomBytes(8).toString('hex').slice(0, 11)}`;
}

/** A payment as a webhook's transaction names it. */
function paymentTransaction(payment: SandboxPayment) {
  // `end2end` is not used for payments (spec 2.1).
  return {
    id: payment.id,
    externalReference: payment.externalReference,
    value: payment.value,
    transactionId: payment.transactionId,
    end2end: null,
    createdAt: payment.createdAt,
  };
}
