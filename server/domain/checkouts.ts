/**
 * Checkouts: the merchant's server fixes an order's amount; the browser, holding only the
 * checkout's opaque id, gets that checkout's payment. One live payment per checkout: asking again
 * returns it until it has expired, then a new one may be issued, up to `renewals` times.
 */
import type { CheckoutView, CreateCheckoutRequest, PaymentView } from '../../src/shared/contract.ts';
import { LIMITS } from '../../src/shared/limits.ts';
import { PartnerError, logFailedCreate } from '../partner/errors.ts';
import { PARTNER_STATUS } from '../partner/wire.ts';
import type { DisputeService } from './disputes.ts';
import { DomainError } from './errors.ts';
import { overpaidCents } from './outcomes.ts';
import type { PaymentService } from './payments.ts';
import { DataKeyError, sealedCustomer, type PersonalDataCipher } from './personal-data.ts';
import type { CheckoutRecord, PaymentRecord } from '../store/store.ts';
import { Overpayments, isPaid, type OverpaymentOptions } from './checkouts/overpayments.ts';
import { CRYPTO_RANDOM, type RandomSource, type Runtime } from '../runtime/runtime.ts';

export interface CheckoutServiceOptions extends OverpaymentOptions {
  payments: PaymentService;
  /** Seals the customer's name and document at rest (PIX_DATA_KEY); without a key they are kept as given. */
  cipher: PersonalDataCipher;
  /** Says `disputed: true` in its view while one of its payments is disputed. */
  disputes: DisputeService;
  /** Payments that may be issued after a checkout's first one expires. */
  renewals: number;
  /** Where the hosted checkout sends the payer when the checkout names no callback. */
  defaultCallback?: string | undefined;
  runtime?: Pick<Runtime, 'random'>; // where checkout ids' randomness comes from (default the real one)
}

/** 18 random bytes: 144 bits, 24 URL-safe characters. */
export function newCheckoutId(random: RandomSource = CRYPTO_RANDOM): string {
  return `co_${random.bytes(18).toString('base64url')}`;
}

export class CheckoutService {
  /**
   * One issuing at a time per checkout in this process: concurrent first calls share one payment,
   * never two QRs. Across instances the store decides (attachPayment): the first payment attached wins.
   */
  private readonly issuing = new Map<string, Promise<{ payment: PaymentView; created: boolean }>>();

  /** Checkouts paid more than once: found, told once, refunded when the payer is known (checkouts/overpayments.ts). */
  private readonly overpayments: Overpayments;

  constructor(private readonly options: CheckoutServiceOptions) {
    this.overpayments = new Overpayments(options);
  }

  /** Creates the order's checkout, or answers the one it has; the same order with another value is a conflict. */
  async create(input: CreateCheckoutRequest): Promise<{ checkout: CheckoutView; created: boolean }> {
    const valueCents = Math.round(input.value * 100);
    // The earlier checkout of the order it replaces must be one of ours (its payments are then counted with this one's).
    if (input.replaces !== undefined && !(await this.options.store.checkouts.get(input.replaces))) {
      throw new DomainError('invalid', `replaces: no checkout ${input.replaces} here.`, { replaces: 'must be an existing checkout' });
    }
    const { checkout, created } = await this.options.store.checkouts.create({
      id: newCheckoutId(this.options.runtime?.random),
      orderId: input.order_id,
      valueCents,
      description: input.description ?? null,
      ...sealedCustomer(this.options.cipher, input.name ?? null, input.document ?? null),
      callback: input.callback ?? null,
      paymentReference: null,
      renewalsUsed: 0,
      createdAt: this.options.now(),
      ...(input.replaces !== undefined ? { replaces: input.replaces } : {}),
    });
    if (checkout.valueCents !== valueCents) {
      throw new DomainError(
        'conflict',
        `order_id ${input.order_id} already has a checkout of ${(checkout.valueCents / 100).toFixed(2)}; use a new order_id for another value.`,
        {
          order_id: 'already has a checkout with another value',
        },
      );
    }
    // Asked to issue the first payment now: the page's first call then reads it from the store. A
    // checkout that already has one (the same order again) keeps it. The checkout exists either way:
    // if the partner cannot issue it now, the page's first call tries again (the view says `open`).
    if (input.issue_payment === true && !checkout.paymentReference) {
      try {
        await this.payment(checkout.id);
      } catch (error) {
        const customer = "the checkout was answered without a payment (its first payment could not be issued at creation): the page's first call will issue it";
        if (!logFailedCreate(this.options.log, error, customer, { checkout_id: checkout.id })) {
          this.options.log.warn(
            { checkout_id: checkout.id, error: error instanceof DomainError || error instanceof PartnerError ? error.kind : 'internal' },
            "a checkout's first payment could not be issued at creation: the page's first call will issue it",
          );
        }
      }
      return { checkout: await this.view((await this.options.store.checkouts.get(checkout.id)) ?? checkout), created };
    }
    return { checkout: await this.view(checkout), created };
  }

  async get(id: string): Promise<CheckoutView> {
    return this.view(await this.find(id));
  }

  /**
   * The checkout's live payment, issuing one when there is none or the last one expired, or now when
   * `renew` asks for a new code before the current one expires ("need more time?"). Its view says
   * whether the checkout may still issue another (`renewable`).
   */
  payment(id: string, options: { renew?: boolean } = {}): Promise<{ payment: PaymentView; created: boolean }> {
    const pending = this.issuing.get(id);
    // A call that joins one under way gets the same payment, which it did not create.
    if (pending) return pending.then(({ payment }) => ({ payment, created: false }));
    const issuing = this.livePayment(id, options.renew === true).finally(() => this.issuing.delete(id));
    this.issuing.set(id, issuing);
    return issuing;
  }

  /** The checkout's live payment: the current code when it is the answer, else a new code issued and made current. */
  private async livePayment(id: string, renew: boolean): Promise<{ payment: PaymentView; created: boolean }> {
    const checkout = await this.find(id);
    const decided = checkout.paymentReference ? await this.answerOrRenew(checkout, checkout.paymentReference, renew) : { renewalsUsed: checkout.renewalsUsed };
    if ('answer' in decided) return { payment: decided.answer, created: false };
    const record = await this.issueCode(checkout);
    return this.makeCurrent(checkout, record, decided.renewalsUsed);
  }

  /** Whether one more code may follow after `used` renewals: renewals left, and a pending code's meaning verified. */
  private renewable(used: number): boolean {
    return used < this.options.renewals && this.options.payments.statusCodesTrusted();
  }

  /**
   * The first job: the current code (or an earlier one paid) when it is the answer; else, every code
   * confirmed unpaid, the renewal count a new code takes. Throws when no new code may be issued.
   */
  private async answerOrRenew(checkout: CheckoutRecord, reference: string, renew: boolean): Promise<{ answer: PaymentView } | { renewalsUsed: number }> {
    const { payments, store, renewals } = this.options;
    const { renewalsUsed } = checkout;
    const current = payments.views.view(await this.currentRecord(reference, renew));
    if (current.status === 'paid') return { answer: current };
    // An earlier code recorded paid (its late payment, heard by a webhook here or on another
    // instance) is the answer: never a pending code beside a paid checkout.
    const earlier = renewalsUsed > 0 ? (await store.checkouts.payments(checkout.id)).find(isPaid) : undefined;
    if (earlier) return { answer: payments.views.view(earlier) };
    if (current.status === 'pending' && !renew) return { answer: { ...current, renewable: this.renewable(renewalsUsed) } };
    // Before issuing another QR (the last one expired, or the customer asked for more time),
    // confirm with the partner that no code was paid, the current one included: a code can be paid
    // up to the last second, and an expired one until the partner cancels it an hour later.
    const exhausted = renewalsUsed >= renewals && payments.statusCodesTrusted();
    // The current code still payable and none may follow (renew asked early): told so, the code stays on screen.
    if (exhausted && renew && current.status === 'pending') {
      throw new DomainError('renewals_exhausted', 'No new code may be issued for this checkout; its current one can still be paid.');
    }
    let paid: PaymentView | null;
    try {
      paid = await this.confirmUnpaid(checkout, exhausted);
    } catch (error) {
      if (!(error instanceof DomainError && error.kind === 'status_unverified') || !exhausted) throw error;
      // No new code may be issued, and an earlier one may still be paid (the partner says pending until it
      // cancels it, an hour after expiry, or cannot say): never "expired" while it may be. The page
      // is asked to come back when the partner will have decided.
      throw new DomainError(
        'status_unverified',
        "This checkout's last code expired but may still be paid until the payment service cancels it; no new code may be issued. Ask again later.",
        undefined,
        this.untilDecided(await store.checkouts.payments(checkout.id)),
      );
    }
    if (paid) return { answer: paid };
    // Under a status numbering not verified, a paid code may read as nothing: the last code may have
    // been paid, so no second one is offered until the setting is right (PIX_STATUS_CODES).
    if (!payments.statusCodesTrusted()) {
      throw new DomainError('status_unverified', "This checkout's payment cannot be confirmed right now, so no new code is issued; try again later.");
    }
    if (renewalsUsed >= renewals) {
      throw new DomainError('renewals_exhausted', "This checkout's payment expired and no new one may be issued; the merchant must create a new checkout.");
    }
    return { renewalsUsed: renewalsUsed + 1 };
  }

  /**
   * The second job: a new code for the checkout from the partner, not yet stored. A creation whose
   * outcome is unknown was never shown to the customer, so it cannot be paid: another is issued at
   * once (the lost one logged with its transaction_id).
   */
  private async issueCode(checkout: CheckoutRecord): Promise<PaymentRecord> {
    const { payments, log } = this.options;
    const input = {
      value: checkout.valueCents / 100,
      description: checkout.description ?? undefined,
      ...this.customerOf(checkout),
      callback: checkout.callback ?? this.options.defaultCallback,
    };
    try {
      return await payments.issuer.issue(input, checkout.id);
    } catch (error) {
      if (!(error instanceof PartnerError && error.kind === 'outcome_unknown')) throw error;
      logFailedCreate(log, error, 'given another payment, issued at once', { checkout_id: checkout.id });
      return payments.issuer.issue(input, checkout.id);
    }
  }

  /**
   * The third job: the new code stored and made the checkout's current one, unless an earlier code
   * was paid meanwhile (that one is answered, the new one kept unshown) or another issuer made one
   * current first (that one is answered). Until its record is stored, the payment exists at the
   * partner only: any failure before then (the store locked, down, or slow past the request's
   * budget) hands it to the keeper, which logs it by reference and transaction_id and records it
   * when the store is back (payments/unrecorded.ts).
   */
  private async makeCurrent(checkout: CheckoutRecord, record: PaymentRecord, renewalsUsed: number): Promise<{ payment: PaymentView; created: boolean }> {
    const { payments, store, log } = this.options;
    let stored = false;
    const recording = {
      insertPayment: async (payment: PaymentRecord) => {
        await store.payments.insert(payment);
        stored = true;
      },
      attachPayment: async (...args: Parameters<typeof store.checkouts.attachPayment>) => {
        const attached = await store.checkouts.attachPayment(...args);
        stored = true;
        return attached;
      },
    };
    try {
      // The check and the issue are one decision: an earlier code paid after the check above but before
      // the new code existed (the customer paying the expired QR while the page asked for a new one)
      // is seen by asking again now, before the new code is shown to anyone. A code paid after this
      // read was paid after the new code existed: an overpayment, told as such (checkout.overpaid).
      if (checkout.paymentReference) {
        let paidBefore: PaymentView | null;
        try {
          paidBefore = await this.confirmUnpaid(checkout);
        } catch (error) {
          await recording.insertPayment(record);
          throw error;
        }
        if (paidBefore) {
          // Kept, never shown: the partner has it, and the reconciler follows it to its cancellation.
          await recording.insertPayment(record);
          log.info(
            { checkout_id: checkout.id, reference: paidBefore.reference, unused: record.reference },
            'an earlier code of the checkout was paid while a new one was issued: the paid one is answered, the new one never shown',
          );
          return { payment: paidBefore, created: false };
        }
      }
      // Made current only if no other issuer (another instance) made one current meanwhile, and no code
      // of the checkout was recorded paid since the check above (another instance's webhook): the check
      // and the issue are one decision, in the store's transaction. One code shown per checkout,
      // whichever instance the customer's requests reach, and none beside a paid one.
      if (await recording.attachPayment(checkout.id, record, renewalsUsed, checkout.paymentReference, PARTNER_STATUS.approved)) {
        return { payment: { ...payments.views.view(record), renewable: this.renewable(renewalsUsed) }, created: true };
      }
      const paidMeanwhile = (await store.checkouts.payments(checkout.id)).find(isPaid);
      if (paidMeanwhile) {
        log.info(
          { checkout_id: checkout.id, reference: paidMeanwhile.reference, unused: record.reference },
          'a code of the checkout was paid while a new one was issued: the paid one is answered, the new one never shown',
        );
        return { payment: payments.views.view(paidMeanwhile), created: false };
      }
      const winner = await this.find(checkout.id);
      if (!winner.paymentReference) throw new DomainError('not_found', 'No such checkout.');
      const current = payments.views.view(await payments.reads.record(winner.paymentReference));
      return { payment: { ...current, renewable: this.renewable(winner.renewalsUsed) }, created: false };
    } catch (error) {
      if (!stored) payments.unrecorded.keep(record, error, { checkout_id: checkout.id });
      throw error;
    }
  }

  /**
   * The checkout's current payment, refreshed. When the partner cannot be asked and the code is due
   * for replacement (expired, or `renew`), the stored record: the check before a new code then
   * answers (status_unverified), not the failed read.
   */
  private async currentRecord(reference: string, renew: boolean): Promise<PaymentRecord> {
    try {
      return await this.options.payments.reads.record(reference);
    } catch (error) {
      const stored = error instanceof PartnerError ? await this.options.store.payments.get(reference) : null;
      if (!stored || stored.final || (!renew && this.options.now() < stored.expiresAt)) throw error;
      return stored;
    }
  }

  /**
   * Before another code is issued: every code of the checkout, asked at the partner now (never left
   * to another instance's poll), must read as a known pending or canceled one. A paid one is the
   * answer; one that cannot be confirmed unpaid (a status whose meaning is not known, none, another
   * value, an unreadable answer, the partner down) may have been paid: 503 status_unverified.
   */
  private async confirmUnpaid(checkout: CheckoutRecord, canceledOnly = false): Promise<PaymentView | null> {
    const { payments, store } = this.options;
    const codes = await store.checkouts.payments(checkout.id);
    const states = await Promise.all(codes.map((p) => payments.reads.confirmNotPaid(p.reference)));
    const paid = codes.find((_, i) => states[i] === 'paid');
    if (paid) return payments.views.view(await payments.reads.record(paid.reference));
    // `canceledOnly` (no code may follow): a pending code may still be paid, so it is not unpaid for sure.
    const unknown = codes.find((_, i) => states[i] === 'unknown' || (canceledOnly && states[i] === 'pending'));
    if (unknown) {
      this.options.log.warn(
        { checkout_id: checkout.id, reference: unknown.reference },
        'no new code issued: an earlier code of the checkout could not be confirmed unpaid with the partner',
      );
      throw new DomainError('status_unverified', "This checkout's last code cannot be confirmed unpaid right now, so no new code is issued; try again later.");
    }
    return null;
  }

  /**
   * Seconds until the partner will have decided every code of the checkout not final yet (it cancels
   * an unpaid one `cancelAfterExpirationSeconds` after its expiry), plus a minute for its clock: at
   * least 30, at most an hour (a page asks again sooner if it likes).
   */
  private untilDecided(codes: readonly PaymentRecord[]): number {
    const open = codes.filter((p) => !p.final).map((p) => p.expiresAt + LIMITS.cancelAfterExpirationSeconds * 1000 + 60_000);
    const seconds = Math.ceil((Math.max(0, ...open) - this.options.now()) / 1000);
    return Math.min(3600, Math.max(30, seconds));
  }

  /**
   * The customer's name and document to send with a new code, opened. Erased (retention, a data
   * subject's request) or unopenable (PIX_DATA_KEY changed or lost): none, as the spec allows; the
   * code is issued all the same, and a key that does not open is logged, never the value.
   */
  private customerOf(checkout: CheckoutRecord): { name?: string; document?: string } {
    const { cipher } = this.options;
    try {
      const name = cipher.open(checkout.name);
      const document = cipher.open(checkout.document);
      return name !== null && document !== null ? { name, document } : {};
    } catch (error) {
      if (!(error instanceof DataKeyError)) throw error;
      this.options.log.error(
        { checkout_id: checkout.id, problem: error.message },
        "a checkout's customer data could not be opened: its code is issued without it",
      );
      return {};
    }
  }

  private async find(id: string): Promise<CheckoutRecord> {
    const checkout = await this.options.store.checkouts.get(id);
    if (!checkout) throw new DomainError('not_found', 'No such checkout.');
    return checkout;
  }

  private async view(checkout: CheckoutRecord): Promise<CheckoutView> {
    const base = {
      checkout_id: checkout.id,
      order_id: checkout.orderId,
      value: checkout.valueCents / 100,
      renewals_left: Math.max(0, this.options.renewals - checkout.renewalsUsed),
      ...(checkout.replaces ? { replaces: checkout.replaces } : {}),
      ...((await this.options.disputes.disputed(checkout.id)) ? { disputed: true } : {}),
    };
    // Listed last: an overpayment's refund, started below, is among them.
    const refunds = async () => ({ refunds: await this.options.payouts.refundsOf(checkout.id) });
    if (!checkout.paymentReference) return { ...base, ...(await refunds()), status: 'open' };
    const { payments, store } = this.options;
    let payment = await payments.read(checkout.paymentReference);
    // Every code of the checkout (read after the current one's refresh), each as fresh as a read
    // makes it: a checkout is paid if any of its codes was (a late payment of an expired one), and
    // never shown pending beside a paid code.
    const codes = await store.checkouts.payments(checkout.id);
    const records = await Promise.all(
      codes.map((p) => (p.final || p.reference === checkout.paymentReference ? Promise.resolve(p) : payments.reads.record(p.reference))),
    );
    const paid = records.filter(isPaid);
    if (payment.status !== 'paid' && paid.length > 0) payment = payments.views.view(paid[0]!);
    // Counted with the earlier checkouts of the order it replaces: paid there and here is paid twice.
    const paidOfOrder = checkout.replaces ? await this.overpayments.paidAcross(checkout, records) : paid;
    const extraCents = overpaidCents(checkout.valueCents, paidOfOrder);
    if (extraCents > 0) {
      await this.overpayments.report(checkout, paidOfOrder).catch((error: unknown) => {
        // Told at the next read: the view still says overpaid.
        this.options.log.warn(
          { checkout_id: checkout.id, err: { message: error instanceof Error ? error.message : String(error) } },
          "a checkout's overpayment could not be told now",
        );
      });
    }
    const mismatched = records.find((p) => p.reportedValueCents != null);
    const returned = records.filter((p) => p.returnedCents != null && p.returnedCents > 0);
    return {
      ...base,
      ...(await refunds()),
      status: payment.status,
      payment,
      ...(extraCents > 0 ? { overpaid: { value: extraCents / 100, references: paidOfOrder.map((p) => p.reference) } } : {}),
      ...(returned.length > 0
        ? { returned: { value: returned.reduce((sum, p) => sum + p.returnedCents!, 0) / 100, references: returned.map((p) => p.reference) } }
        : {}),
      ...(mismatched
        ? { amount_mismatch: { reference: mismatched.reference, value: mismatched.valueCents / 100, reported_value: mismatched.reportedValueCents! / 100 } }
        : {}),
    };
  }
}
