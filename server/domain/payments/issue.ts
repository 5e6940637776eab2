/**
 * Issuing: creates a payment with the partner and returns its record, not yet stored (the caller
 * stores it, alone or attached to its checkout in one transaction). Each create carries our own
 * transaction_id, written to the store as an intent before the partner is asked (a store that cannot
 * take it answers 503 and the partner is never asked); one that fails is logged once by whoever
 * answers the customer (logFailedCreate). A payment the partner created that cannot be stored is kept
 * (unrecorded.ts): the caller hands it there on any failure before its record is stored.
 */
import type { Logger } from '../../log.ts';
import type { PartnerClient, PaymentDetails } from '../../partner/client.ts';
import { PARTNER_STATUS } from '../../partner/wire.ts';
import { withoutStoreBudget } from '../../store/deadline.ts';
import type { PaymentRecord, Store } from '../../store/store.ts';
import { logBrCodeWarnings } from '../brcode-warnings.ts';
import type { StatusNumbering } from '../numbering/status-numbering.ts';
import { PartnerError } from '../../partner/errors.ts';
import { rememberFavoured } from './reads.ts';
import type { UnrecordedPayments } from './unrecorded.ts';
import { CRYPTO_RANDOM, REAL_CLOCK, type Runtime } from '../../runtime/runtime.ts';

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
  /** Time, timers and chance: our transaction ids (default the real ones). */
  runtime?: Runtime | undefined;
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
    const transactionId = (this.options.runtime?.random ?? CRYPTO_RANDOM).uuid();
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
    // Our own send time, whatever the partner's created_at says: the partner counts the expiration
    // (and its cancellation hour) as a duration from when it got the request, so a partner clock
    // behind ours (or a created_at in the wrong zone) must not pull the hours by which the status
    // codes are judged (domain/numbering/status-numbering.ts) earlier, nor one ahead push the expiry shown later.
    const createdAt = sentAt;
    const expiresAt = createdAt + expirationSeconds * 1000;
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
      expiresAt,
      transactionId,
      updatedAt: now(),
      final: false,
      favoured: created.favoured,
    };
    try {
      logBrCodeWarnings(this.options.log, created.externalReference, created.pixKey);
      if (created.status) await numbering.observeFresh(created.status, created.externalReference);
      else if (numbering.needsFreshRead()) {
        // One read before the code is shown, while the pending code is not verified yet (a fresh
        // install's first payment): nobody can have paid a code not shown, so its status is as good as
        // the create's answer. A read after the code is shown could overtake the customer's payment (a
        // race of our own), so none is ever taken as a new payment's status.
        const details = await this.readBeforeShown(created.externalReference);
        if (details?.status) await numbering.observeFresh(details.status, created.externalReference);
        record.favoured ??= details?.favoured ?? null;
      }
    } catch (error) {
      // The partner created it: whatever failed here, the payment is kept until the store takes it.
      this.options.unrecorded.keep(record, error, { checkout_id: checkoutId });
      throw error;
    }
    // Who is being paid, when no answer said it yet: read in the background (the QR does not wait for it).
    if (record.favoured === null) withoutStoreBudget(() => void this.favouredRead(created.externalReference));
    return record;
  }

  /** A new payment's details, read before its code is shown; null when the read fails (logged: nothing is decided from it). */
  private async readBeforeShown(reference: string): Promise<PaymentDetails | null> {
    try {
      return await this.partner.getPayment(reference);
    } catch (error) {
      this.options.log.warn(
        { reference, err: { message: error instanceof Error ? error.message : String(error) } },
        'could not read a new payment to check the status codes',
      );
      return null;
    }
  }

  /** Who is being paid, read after the create's answer lacked it, and kept on the record. */
  private async favouredRead(reference: string): Promise<void> {
    try {
      const details = await this.partner.getPayment(reference);
      if (details.favoured !== null) await rememberFavoured(this.options.store, reference, details.favoured, this.options.runtime?.clock ?? REAL_CLOCK);
    } catch (error) {
      this.options.log.warn({ reference, err: { message: error instanceof Error ? error.message : String(error) } }, 'could not read a new payment');
    }
  }
}
