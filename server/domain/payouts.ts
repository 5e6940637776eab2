/**
 * Payouts and refunds the proxy starts at the partner service (spec 4.6), for the merchant's server
 * (routes/payouts.ts) and the command line: the same code for both.
 *
 * Money safety, in order:
 * - A payout is stored, under its idempotency key, before the partner is called: the same key asks
 *   for the same payout again and gets it back; the same key with another request is refused.
 * - A refund's check of what is left to refund and its insert are one store transaction, so
 *   concurrent refunds never take more than the checkout was paid.
 * - The partner is called once. When its answer is lost (a timeout, a dropped connection, a 5xx, an
 *   answer that cannot be read), the payout is `unknown`: it may have been carried out, so it is never
 *   sent again; an operator checks with the partner. When the call surely did not reach it (it could
 *   not be reached, the token was refused), the payout is forgotten and the same key may try again.
 * - Its outcome follows the transfer's (webhooks, the reconciler: transfers.ts), and reaches the
 *   merchant's webhook as `transfer.approved` / `transfer.canceled`; a refusal up front as `transfer.refused`.
 */
import { createHash } from 'node:crypto';
import type { CreateRefundRequest, CreateTransferRequest } from '../../src/shared/contract.ts';
import { formatReais } from '../../src/shared/limits.ts';
import { TRANSFER_REFUSALS, maskPixKey, type TransferList, type TransferStatus, type TransferView } from '../../src/shared/payouts.ts';
import { detectPixKeyType, type PixKeyType } from '../../src/shared/pix-keys.ts';
import type { Logger } from '../log.ts';
import { isStatedTransferRefusal, type PartnerClient } from '../partner/client.ts';
import { PartnerError } from '../partner/errors.ts';
import { PARTNER_STATUS } from '../partner/wire.ts';
import type { PayoutRecord, PayoutState, Store } from '../store/store.ts';
import type { DisputeService } from './disputes.ts';
import { DomainError } from './errors.ts';
import { refusalOutcome, transferOutcome, type Outcomes } from './outcomes.ts';
import type { StatusNumbering } from './numbering/status-numbering.ts';
import type { TransferService } from './transfers.ts';
import { ERASED } from './personal-data.ts';
import { CRYPTO_RANDOM, type RandomSource, type Runtime } from '../runtime/runtime.ts';

export interface PayoutServiceOptions {
  store: Store;
  partner: PartnerClient;
  transfers: TransferService;
  outcomes: Outcomes;
  numbering: StatusNumbering;
  now: () => number;
  /** Where payout ids and transaction ids come from (default the real randomness). */
  runtime?: Pick<Runtime, 'random'>;
  log: Logger;
  /** Brings a checkout's payment status up to date before a refund is weighed (CheckoutService.get). */
  refreshCheckout: (checkoutId: string) => Promise<unknown>;
  /** A payout still `sending` this long after it was stored was cut off mid-call (a crash): its outcome is unknown. Default 5 minutes. */
  sendingTimeoutMs?: number;
  /** A checkout with an open dispute is not refunded until an operator resolves it. */
  disputes: DisputeService;
}

/** `tr_` and 24 URL-safe characters (144 random bits). */
export function newTransferId(random: RandomSource = CRYPTO_RANDOM): string {
  return `tr_${random.bytes(18).toString('base64url')}`;
}

/** A list cursor: the last row's position, opaque to the caller. */
const cursorOf = (seq: number): string => Buffer.from(`s${seq}`).toString('base64url');
function positionOf(cursor: string): number {
  const match = /^s(\d{1,15})$/.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  if (!match) throw new DomainError('invalid', 'cursor is not one this server gave.', { cursor: 'must be a cursor from a previous page' });
  return Number(match[1]);
}

/** What a request asked for, in a stable form (keys sorted), hashed: the same key must ask the same. */
function requestHash(operation: string, checkoutId: string | null, body: Record<string, unknown>): string {
  const sorted = Object.fromEntries(
    Object.entries(body)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : 1)),
  );
  return createHash('sha256')
    .update(JSON.stringify({ operation, checkoutId, body: sorted }))
    .digest('hex');
}

/** What the merchant's server sees of a payout: the key masked, the document never. */
export function payoutView(p: PayoutRecord): TransferView {
  const view: TransferView = {
    transfer_id: p.id,
    status: p.state === 'sending' ? 'pending' : p.state,
    value: p.valueCents / 100,
    // An erased key (retention, a data subject's request) reads `erased`.
    pix_key: p.pixKey === ERASED ? ERASED : maskPixKey(p.pixKey, p.pixKeyType as PixKeyType | null),
    pix_key_type: p.pixKeyType as PixKeyType | null,
    reference: p.merchantReference,
    checkout_id: p.checkoutId,
    partner_reference: p.reference,
    transaction_id: p.transactionId,
    created_at: new Date(p.createdAt).toISOString(),
    updated_at: new Date(p.updatedAt).toISOString(),
  };
  if (p.reason !== null) view.reason = p.reason;
  if (p.reasonMessage !== null) view.reason_message = p.reasonMessage;
  return view;
}

const STATES_OF: Record<TransferStatus, readonly PayoutState[]> = {
  pending: ['sending', 'pending'],
  approved: ['approved'],
  canceled: ['canceled'],
  refused: ['refused'],
  unknown: ['unknown'],
};

export class PayoutService {
  private readonly sendingTimeoutMs: number;
  private readonly random: RandomSource;

  constructor(private readonly options: PayoutServiceOptions) {
    this.sendingTimeoutMs = options.sendingTimeoutMs ?? 5 * 60_000;
    this.random = options.runtime?.random ?? CRYPTO_RANDOM;
  }

  /** A transfer to a Pix key; with `customer_document`, solicited for that customer. */
  async transfer(input: CreateTransferRequest, idempotencyKey: string): Promise<{ transfer: TransferView; created: boolean }> {
    return this.start(this.record(input, idempotencyKey, null, requestHash('transfer', null, input)), input.customer_document ?? null);
  }

  /**
   * A refund of a paid checkout to the customer's key: a new transfer, never more than was paid in
   * all. `label` is its reference (the proxy's own refunds: `overpayment`).
   */
  async refund(checkoutId: string, input: CreateRefundRequest, idempotencyKey: string, label?: string): Promise<{ transfer: TransferView; created: boolean }> {
    const checkout = await this.options.store.checkouts.get(checkoutId);
    if (!checkout) throw new DomainError('not_found', 'No such checkout.');
    // A payment the partner has been paid but the proxy has not heard of yet counts: ask before
    // weighing. A partner that cannot answer now leaves what the store knows.
    await this.options.refreshCheckout(checkoutId).catch((error: unknown) => {
      this.options.log.warn(
        { checkout_id: checkoutId, err: { message: error instanceof Error ? error.message : String(error) } },
        "a refund weighed the checkout's payments as stored: the partner could not be asked",
      );
    });
    // What was paid is in dispute (an authenticated notification contradicts a final status): an operator decides first.
    if (await this.options.disputes.disputed(checkoutId)) {
      throw new DomainError(
        'disputed',
        "This checkout's payment is disputed: the partner's notification contradicts its final status. Refunds wait until an operator resolves it (pix-checkout disputes).",
      );
    }
    const record = this.record({ ...input, value: input.value ?? 0, reference: label }, idempotencyKey, checkoutId, requestHash('refund', checkoutId, input));
    return this.start(record, input.customer_document ?? null);
  }

  async get(id: string): Promise<TransferView> {
    const payout = /^tr_[A-Za-z0-9_-]{24}$/.test(id) ? await this.options.store.payouts.get(id) : null;
    if (!payout) throw new DomainError('not_found', 'No such transfer.');
    return payoutView(payout);
  }

  /** Newest first, `limit` a page (default 20), `cursor` from the previous page's `next_cursor`. */
  async list(query: { status?: TransferStatus | undefined; cursor?: string | undefined; limit?: number | undefined }): Promise<TransferList> {
    const limit = query.limit ?? 20;
    const before = query.cursor === undefined ? undefined : positionOf(query.cursor);
    const { payouts } = await this.options.store.payouts.list({
      states: query.status ? STATES_OF[query.status] : undefined,
      before,
      limit: limit + 1,
    });
    const page = payouts.slice(0, limit);
    return { data: page.map(payoutView), next_cursor: payouts.length > limit ? cursorOf(page[page.length - 1]!.seq) : null };
  }

  async refundsOf(checkoutId: string): Promise<TransferView[]> {
    return (await this.options.store.payouts.ofCheckout(checkoutId)).map(payoutView);
  }

  /** Payouts cut off mid-call by a crash become `unknown` (the reconciler calls this). Answers how many. */
  async expireSending(): Promise<number> {
    const { store, now, log } = this.options;
    const expired = await store.payouts.expireSending(now() - this.sendingTimeoutMs, now());
    for (const p of expired) {
      log.warn(
        { transfer_id: p.id, transaction_id: p.transactionId },
        'a transfer was cut off while it was being sent: its outcome is unknown; check with the partner by its transaction_id',
      );
    }
    return expired.length;
  }

  private record(input: CreateTransferRequest, idempotencyKey: string, checkoutId: string | null, hash: string): PayoutRecord {
    const at = this.options.now();
    return {
      id: newTransferId(this.random),
      idempotencyKey,
      requestHash: hash,
      kind: input.customer_document !== undefined ? 'customer' : 'key',
      checkoutId,
      valueCents: Math.round(input.value * 100),
      pixKey: input.pix_key,
      pixKeyType: input.pix_key_type ?? detectPixKeyType(input.pix_key),
      customerDocument: input.customer_document ?? null,
      merchantReference: input.reference ?? null,
      transactionId: this.random.uuid(),
      state: 'sending',
      reference: null,
      reason: null,
      reasonMessage: null,
      createdAt: at,
      updatedAt: at,
    };
  }

  private async start(record: PayoutRecord, document: string | null): Promise<{ transfer: TransferView; created: boolean }> {
    const { store } = this.options;
    const stored = await store.payouts.create(record, PARTNER_STATUS.approved);
    if ('problem' in stored) {
      if (stored.problem === 'not_paid') throw new DomainError('not_paid', 'This checkout has not been paid: there is nothing to refund.');
      const left = stored.refundableCents / 100;
      throw new DomainError(
        'refund_exceeds',
        left > 0 ? `At most ${formatReais(left)} of this checkout can still be refunded.` : 'This checkout has been refunded in full.',
        { value: left > 0 ? `must be at most ${formatReais(left)}` : 'nothing is left to refund' },
      );
    }
    if (!stored.created) {
      if (stored.payout.requestHash !== record.requestHash) {
        throw new DomainError('idempotency_conflict', 'This Idempotency-Key was used for another request; use a new key for a new transfer.', {
          'Idempotency-Key': 'was used for another request',
        });
      }
      return { transfer: payoutView(stored.payout), created: false };
    }
    return { transfer: payoutView(await this.send(stored.payout, document)), created: true };
  }

  /** The one call to the partner, and what its answer (or its absence) makes of the payout. */
  private async send(payout: PayoutRecord, document: string | null): Promise<PayoutRecord> {
    const { store, partner, now, log, outcomes, numbering } = this.options;
    const value = payout.valueCents / 100;
    let answer;
    try {
      answer =
        document !== null
          ? await partner.solicitTransferForCustomer({
              customer_document: document,
              value,
              pix_key: payout.pixKey,
              pix_key_type: (payout.pixKeyType ?? 'EMAIL') as PixKeyType,
              transaction_id: payout.transactionId,
            })
          : await partner.transferToKey({ value, pix_key: payout.pixKey, transaction_id: payout.transactionId });
    } catch (error) {
      const context = { transfer_id: payout.id, transaction_id: payout.transactionId };
      // Only a refusal the partner states (invalid data, KYC, the bank) says no money moved.
      if (error instanceof PartnerError && isStatedTransferRefusal(error)) {
        const reason = (TRANSFER_REFUSALS as readonly string[]).includes(error.details.reason ?? '') ? error.details.reason! : 'refused';
        const refused = await store.payouts.markRefused(payout.id, reason, error.details.upstreamMessage ?? null, now(), refusalOutcome);
        log.info({ ...context, reason }, 'the partner refused a transfer');
        outcomes.published(refused.outcome);
        return refused.payout;
      }
      // Any other answer of the service (a 409, 423, 404, a firewall's 400...) says nothing of what it did.
      const answered = error instanceof PartnerError && (error.kind === 'refused' || error.kind === 'not_found');
      const surelyNotSent = error instanceof PartnerError && !answered && !error.details.outcomeUnknown && error.kind !== 'outcome_unknown';
      if (surelyNotSent) {
        // Nothing reached the partner: forget it, so the same key may try again.
        await store.payouts.discard(payout.id);
        throw error;
      }
      // It may have been carried out: never sent again.
      log.error(
        {
          ...context,
          ...(error instanceof PartnerError && error.details.status !== undefined ? { status: error.details.status } : {}),
          err: { message: error instanceof Error ? error.message : String(error) },
        },
        "a transfer's answer was lost: its outcome is unknown; check with the partner by its transaction_id before sending it again",
      );
      return store.payouts.markUnknown(payout.id, now());
    }
    const at = now();
    const sent = await store.payouts.markSent(
      payout.id,
      { reference: answer.externalReference, partnerStatus: PARTNER_STATUS.pending, final: false, valueCents: payout.valueCents, createdAt: at, updatedAt: at },
      transferOutcome,
    );
    if (sent.outcome) outcomes.published(sent.outcome);
    // The create's answer never tells the outcome (the spec: it comes later, by webhook or a check);
    // its code is pending by definition, which the transfers' own numbering checks. A status that
    // already reads final is only noted.
    if (answer.status) await numbering.observeFresh(answer.status, answer.externalReference, 'transfer');
    const meaning = numbering.meaning(answer.status, 'transfer');
    if (meaning === 'approved' || meaning === 'canceled') {
      log.warn(
        { transfer_id: payout.id, reference: answer.externalReference, status: answer.status?.code ?? answer.status?.word ?? null },
        "a new transfer's answer reads final: not applied; its outcome comes from a notification or a check",
      );
    }
    return sent.payout;
  }
}
