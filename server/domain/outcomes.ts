/**
 * The events the proxy passes on to the merchant (its webhook, the in-process emitter): one per final
 * outcome of a payment or a transfer, built here and only here. The store writes the event to its
 * outbox in the same transaction as the status change (it is handed the builder, it builds nothing),
 * and the same event then goes to in-process listeners. The id is derived from what happened (kind,
 * reference, outcome), so however the proxy learned it (a webhook, the reconciler, a browser's read,
 * after any number of restarts) the same outcome is the same event, and a receiver deduplicates on it.
 */
import { createHash } from 'node:crypto';
import { EventEmitter } from 'node:events';
import type { OutcomeEvent, OutcomeType } from '../../src/shared/contract.ts';
import type { Logger } from '../log.ts';
import { PARTNER_STATUS } from '../partner/wire.ts';
import type { DisputeRecord, PaymentRecord, PayoutLink, PayoutRecord, TransferRecord } from '../store/store.ts';

export type OutcomeKind = 'payment' | 'transfer';
export type { OutcomeEvent, OutcomeType } from '../../src/shared/contract.ts';

export function outcomeType(kind: OutcomeKind, partnerStatus: number): OutcomeType | null {
  if (partnerStatus === PARTNER_STATUS.approved) return kind === 'payment' ? 'payment.paid' : 'transfer.approved';
  if (partnerStatus === PARTNER_STATUS.canceled) return kind === 'payment' ? 'payment.canceled' : 'transfer.canceled';
  return null;
}

export function outcomeEventId(type: OutcomeType, reference: string): string {
  return `evt_${createHash('sha256').update(`${type}:${reference}`).digest('hex').slice(0, 32)}`;
}

/**
 * The envelope every outcome event shares: its id derived from its type and `key` (what happened, so
 * the same outcome is the same event however it was learned), its type, when, and what it says.
 */
function envelope(type: OutcomeType, key: string, at: number, data: OutcomeEvent['data']): OutcomeEvent {
  return { id: outcomeEventId(type, key), type, created_at: new Date(at).toISOString(), data };
}

export function outcomeEvent(
  kind: OutcomeKind,
  partnerStatus: number,
  subject: { reference: string; valueCents: number | null; checkoutId?: string | null; orderId?: string | null },
  at: number,
): OutcomeEvent | null {
  const type = outcomeType(kind, partnerStatus);
  if (!type) return null;
  return envelope(type, subject.reference, at, {
    reference: subject.reference,
    status: type.split('.')[1] as OutcomeEvent['data']['status'],
    value: subject.valueCents === null ? null : subject.valueCents / 100,
    checkout_id: subject.checkoutId ?? null,
    order_id: subject.orderId ?? null,
  });
}

/** The event of a payment that has just become final, as the store hands it over. */
export function paymentOutcome(payment: PaymentRecord, orderId: string | null): OutcomeEvent | null {
  return outcomeEvent(
    'payment',
    payment.partnerStatus,
    { reference: payment.reference, valueCents: payment.valueCents, checkoutId: payment.checkoutId, orderId },
    payment.updatedAt,
  );
}

/**
 * The event of a transfer that has just become final; a payout the proxy started names itself in it.
 * `relinked`: the same outcome told again, naming its payout, after the event told without it was
 * delivered (the partner's webhook came before the create's answer linked them). The
 * merchant deduplicates on the id, so it has its own (`<type>:<reference>#linked`): one more event.
 */
export function transferOutcome(transfer: TransferRecord, payout: PayoutLink | null = null, relinked = false): OutcomeEvent | null {
  const event = outcomeEvent(
    'transfer',
    transfer.partnerStatus,
    { reference: transfer.reference, valueCents: transfer.valueCents, checkoutId: payout?.checkoutId, orderId: payout?.orderId },
    transfer.updatedAt,
  );
  if (!event || !payout) return event;
  const linked = { ...event, data: { ...event.data, transfer_id: payout.transferId, transfer_reference: payout.merchantReference } };
  return relinked ? { ...linked, id: outcomeEventId(event.type, `${transfer.reference}#linked`) } : linked;
}

/**
 * The event of a payment for which the partner reported another value than ours (the record's
 * `reportedValueCents`): the merchant is told once per payment (the id is the reference's), and the
 * payment is never recorded paid while the values differ.
 */
export function amountMismatchOutcome(payment: PaymentRecord, orderId: string | null, at = payment.updatedAt): OutcomeEvent | null {
  if (payment.reportedValueCents == null) return null;
  const type = 'payment.amount_mismatch';
  return envelope(type, payment.reference, at, {
    reference: payment.reference,
    status: 'amount_mismatch',
    value: payment.valueCents / 100,
    reported_value: payment.reportedValueCents / 100,
    checkout_id: payment.checkoutId,
    order_id: orderId,
  });
}

/**
 * The event of money given back of a paid payment (domain/returns.ts): one per new returned total
 * (the id is the reference's and the total's), so a copy of a return is one event and a second
 * return is another. The payment stays paid: `status` says what happened since.
 */
export function returnOutcome(payment: PaymentRecord, orderId: string | null, at: number): OutcomeEvent | null {
  if (payment.returnedCents == null) return null;
  const type = 'payment.returned';
  return envelope(type, `${payment.reference}:${payment.returnedCents}`, at, {
    reference: payment.reference,
    status: 'returned',
    value: payment.valueCents / 100,
    returned_value: payment.returnedCents / 100,
    checkout_id: payment.checkoutId,
    order_id: orderId,
  });
}

/** What the proxy did about a checkout's extra payment (OutcomeEvent `refund`). */
export type OverpaymentRefund = 'off' | 'sent' | 'payer_key_unknown';

/**
 * The event of a checkout paid more than once. Its id is derived from the checkout and the paid
 * payments, so the same overpayment is one event however often it is seen, and a third payment is
 * a new one. `reference` is the latest paid payment; `references` all of them, oldest first.
 */
export function overpaidOutcome(
  checkout: { id: string; orderId: string; valueCents: number },
  paid: readonly PaymentRecord[],
  refund: OverpaymentRefund,
  at: number,
  transferId: string | null = null,
): OutcomeEvent {
  const type = 'checkout.overpaid';
  const references = paid.map((p) => p.reference);
  return envelope(type, `${checkout.id}:${references.join(',')}`, at, {
    reference: references[references.length - 1]!,
    status: 'overpaid',
    value: overpaidCents(checkout.valueCents, paid) / 100,
    checkout_id: checkout.id,
    order_id: checkout.orderId,
    references,
    refund,
    ...(transferId ? { transfer_id: transferId } : {}),
  });
}

/** What a checkout's paid payments brought in beyond its value, in cents (0 when paid once). */
export function overpaidCents(valueCents: number, paid: readonly PaymentRecord[]): number {
  return Math.max(0, paid.reduce((sum, p) => sum + p.valueCents, 0) - valueCents);
}

/**
 * The event of a payout refused up front. It has no partner reference: `reference` is its transfer
 * id, and the id is derived from it, so the refusal is one event however often it is told.
 */
export function refusalOutcome(payout: PayoutRecord, orderId: string | null): OutcomeEvent {
  const type = 'transfer.refused';
  return envelope(type, payout.id, payout.updatedAt, {
    reference: payout.id,
    status: 'refused',
    value: payout.valueCents / 100,
    checkout_id: payout.checkoutId,
    order_id: orderId,
    transfer_id: payout.id,
    transfer_reference: payout.merchantReference,
    reason: payout.reason ?? 'refused',
  });
}

/**
 * The event of a dispute just opened: a final payment an authenticated notification contradicts. Its
 * id is derived from the payment and the dispute's ordinal among the payment's disputes, so the same
 * dispute is one event however often the notification comes (and a later one, after an operator
 * resolved the first, is another).
 */
export function disputeOutcome(dispute: DisputeRecord, payment: PaymentRecord, orderId: string | null, ordinal: number): OutcomeEvent {
  const type = 'payment.disputed';
  const recorded = payment.partnerStatus === PARTNER_STATUS.approved ? 'paid' : 'canceled';
  return envelope(type, `${payment.reference}#${ordinal}`, dispute.openedAt, {
    reference: payment.reference,
    status: 'disputed',
    value: payment.valueCents / 100,
    checkout_id: payment.checkoutId,
    order_id: orderId,
    recorded_status: recorded,
    notified_status: dispute.notified === 'approved' ? 'paid' : 'canceled',
  });
}

/**
 * Where recorded outcomes go once the store has them: in-process listeners (`events`, `outcome`) and
 * whatever waits for new outbox rows (the merchant's deliveries). A listener that throws is logged,
 * never breaks the proxy.
 */
export class Outcomes {
  readonly events = new EventEmitter<{ outcome: [OutcomeEvent] }>();
  private readonly wakers = new Set<() => void>();

  constructor(private readonly log: Logger) {}

  /** Called after each recorded outcome (the merchant deliveries look for due rows). */
  onRecorded(wake: () => void): void {
    this.wakers.add(wake);
  }

  /** An outcome the store has committed (with its outbox row). */
  published(event: OutcomeEvent | null): void {
    for (const wake of this.wakers) wake();
    if (!event) return;
    try {
      this.events.emit('outcome', event);
    } catch (error) {
      this.log.error(
        { reference: event.data.reference, err: { message: error instanceof Error ? error.message : String(error) } },
        'an outcome listener threw',
      );
    }
  }
}
