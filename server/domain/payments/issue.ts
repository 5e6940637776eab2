/**
 * Issuing: creates a payment with the partner and returns its record, not yet stored (the caller
 * stores it, alone or attached to its checkout in one transaction). Each create carries our own
 * transaction_id; one that fails is logged once by whoever answers the customer (logFailedCreate).
 */
import { randomUUID } from 'node:crypto';
import type { Logger } from '../../log.ts';
import type { PartnerClient } from '../../partner/client.ts';
import { PARTNER_STATUS } from '../../partner/wire.ts';
import type { PaymentRecord, Store } from '../../store/store.ts';
import { logBrCodeWarnings } from '../brcode-warnings.ts';
import type { StatusNumbering } from '../status-numbering.ts';
import { rememberFavoured } from './reads.ts';

/** What a payment is issued with; customer data comes from the merchant's server only. */
export interface IssueInput {
  value: number;
  description?: string | undefined;
  name?: string | undefined;
  document?: string | undefined;
  callback?: string | undefined;
}

export interface PaymentIssuerOptions {
  store: Store;
  /** Seconds each QR code stays payable; sent to the partner and stored as `expires_at`. */
  expirationSeconds: number;
  now: () => number;
  log: Logger;
  numbering: StatusNumbering;
}

export class PaymentIssuer {
  constructor(
    private readonly partner: PartnerClient,
    private readonly options: PaymentIssuerOptions,
  ) {}

  /**
   * Creates a payment with the partner and returns its record, not yet stored: the caller stores it
   * (alone, or attached to its checkout in one transaction).
   */
  async issue(input: IssueInput, checkoutId: string | null): Promise<PaymentRecord> {
    // Our own reference travels with the request, so an unknown outcome can be reconciled later.
    const transactionId = randomUUID();
    const { expirationSeconds, now, numbering } = this.options;
    // When the answer carries no creation time, the time the request left: the payment expires no later than shown.
    const sentAt = now();
    // A create that fails is logged once, by whoever answers the customer (logFailedCreate).
    const created = await this.partner.createPayment({ ...input, expiration: expirationSeconds, transaction_id: transactionId });
    logBrCodeWarnings(this.options.log, created.externalReference, created.pixKey);
    // Our own send time, whatever the partner's created_at says: the partner counts the expiration
    // (and its cancellation hour) as a duration from when it got the request, so a partner clock
    // behind ours (or a created_at in the wrong zone) must not pull the hours by which the status
    // codes are judged (domain/status-numbering.ts) earlier, nor one ahead push the expiry shown later.
    const createdAt = sentAt;
    const expiresAt = createdAt + expirationSeconds * 1000;
    if (created.status) await numbering.observeFresh(created.status, created.externalReference);
    // One read after the create, in the background, when its answer lacked the status the numbering
    // still needs or who is being paid: the first QR does not wait for it.
    if ((!created.status && numbering.needsFreshRead()) || created.favoured === null) void this.freshRead(created.externalReference, { createdAt, expiresAt });
    return {
      reference: created.externalReference,
      checkoutId,
      valueCents: Math.round(input.value * 100),
      description: input.description ?? null,
      partnerStatus: PARTNER_STATUS.pending,
      brcode: created.pixKey,
      qrCodeUrl: created.qrCodeUrl ?? '',
      checkoutUrl: created.checkoutUrl ?? '',
      createdAt,
      expiresAt,
      transactionId,
      updatedAt: now(),
      final: false,
      favoured: created.favoured,
    };
  }

  /**
   * One read of a payment just created whose answer had no status: a pending code verifies the
   * numbering; any other is judged as a read (the customer may have paid meanwhile: never a mismatch).
   */
  private async freshRead(reference: string, times: { createdAt: number; expiresAt: number }): Promise<void> {
    try {
      const askedAt = this.options.now();
      const details = await this.partner.getPayment(reference);
      if (details.status && this.options.numbering.needsFreshRead())
        await this.options.numbering.observeFresh(details.status, reference, 'payment', { ...times, askedAt, now: this.options.now() });
      if (details.favoured !== null) await rememberFavoured(this.options.store, reference, details.favoured);
    } catch (error) {
      this.options.log.warn(
        { reference, err: { message: error instanceof Error ? error.message : String(error) } },
        'could not read a new payment to check the status codes',
      );
    }
  }
}
