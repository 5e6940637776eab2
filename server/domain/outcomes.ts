/**
 * The events the proxy passes on to the merchant (its webhook, the in-process emitter): one per final
 * outcome of a payment or a transfer. The id is derived from what happened (kind, reference,
 * outcome), so however the proxy learned it (a webhook, the reconciler, a browser's read, after any
 * number of restarts) the same outcome is the same event, and a receiver deduplicates on it.
 */
import { createHash } from 'node:crypto';
import type { OutcomeEvent, OutcomeType } from '../../src/shared/contract.ts';
import { PARTNER_STATUS } from '../partner/wire.ts';

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

export function outcomeEvent(
  kind: OutcomeKind,
  partnerStatus: number,
  subject: { reference: string; valueCents: number | null; checkoutId?: string | null; orderId?: string | null },
  at: number,
): OutcomeEvent | null {
  const type = outcomeType(kind, partnerStatus);
  if (!type) return null;
  return {
    id: outcomeEventId(type, subject.reference),
    type,
    created_at: new Date(at).toISOString(),
    data: {
      reference: subject.reference,
      status: type.split('.')[1] as OutcomeEvent['data']['status'],
      value: subject.valueCents === null ? null : subject.valueCents / 100,
      checkout_id: subject.checkoutId ?? null,
      order_id: subject.orderId ?? null,
    },
  };
}
