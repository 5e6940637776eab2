/**
 * Transfers the proxy follows: it learns of them from the partner's notifications (and, in time,
 * creates them), confirms each with the partner, and records its status. A final status is never
 * changed, and becoming final records the transfer's outcome event once.
 */
import type { Logger } from '../log.ts';
import type { PartnerClient } from '../partner/client.ts';
import { PartnerError } from '../partner/errors.ts';
import { PARTNER_STATUS, isFinalPartnerStatus } from '../partner/wire.ts';
import type { Store } from '../store/store.ts';
import { transferOutcome, type Outcomes } from './outcomes.ts';

export interface TransferServiceOptions {
  store: Store;
  partner: PartnerClient;
  outcomes: Outcomes;
  now: () => number;
  log: Logger;
}

export class TransferService {
  constructor(private readonly options: TransferServiceOptions) {}

  /**
   * Asks the partner about a transfer and records what it says (tracking it if new). Resolves to
   * whether it is final now, or null when the service does not know it under this account.
   */
  async confirm(reference: string): Promise<boolean | null> {
    let upstream;
    try {
      upstream = await this.options.partner.checkTransfer(reference);
    } catch (error) {
      if (error instanceof PartnerError && error.kind === 'not_found') return null;
      throw error;
    }
    return this.apply(reference, upstream.status, Math.round(upstream.value * 100));
  }

  /** Records a status the partner gave (tracking the transfer if new); true when it is final. */
  async apply(reference: string, partnerStatus: number, valueCents: number | null): Promise<boolean> {
    const { store, outcomes } = this.options;
    const now = this.options.now();
    await store.transfers.track({ reference, partnerStatus: PARTNER_STATUS.pending, final: false, valueCents, createdAt: now, updatedAt: now });
    const change = await store.transfers.updateStatus(reference, partnerStatus, isFinalPartnerStatus(partnerStatus), now, transferOutcome);
    const record = await store.transfers.get(reference);
    if (change.changed && record?.final) outcomes.published(change.outcome);
    return record?.final ?? false;
  }
}
