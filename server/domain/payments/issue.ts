/**
 * Issuing: creates a payment with the partner and returns its record, not yet stored (the caller
 * stores it, alone or attached to its checkout in one transaction). Each create carries our own
 * transaction_id, written to the store as an intent before the partner is asked (a store that cannot
 * take it answers 503 and the partner is never asked); one that fails is logged once by whoever
 * answers the customer (logFailedCreate). A payment the partner created that cannot be stored is kept
 * (unrecorded.ts): the caller hands it there on any failure before its record is stored.
 */
import { randomUUID } from 'node:crypto';
import type { Logger } from '../../log.ts';
import type { PartnerClient } from '../../partner/client.ts';
import { PARTNER_STATUS } from '../../partner/wire.ts';
import { withoutStoreBudget } from '../../store/deadline.ts';
import type { PaymentRecord, Store } from '../../store/store.ts';
import { logBrCodeWarnings } from '../brcode-warnings.ts';
import type { StatusNumbering } from '../status-numbering.ts';
import { PartnerError } from '../../partner/errors.ts';
import { rememberFavoured } from './reads.ts';
import type { UnrecordedPayments } from './unrecorded.ts';

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
  /** Where a payment the partner created and the store could not take is kept until it is recorded. */
  unrecorded: UnrecordedPayments;
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
    const valueCents = Math.round(input.value * 100);
    const { store } = this.options;
    // The intent first: whatever happens to the answer, the store knows a create was sent under this id.
    await store.intents.add({ transactionId, checkoutId, valueCents, createdAt: sentAt });
    let created;
    try {
      // A create that fails is logged once, by whoever answers the customer (logFailedCreate).
      created = await this.partner.createPayment({ ...input, expiration: expirationSeconds, transaction_id: transactionId });
    } catch (error) {
      // Surely not created (refused, or the request never left): nothing to reconcile.
      if (error instanceof PartnerError && !error.details.outcomeUnknown && error.kind !== 'outcome_unknown' && error.kind !== 'timeout') {
        withoutStoreBudget(() => void store.intents.forget(transactionId).catch(() => undefined));
      }
      throw error;
    }
    // Never later than the request left: a partner clock ahead of ours (or a created_at in the
    // wrong zone) must not push the expiry, and with it the hour before which a final code can only
    // be approved (domain/status-numbering.ts), past the partner's real cancellation.
    const createdAt = Math.min(created.createdAt ?? sentAt, sentAt);
    const record: PaymentRecord = {
      reference: created.externalReference,
      checkoutId,
      valueCents,
      description: input.description ?? null,
      partnerStatus: PARTNER_STATUS.pending,
      brcode: created.pixKey,
      qrCodeUrl: created.qrCodeUrl ?? '',
      checkoutUrl: created.checkoutUrl ?? '',
      createdAt,
      expiresAt: createdAt + expirationSeconds * 1000,
      transactionId,
      updatedAt: now(),
      final: false,
      favoured: created.favoured,
    };
    try {
      logBrCodeWarnings(this.options.log, created.externalReference, created.pixKey);
      if (created.status) await numbering.observeFresh(created.status, created.externalReference);
    } catch (error) {
      this.options.unrecorded.keep(record, error, { checkout_id: checkoutId });
      throw error;
    }
    // One read after the create, in the background, when its answer lacked the status the numbering
    // still needs or who is being paid: the first QR does not wait for it.
    if ((!created.status && numbering.needsFreshRead()) || created.favoured === null) withoutStoreBudget(() => void this.freshRead(created.externalReference));
    return record;
  }

  /** One read of a payment just created whose answer had no status: its code verifies the numbering. */
  private async freshRead(reference: string): Promise<void> {
    try {
      const details = await this.partner.getPayment(reference);
      if (details.status && this.options.numbering.needsFreshRead()) await this.options.numbering.observeFresh(details.status, reference);
      if (details.favoured !== null) await rememberFavoured(this.options.store, reference, details.favoured);
    } catch (error) {
      this.options.log.warn(
        { reference, err: { message: error instanceof Error ? error.message : String(error) } },
        'could not read a new payment to check the status codes',
      );
    }
  }
}
