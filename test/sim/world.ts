/**
 * The simulated partner: an in-process PartnerClient that holds the truth (which payment was really
 * paid, when and for how much; which was canceled; which transfers were created and how they ended)
 * and answers as the run's behaviour says (its status numbering, statuses as codes, words or none,
 * the notification format), with the faults the run arms (a lost answer after acting, 4xx, 5xx,
 * timeouts, a call that never returns). Its answers go through the proxy's own readers (read.ts), so
 * the proxy sees what it would see from the wire. Nothing here decides anything from real time or
 * Math.random: every choice comes from the commands fast-check drew.
 */
import { buildDynamicBrCode } from '../../src/shared/brcode.ts';
import type { CreatedPayment, PartnerClient, PaymentCheck, PaymentDetails, TransferDetails } from '../../server/partner/client.ts';
import { PartnerError } from '../../server/partner/errors.ts';
import { readPayment, readTransfer } from '../../server/partner/read.ts';
import { proofWindows } from '../../server/domain/numbering/status-numbering.ts';
import type { StatusCodes } from '../../server/partner/status-codes.ts';

export type Meaning = 'pending' | 'approved' | 'canceled';
/** What the partner's status shows, beyond the truth's three states: an expired code, a failed attempt, a return. */
export type Shown = Meaning | 'expired' | 'failed' | 'returned';

/**
 * The partner's real numbering: the spec's three codes always, and an expired, a returned and a
 * failed code when this partner has them (drawn from a wider space than the proxy assumes).
 */
export interface PartnerCodes {
  pending: number;
  approved: number;
  canceled: number;
  expired?: number;
  returned?: number;
  failed?: number;
}

/** How this run's partner speaks, and how the proxy is set up against it. */
export interface Behaviour {
  /** The partner's real numbering of payments. */
  codes: PartnerCodes;
  /** Whether a code past its expiration may still be paid (until the partner cancels it an hour later). */
  expiredPayable: boolean;
  /** The partner's numbering of transfers: the payments' own, or apart. */
  transferCodes: PartnerCodes;
  /** How far the partner's clock is off ours (its created_at and occurred_at), in ms (±10 min). */
  clockOffsetMs: number;
  /** The partner keeps its default expiration (3600 s), whatever the proxy asks. */
  ignoresExpiration: boolean;
  /** Seconds each code stays payable, as the proxy asks (PIX_EXPIRATION_SECONDS): shorter or longer than the partner's default hour. */
  expirationSeconds: number;
  /** The partner's notifications of a failed attempt say so in words (`payment.failed`). */
  failureWords: boolean;
  /** How the proxy's setting relates to the partner: every code right, the required right and some left out, the default, or the required swapped. */
  settingKind: 'right' | 'incomplete' | 'none' | 'wrong';
  /** The proxy's PIX_STATUS_CODES. */
  setting: StatusCodes;
  /** The proxy's PIX_TRANSFER_STATUS_CODES. */
  transferSetting: StatusCodes;
  /** Statuses in answers: numeric codes, words, or left out. */
  statusForm: 'code' | 'word' | 'none';
  /** Whether a create's answer carries the new payment's status. */
  createStatus: boolean;
  /** The spec's two formats (old: the record; new: an event around it), or a wrapper we never named. */
  notifyFormat: 'old' | 'new' | 'wrapped';
  /** The proxy's intake: behind a secret path (notifications are authenticated), or open to anyone. */
  intake: 'secret' | 'open';
  /** Renewals a checkout may use (PIX_RENEWALS). */
  renewals: number;
}

export const PAYMENT_FAULTS = ['lost', 'timeout_acted', 'timeout', 'unavailable', 'refused', 'unauthorized', 'hang'] as const;
export const READ_FAULTS = ['unavailable', 'timeout', 'unauthorized', 'not_found', 'no_status'] as const;
export const TRANSFER_FAULTS = ['lost', 'timeout_acted', 'timeout', 'unavailable', 'refused', 'unauthorized', 'conflict_acted', 'hang'] as const;
export type Fault = (typeof PAYMENT_FAULTS)[number] | (typeof READ_FAULTS)[number] | (typeof TRANSFER_FAULTS)[number];
export type FaultOp = 'createPayment' | 'getPayment' | 'createTransfer' | 'checkTransfer';

export interface TruthPayment {
  reference: string;
  transactionId: string;
  /** The checkout it was issued for (the sim's checkouts carry their tag in the description). */
  tag: string | null;
  valueCents: number;
  createdAt: number;
  /** When the code stops being payable as the proxy asked (its expiration from the create). */
  expiresAt: number;
  /** When the partner expires it: the expiration asked, or its default hour when it ignores it. */
  partnerExpiresAt: number;
  status: Meaning;
  /** A failed attempt to pay it (the code stays payable): the partner shows its failed code while pending. */
  failedAttempt: boolean;
  /** When the partner gave the money back after approval (a return); the truth stays approved. */
  returnedAt: number | null;
  /** When and how much the customer paid; `paidOrder` orders it among the partner's acts (one clock instant may hold several). */
  paidAt: number | null;
  paidOrder: number | null;
  /** Where its creation falls among the partner's acts. */
  createdOrder: number;
  paidCents: number | null;
  canceledAt: number | null;
}

export interface TruthTransfer {
  reference: string;
  transactionId: string;
  valueCents: number;
  status: Meaning;
  createdAt: number;
}

/** A notification the partner has sent or will send: delivered, dropped, repeated or reordered by the commands. */
export interface PartnerNotice {
  id: string;
  reference: string;
  body: string;
}

export interface SimViolation {
  invariant: string;
  message: string;
}

const TENANT = { id: 'tenant-sim', name: 'Sim Store' };

export class SimWorld implements PartnerClient {
  readonly payments = new Map<string, TruthPayment>();
  readonly transfers = new Map<string, TruthTransfer>();
  /** Transfers created per transaction_id (a payout is never sent twice: each at most 1). */
  readonly transferCreates = new Map<string, number>();
  /** Notifications sent and not yet delivered (delivered ones leave, unless kept for a duplicate). */
  readonly outgoing: PartnerNotice[] = [];
  /** Every notification ever sent, for spoofs and resends. */
  readonly sent: PartnerNotice[] = [];
  readonly faults: { op: FaultOp; fault: Fault }[] = [];
  /** Violations seen inside partner calls (a new code while an earlier one was paid). */
  readonly violations: SimViolation[] = [];
  /** References the proxy read while the truth said approved, before the hour after expiry less 5 minutes (evidence for the numbering). */
  readonly approvedReadEarly = new Set<string>();
  /** Whether a new payment's or transfer's status reached the proxy at its creation (evidence for a wrong pending code). */
  freshSeen = false;
  /** Whether a new payment's pending code reached the proxy as such (a create's answer, or a read at its creation): it verifies the pending code. */
  pendingSeen = false;
  /**
   * Interleavings: the customer pays this code just after the proxy's next read of it answered
   * (pending); with `notified`, the partner's notification of it is handled before that read returns.
   */
  payAfterRead: { reference: string; notified: ((notice: PartnerNotice) => Promise<void>) | null } | null = null;
  /** Interleavings: the customer pays this code while the proxy's next read of it is in flight (the read answers paid). */
  payBeforeRead: { reference: string } | null = null;
  /** Interleavings: the next code shown is paid while the proxy's first read of it after it was shown is in flight. */
  payDuringFirstRead = false;
  /** Whether the customer has been shown this code (the harness knows: its checkouts' shown codes). */
  shownToCustomer: (reference: string) => boolean = () => true;
  /** References whose notification the proxy acknowledged at its authenticated intake. */
  readonly heardAuthenticated = new Set<string>();
  heard(body: string): void {
    const reference = /"external_reference":"([^"]+)"/.exec(body)?.[1];
    if (reference) this.heardAuthenticated.add(reference);
  }
  /** Transfers whose outcome (and notification) came before their create's answer. */
  readonly settledDuringCreate = new Set<string>();
  private readOnce = new Set<string>();
  /** Interleavings: the next transfer created is approved at once, its notification handled before the create answers. */
  settleDuringCreate: ((notice: PartnerNotice) => Promise<void>) | null = null;
  private seq = 0;
  private noticeSeq = 0;
  /** Counts the partner's acts (creates, payments), in the order they happened. */
  private order = 0;

  constructor(
    readonly behaviour: Behaviour,
    readonly now: () => number,
  ) {}

  // --- the truth, moved by the commands ---

  /** The customer pays this code (if the partner still takes it: not canceled, not paid, not expired where the partner stops taking expired codes). */
  pay(reference: string, cents: number): boolean {
    const p = this.payments.get(reference);
    if (!p || p.status !== 'pending') return false;
    if (this.behaviour.codes.expired !== undefined && !this.behaviour.expiredPayable && this.now() >= p.partnerExpiresAt) return false;
    p.status = 'approved';
    p.paidAt = this.now();
    p.paidOrder = ++this.order;
    p.paidCents = cents;
    this.notify('payment', p.reference, 'approved', p.paidCents);
    return true;
  }

  /** A failed attempt to pay this code: it stays payable; the partner shows its failed code, and may say so in words. */
  failAttempt(reference: string): boolean {
    const p = this.payments.get(reference);
    if (!p || p.status !== 'pending') return false;
    p.failedAttempt = true;
    if (this.behaviour.failureWords) {
      const id = `evt-${++this.noticeSeq}`;
      const body = {
        id,
        event: 'payment.failed',
        occurred_at: this.partnerTime(this.now()),
        data: { type: 'payment', external_reference: reference, ...this.statusField(this.shown(p)), value: p.valueCents / 100 },
      };
      const notice = { id, reference, body: JSON.stringify(body) };
      this.outgoing.push(notice);
      this.sent.push(notice);
    }
    return true;
  }

  /** The partner gives a paid payment's money back (a return): its reads show the returned code, where it has one. */
  giveBack(reference: string): boolean {
    const p = this.payments.get(reference);
    if (!p || p.status !== 'approved' || p.returnedAt !== null) return false;
    p.returnedAt = this.now();
    return true;
  }

  /** What the partner's status shows for a payment now. */
  shown(p: TruthPayment): Shown {
    const { codes } = this.behaviour;
    if (p.status === 'approved') return p.returnedAt !== null ? 'returned' : 'approved';
    if (p.status === 'canceled') return 'canceled';
    if (this.now() >= p.partnerExpiresAt) return 'expired';
    if (p.failedAttempt && codes.failed !== undefined) return 'failed';
    return 'pending';
  }

  /** A time as the partner writes it: its own clock, off ours by clockOffsetMs. */
  partnerTime(ms: number): string {
    return new Date(ms + this.behaviour.clockOffsetMs).toISOString();
  }

  /** The partner cancels every unpaid payment an hour after its own expiry (spec 3). */
  tick(): void {
    for (const p of this.payments.values()) {
      if (p.status === 'pending' && this.now() >= p.partnerExpiresAt + 3_600_000) {
        p.status = 'canceled';
        p.canceledAt = this.now();
        this.notify('payment', p.reference, 'canceled', p.valueCents);
      }
    }
  }

  settleTransfer(reference: string, outcome: 'approved' | 'canceled'): boolean {
    const t = this.transfers.get(reference);
    if (!t || t.status !== 'pending') return false;
    t.status = outcome;
    this.notify('transfer', t.reference, outcome, t.valueCents);
    return true;
  }

  arm(op: FaultOp, fault: Fault): void {
    this.faults.push({ op, fault });
  }

  healAll(): void {
    this.faults.length = 0;
  }

  /**
   * The status as this partner writes it (its codes, words, or nothing). A state it has no code for
   * shows as the one it falls back to: expired and failed as pending, returned as approved.
   */
  statusField(shown: Shown, kind: 'payment' | 'transfer' = 'payment'): Record<string, unknown> {
    const { statusForm } = this.behaviour;
    const codes = kind === 'payment' ? this.behaviour.codes : this.behaviour.transferCodes;
    if (statusForm === 'none') return {};
    if (statusForm === 'word') {
      const words: Record<Shown, string> = {
        pending: 'pending',
        approved: 'paid',
        canceled: 'cancelled',
        expired: 'expired',
        failed: 'failed',
        returned: 'returned',
      };
      return { status: words[shown] };
    }
    const code = codes[shown] ?? (shown === 'returned' ? codes.approved : codes.pending);
    return { status: code };
  }

  private notify(kind: 'payment' | 'transfer', reference: string, outcome: 'approved' | 'canceled', cents: number): void {
    const id = `evt-${++this.noticeSeq}`;
    const fields = { external_reference: reference, ...this.statusField(outcome, kind), value: cents / 100 };
    const format = this.behaviour.notifyFormat;
    const body =
      format === 'old'
        ? { type: kind, ...fields }
        : format === 'new'
          ? { id, event: `${kind}.${outcome}`, occurred_at: this.partnerTime(this.now()), data: { type: kind, ...fields } }
          : { event: `${kind}.${outcome}`, payload: { envelope: { transaction: { type: kind, ...fields } } } };
    const notice = { id, reference, body: JSON.stringify(body) };
    this.outgoing.push(notice);
    this.sent.push(notice);
  }

  private take(op: FaultOp): Fault | null {
    const at = this.faults.findIndex((f) => f.op === op);
    if (at === -1) return null;
    return this.faults.splice(at, 1)[0]!.fault;
  }

  // --- the PartnerClient the proxy calls ---

  async login(): Promise<void> {}

  async getTenant(): Promise<{ id: string; name: string | null }> {
    return TENANT;
  }

  async setNotificationUrl(input: { notification_url: string; notify_type?: number }) {
    return { notificationUrl: input.notification_url, notifyType: input.notify_type ?? null, confirmed: true };
  }

  async createPayment(input: Parameters<PartnerClient['createPayment']>[0]): Promise<CreatedPayment> {
    const fault = this.take('createPayment');
    const transactionId = input.transaction_id ?? `sim-tx-${this.seq + 1}`;
    const acts = fault === null || fault === 'lost' || fault === 'timeout_acted' || fault === 'hang';
    if (!acts) throw createError('createPayment', fault, transactionId);
    const now = this.now();
    const tag = input.description?.startsWith('sim ') ? input.description : null;
    const reference = `sim-pay-${++this.seq}`;
    const p: TruthPayment = {
      reference,
      transactionId,
      tag,
      valueCents: Math.round(input.value * 100),
      createdAt: now,
      expiresAt: now + (input.expiration ?? 86_400) * 1000,
      partnerExpiresAt: now + (this.behaviour.ignoresExpiration ? 3600 : (input.expiration ?? 3600)) * 1000,
      status: 'pending',
      failedAttempt: false,
      returnedAt: null,
      paidAt: null,
      paidOrder: null,
      createdOrder: ++this.order,
      paidCents: null,
      canceledAt: null,
    };
    this.payments.set(reference, p);
    if (fault === 'lost') throw createError('createPayment', 'unavailable', transactionId);
    if (fault === 'timeout_acted') throw createError('createPayment', 'timeout', transactionId);
    if (fault === 'hang') return new Promise<never>(() => {});
    const body = {
      data: {
        external_reference: reference,
        ...(this.behaviour.createStatus ? this.statusField('pending') : {}),
        value: input.value,
        created_at: this.partnerTime(now),
        pix_deposit: {
          external_reference: reference,
          pix_key: buildDynamicBrCode({
            locationUrl: `sim.example/qr/${reference}`,
            merchantName: 'SIM STORE',
            merchantCity: 'SAO PAULO',
            amount: input.value,
          }),
          qr_code_url: `https://sim.example/qr/${reference}.png`,
          checkout: `https://sim.example/pay/${reference}`,
          favoured: TENANT.name,
        },
      },
    };
    if (this.behaviour.createStatus && this.behaviour.statusForm !== 'none') this.freshSeen = this.pendingSeen = true;
    const read = readPayment(body);
    return {
      externalReference: read.externalReference!,
      pixKey: read.pixKey!,
      qrCodeUrl: read.qrCodeUrl,
      checkoutUrl: read.checkoutUrl,
      createdAt: read.createdAt,
      status: read.status,
      transactionId,
      favoured: read.favoured,
    };
  }

  async checkPayment(externalReference: string): Promise<PaymentCheck> {
    const p = this.payments.get(externalReference);
    if (!p) return { httpStatus: 404, hint: 'not_found' };
    return p.status === 'approved'
      ? { httpStatus: 200, hint: 'paid' }
      : p.status === 'canceled'
        ? { httpStatus: 410, hint: 'canceled' }
        : { httpStatus: 202, hint: 'pending' };
  }

  async getPayment(externalReference: string): Promise<PaymentDetails> {
    const fault = this.take('getPayment');
    if (fault === 'unavailable' || fault === 'timeout' || fault === 'unauthorized') throw readError('getPayment', fault);
    const p = this.payments.get(externalReference);
    if (!p || fault === 'not_found') throw new PartnerError('not_found', 'getPayment: not found (HTTP 404)', { operation: 'getPayment', status: 404 });
    // Only a code the customer has seen can be paid: the proxy's read before it shows a code is never overtaken.
    if (this.payDuringFirstRead && !this.readOnce.has(p.reference) && this.shownToCustomer(p.reference)) {
      this.payDuringFirstRead = false;
      this.pay(p.reference, p.valueCents);
    }
    if (this.shownToCustomer(p.reference)) this.readOnce.add(p.reference);
    const before = this.payBeforeRead;
    if (before?.reference === p.reference) {
      // Interleavings: the customer pays while the read is in flight; it answers paid.
      this.payBeforeRead = null;
      this.pay(p.reference, p.valueCents);
    }
    const status = fault === 'no_status' ? {} : this.statusField(this.shown(p));
    // A paid code read strictly before the earliest plausible expiry proves the approved code (status-numbering.ts; a payment of another amount proves nothing: it is flagged, not read).
    if (p.status === 'approved' && p.returnedAt === null && p.paidCents === p.valueCents && 'status' in status && this.now() < proofWindows(p).approvedBefore)
      this.approvedReadEarly.add(p.reference);
    // A read at the instant of the create (the proxy's read right after it) shows a new payment's code.
    if (p.status === 'pending' && 'status' in status && p.createdAt === this.now()) {
      this.freshSeen = true;
      if (this.shown(p) === 'pending') this.pendingSeen = true;
    }
    const value = (p.paidCents ?? p.valueCents) / 100;
    const { found: _found, ...read } = readPayment({
      data: { external_reference: p.reference, ...status, value, created_at: this.partnerTime(p.createdAt), type: 'payment' },
    });
    const after = this.payAfterRead;
    if (after?.reference === p.reference) {
      this.payAfterRead = null;
      if (this.pay(p.reference, p.valueCents) && after.notified) await after.notified(this.outgoing.pop()!);
    }
    // Who is being paid is left out: the proxy then never waits (in real time) to remember it.
    return { ...read, externalReference: p.reference, favoured: null };
  }

  async solicitTransferForCustomer(input: Parameters<PartnerClient['solicitTransferForCustomer']>[0]): Promise<TransferDetails> {
    return this.createTransfer(input.transaction_id, input.value);
  }

  async transferToKey(input: Parameters<PartnerClient['transferToKey']>[0]): Promise<TransferDetails> {
    return this.createTransfer(input.transaction_id, input.value);
  }

  private async createTransfer(transactionId: string | undefined, value: number): Promise<TransferDetails> {
    const fault = this.take('createTransfer');
    const tx = transactionId ?? `sim-ttx-${this.seq + 1}`;
    const acts = fault === null || fault === 'lost' || fault === 'timeout_acted' || fault === 'hang' || fault === 'conflict_acted';
    if (!acts) throw createError('createTransfer', fault, tx);
    const reference = `sim-tr-${++this.seq}`;
    const t: TruthTransfer = { reference, transactionId: tx, valueCents: Math.round(value * 100), status: 'pending', createdAt: this.now() };
    this.transfers.set(reference, t);
    this.transferCreates.set(tx, (this.transferCreates.get(tx) ?? 0) + 1);
    if (fault === 'lost') throw createError('createTransfer', 'unavailable', tx);
    if (fault === 'timeout_acted') throw createError('createTransfer', 'timeout', tx);
    if (fault === 'conflict_acted') throw createError('createTransfer', 'conflict', tx);
    if (fault === 'hang') return new Promise<never>(() => {});
    const during = this.settleDuringCreate;
    if (during) {
      this.settleDuringCreate = null;
      this.settledDuringCreate.add(reference);
      this.settleTransfer(reference, 'approved');
      const notice = this.outgoing.pop()!;
      await during(notice);
    }
    const { found: _found, ...read } = readTransfer({
      data: { external_reference: reference, ...this.statusField('pending', 'transfer'), value, transaction_id: tx },
    });
    return { ...read, externalReference: reference };
  }

  async checkTransfer(externalReference: string): Promise<TransferDetails> {
    const fault = this.take('checkTransfer');
    if (fault === 'unavailable' || fault === 'timeout' || fault === 'unauthorized') throw readError('checkTransfer', fault);
    const t = this.transfers.get(externalReference);
    if (!t || fault === 'not_found') throw new PartnerError('not_found', 'checkTransfer: not found (HTTP 404)', { operation: 'checkTransfer', status: 404 });
    const status = fault === 'no_status' ? {} : this.statusField(t.status, 'transfer');
    const { found: _found, ...read } = readTransfer({
      data: { external_reference: t.reference, ...status, value: t.valueCents / 100, transaction_id: t.transactionId },
    });
    return { ...read, externalReference: t.reference };
  }
}

/** The error the real client (server/partner/client.ts) throws for that failure of a create. */
function createError(operation: string, fault: Fault | 'conflict', transactionId: string): PartnerError {
  const unknown = { outcomeUnknown: true, transactionId };
  switch (fault) {
    case 'timeout':
      return new PartnerError('timeout', `${operation}: the partner service did not answer within 10000 ms`, { operation, ...unknown });
    case 'unavailable':
      return new PartnerError('unavailable', `${operation}: the partner service failed (HTTP 503)`, { operation, status: 503, ...unknown });
    case 'refused':
      return operation === 'createTransfer'
        ? new PartnerError('refused', `${operation}: refused (HTTP 422): key owner differs`, {
            operation,
            status: 422,
            reason: 'key_owner_mismatch',
            upstreamMessage: 'key owner differs',
          })
        : new PartnerError('refused', `${operation}: refused (HTTP 400)`, { operation, status: 400, upstreamMessage: 'invalid data' });
    case 'unauthorized':
      // A token refused even after the client's one new login: nothing was done (the next call may succeed).
      return new PartnerError('unauthorized', `${operation}: refused credentials (HTTP 401)`, { operation, status: 401 });
    case 'conflict':
      // A 409 the partner gave after it acted (a firewall's, a duplicate's): the real client reads any 4xx as a refusal.
      return new PartnerError('refused', `${operation}: refused (HTTP 409)`, { operation, status: 409, upstreamMessage: 'conflict' });
    default:
      return new PartnerError('unavailable', `${operation}: the partner service failed`, { operation, ...unknown });
  }
}

function readError(operation: string, fault: 'unavailable' | 'timeout' | 'unauthorized'): PartnerError {
  if (fault === 'unauthorized') return new PartnerError('unauthorized', `${operation}: refused credentials (HTTP 401)`, { operation, status: 401 });
  return fault === 'timeout'
    ? new PartnerError('timeout', `${operation}: the partner service did not answer within 10000 ms`, { operation })
    : new PartnerError('unavailable', `${operation}: the partner service failed (HTTP 503)`, { operation, status: 503 });
}
