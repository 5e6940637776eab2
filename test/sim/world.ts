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
/** One code per meaning (the simulation's partner so far). */
type StatusCodes = Readonly<Record<'pending' | 'approved' | 'canceled', number>>;

export type Meaning = 'pending' | 'approved' | 'canceled';

/** How this run's partner speaks, and how the proxy is set up against it. */
export interface Behaviour {
  /** The partner's real numbering. */
  codes: StatusCodes;
  /** The proxy's PIX_STATUS_CODES. */
  setting: StatusCodes;
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
  expiresAt: number;
  status: Meaning;
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
  /**
   * Interleavings: the customer pays this code just after the proxy's next read of it answered
   * (pending); with `notified`, the partner's notification of it is handled before that read returns.
   */
  payAfterRead: { reference: string; notified: ((notice: PartnerNotice) => Promise<void>) | null } | null = null;
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

  /** The customer pays this code (if the partner still takes it: not canceled, not paid). */
  pay(reference: string, cents: number): boolean {
    const p = this.payments.get(reference);
    if (!p || p.status !== 'pending') return false;
    p.status = 'approved';
    p.paidAt = this.now();
    p.paidOrder = ++this.order;
    p.paidCents = cents;
    this.notify('payment', p.reference, 'approved', p.paidCents);
    return true;
  }

  /** The partner cancels every unpaid payment an hour after its expiry (spec 3). */
  tick(): void {
    for (const p of this.payments.values()) {
      if (p.status === 'pending' && this.now() >= p.expiresAt + 3_600_000) {
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

  /** The status as this partner writes it (its codes, words, or nothing). */
  statusField(meaning: Meaning): Record<string, unknown> {
    const { statusForm, codes } = this.behaviour;
    if (statusForm === 'none') return {};
    if (statusForm === 'word') return { status: meaning === 'approved' ? 'paid' : meaning === 'canceled' ? 'cancelled' : 'pending' };
    return { status: codes[meaning] };
  }

  private notify(kind: 'payment' | 'transfer', reference: string, outcome: 'approved' | 'canceled', cents: number): void {
    const id = `evt-${++this.noticeSeq}`;
    const fields = { external_reference: reference, ...this.statusField(outcome), value: cents / 100 };
    const format = this.behaviour.notifyFormat;
    const body =
      format === 'old'
        ? { type: kind, ...fields }
        : format === 'new'
          ? { id, event: `${kind}.${outcome}`, occurred_at: new Date(this.now()).toISOString(), data: { type: kind, ...fields } }
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
      status: 'pending',
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
        created_at: new Date(now).toISOString(),
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
    if (this.behaviour.createStatus && this.behaviour.statusForm !== 'none') this.freshSeen = true;
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
    const status = fault === 'no_status' ? {} : this.statusField(p.status);
    // A paid code read before the hour less 5 minutes proves the approved code (a payment of another amount proves nothing: it is flagged, not read).
    if (p.status === 'approved' && p.paidCents === p.valueCents && 'status' in status && this.now() < p.expiresAt + 55 * 60_000)
      this.approvedReadEarly.add(p.reference);
    // A read at the instant of the create (the proxy's read right after it) shows a new payment's code.
    if (p.status === 'pending' && 'status' in status && p.createdAt === this.now()) this.freshSeen = true;
    const value = (p.paidCents ?? p.valueCents) / 100;
    const { found: _found, ...read } = readPayment({
      data: { external_reference: p.reference, ...status, value, created_at: new Date(p.createdAt).toISOString(), type: 'payment' },
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
      this.settleTransfer(reference, 'approved');
      const notice = this.outgoing.pop()!;
      await during(notice);
    }
    if (this.behaviour.statusForm !== 'none') this.freshSeen = true;
    const { found: _found, ...read } = readTransfer({ data: { external_reference: reference, ...this.statusField('pending'), value, transaction_id: tx } });
    return { ...read, externalReference: reference };
  }

  async checkTransfer(externalReference: string): Promise<TransferDetails> {
    const fault = this.take('checkTransfer');
    if (fault === 'unavailable' || fault === 'timeout' || fault === 'unauthorized') throw readError('checkTransfer', fault);
    const t = this.transfers.get(externalReference);
    if (!t || fault === 'not_found') throw new PartnerError('not_found', 'checkTransfer: not found (HTTP 404)', { operation: 'checkTransfer', status: 404 });
    const status = fault === 'no_status' ? {} : this.statusField(t.status);
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
