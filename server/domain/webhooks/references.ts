/**
 * Which transaction a notification is about, when it names it by another reference than the
 * partner's `external_reference` (partner/notification.ts): the `transaction_id` we sent with the
 * create, which partners also call `txid`. The intake and the processor both ask here, so a stored
 * notification taken up again after a restart is matched as the first time.
 */
import type { PartnerNotification } from '../../partner/notification.ts';
import type { Store } from '../../store/store.ts';

/**
 * The notification naming the transaction by its `external_reference` (as the rest of the proxy
 * follows it); null when the other reference it names is none of ours. The kind is the stored
 * transaction's: we know what our transaction id belongs to.
 */
export async function byExternalReference(store: Store, event: PartnerNotification): Promise<PartnerNotification | null> {
  if (event.referenceField === 'external_reference') return event;
  const found = await store.payments.findByTransactionId(event.reference);
  return found ? { ...event, reference: found.reference, referenceField: 'external_reference', kind: found.kind } : null;
}
