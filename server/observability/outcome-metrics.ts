/**
 * The outcome events (domain/outcomes.ts) as metrics: every event by type, payments and transfers
 * finalized by outcome, and the time from a payment's creation to it recorded paid. An event is
 * published by the instance that recorded it, once, so the instances' counts add up.
 */
import type { OutcomeEvent } from '../domain/outcomes.ts';
import type { Store } from '../store/store.ts';
import type { Metrics } from './metrics.ts';

/** The listener of `outcome` events that counts them into `metrics`. */
export function countOutcomes(metrics: Metrics, store: Store): (event: OutcomeEvent) => void {
  return (event) => {
    metrics.outcomeEvent(event.type);
    const [kind, status] = event.type.split('.') as [string, string];
    if (kind === 'transfer') return metrics.transferFinalized(status);
    if (kind !== 'payment' || !['paid', 'canceled', 'amount_mismatch'].includes(status)) return;
    if (status !== 'paid') return metrics.paymentFinalized(status);
    const reference = event.data.reference;
    const paidAt = Date.parse(event.created_at);
    const cached = store.payments.peek?.(reference);
    if (cached) return metrics.paymentFinalized('paid', paidAt - cached.createdAt);
    void store.payments.get(reference).then(
      (record) => metrics.paymentFinalized('paid', record ? paidAt - record.createdAt : undefined),
      () => metrics.paymentFinalized('paid'),
    );
  };
}
