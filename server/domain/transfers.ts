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
import type { StatusNumbering } from './numbering/status-numbering.ts';

export interface TransferServiceOptions {
  store: Store;
  partner: PartnerClient;
  outcomes: Outcomes;
  now: () => number;
  log: Logger;
  numbering: StatusNumbering;
}

export class TransferService {
  constructor(private readonly options: TransferServiceOptions) {}

  /**
   * Asks the partner about a transfer and records what it says (tracking it if new). Resolves to
   * whether it is final now, or null when the service does not know it under this account.
   */
  async confirm(reference: string, explicit: 'approved' | 'canceled' | null = null): Promise<boolean | null> {
    let upstream;
    try {
      upstream = await this.options.partner.checkTransfer(reference);
    } catch (error) {
      if (error instanceof PartnerError && error.kind === 'not_found') return null;
      throw error;
    }
    // A check that answers with a payment's record (a partner whose check reads any transaction) is no transfer of ours.
    if (upstream.isPayment) return null;
    const { numbering, log } = this.options;
    await numbering.load();
    // Transfers have their own numbering (PIX_TRANSFER_STATUS_CODES), verified apart: the payments'
    // codes never settle a transfer. A code decides once verified; an authenticated notification's
    // words verify the code listed for their outcome, or decide where no code can, once the partner
    // no longer reports the transfer pending. A check contradicting the words is a mismatch of that
    // code (domain/numbering/status-numbering.ts): then neither is applied.
    let meaning = numbering.meaning(upstream.status, 'transfer');
    if (explicit !== null && meaning !== explicit) {
      const confirmed = numbering.confirmExplicit(explicit, upstream.status, reference, 'transfer');
      meaning = confirmed && meaning === null ? explicit : numbering.meaning(upstream.status, 'transfer');
    }
    const valueCents = upstream.value === null ? null : Math.round(upstream.value * 100);
    if (meaning !== 'approved' && meaning !== 'canceled') {
      // Pending, or not final (a failed attempt, an expired code): tracked, nothing settled.
      if (meaning === null || meaning === 'returned')
        log.warn(
          { reference, status: upstream.status?.code ?? upstream.status?.word ?? null, meaning },
          meaning === null
            ? 'a transfer status was not applied: its meaning is not known for sure'
            : 'a transfer reads returned: not applied (see the partner)',
        );
      await this.track(reference, valueCents, upstream.transactionId);
      return false;
    }
    return this.apply(reference, PARTNER_STATUS[meaning], valueCents, upstream.transactionId);
  }

  private async track(reference: string, valueCents: number | null, transactionId: string | null): Promise<void> {
    const now = this.options.now();
    await this.options.store.transfers.track({
      reference,
      partnerStatus: PARTNER_STATUS.pending,
      final: false,
      valueCents,
      createdAt: now,
      updatedAt: now,
      transactionId,
    });
  }

  /**
   * Records a status in the proxy's own numbering (PARTNER_STATUS), tracking the transfer if new; true
   * when it is final. `transactionId`, as the partner's record of it says: links it to the payout this
   * proxy sent with that id, even before the create's answer gave the payout its reference.
   */
  async apply(reference: string, partnerStatus: number, valueCents: number | null, transactionId: string | null = null): Promise<boolean> {
    const { store, outcomes } = this.options;
    const now = this.options.now();
    await store.transfers.track({ reference, partnerStatus: PARTNER_STATUS.pending, final: false, valueCents, createdAt: now, updatedAt: now, transactionId });
    const change = await store.transfers.updateStatus(reference, partnerStatus, isFinalPartnerStatus(partnerStatus), now, transferOutcome);
    const record = await store.transfers.get(reference);
    if (change.changed && record?.final) outcomes.published(change.outcome);
    return record?.final ?? false;
  }
}
