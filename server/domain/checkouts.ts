/**
 * Checkouts: the merchant's server fixes an order's amount; the browser, holding only the
 * checkout's opaque id, gets that checkout's payment. One live payment per checkout: asking again
 * returns it until it has expired, then a new one may be issued, up to `renewals` times.
 */
import { randomBytes } from 'node:crypto';
import type { CheckoutView, CreateCheckoutRequest, PaymentView } from '../../src/shared/contract.ts';
import { PartnerError } from '../partner/errors.ts';
import type { DisputeService } from './disputes.ts';
import { DomainError } from './errors.ts';
import type { PaymentService } from './payments.ts';
import type { PayoutService } from './payouts.ts';
import type { CheckoutRecord, Store } from '../store/store.ts';
import type { Logger } from '../log.ts';

export interface CheckoutServiceOptions {
  store: Store;
  payments: PaymentService;
  /** Lists a checkout's refunds in its view. */
  payouts?: PayoutService;
  /** Says `disputed: true` in its view while one of its payments is disputed. */
  disputes?: DisputeService;
  /** Payments that may be issued after a checkout's first one expires. */
  renewals: number;
  /** Where the hosted checkout sends the payer when the checkout names no callback. */
  defaultCallback?: string | undefined;
  now: () => number;
  log?: Logger;
}

/** 18 random bytes: 144 bits, 24 URL-safe characters. */
export function newCheckoutId(): string {
  return `co_${randomBytes(18).toString('base64url')}`;
}

export class CheckoutService {
  /**
   * One issuing at a time per checkout in this process: concurrent first calls share one payment,
   * never two QRs. Across instances the store decides (attachPayment): the first payment attached wins.
   */
  private readonly issuing = new Map<string, Promise<{ payment: PaymentView; created: boolean }>>();

  constructor(private readonly options: CheckoutServiceOptions) {}

  /** Creates the order's checkout, or answers the one it has; the same order with another value is a conflict. */
  async create(input: CreateCheckoutRequest): Promise<{ checkout: CheckoutView; created: boolean }> {
    const valueCents = Math.round(input.value * 100);
    const { checkout, created } = await this.options.store.createCheckout({
      id: newCheckoutId(),
      orderId: input.order_id,
      valueCents,
      description: input.description ?? null,
      name: input.name ?? null,
      document: input.document ?? null,
      callback: input.callback ?? null,
      paymentReference: null,
      renewalsUsed: 0,
      createdAt: this.options.now(),
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
        this.options.log?.warn(
          { checkout_id: checkout.id, error: error instanceof DomainError || error instanceof PartnerError ? error.kind : 'internal' },
          "a checkout's first payment could not be issued at creation: the page's first call will issue it",
        );
      }
      return { checkout: await this.view((await this.options.store.getCheckout(checkout.id)) ?? checkout), created };
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

  private async livePayment(id: string, renew: boolean): Promise<{ payment: PaymentView; created: boolean }> {
    const { payments, store, renewals } = this.options;
    const checkout = await this.find(id);
    let renewalsUsed = checkout.renewalsUsed;
    const renewable = (used: number) => used < renewals && payments.statusCodesTrusted();
    if (checkout.paymentReference) {
      const current = payments.view(await payments.record(checkout.paymentReference));
      if (current.status === 'paid') return { payment: current, created: false };
      if (current.status === 'pending' && !renew) return { payment: { ...current, renewable: renewable(renewalsUsed) }, created: false };
      // Before issuing another QR (the last one expired, or the customer asked for more time),
      // confirm with the partner that no code was paid, the current one included: a code can be paid
      // up to the last second, and an expired one until the partner cancels it an hour later.
      const paid = await this.paidPayment(checkout, 0);
      if (paid) return { payment: paid, created: false };
      // Under a status numbering not verified, a paid code may read as nothing: the last code may have
      // been paid, so no second one is offered until the setting is right (PIX_STATUS_CODES).
      if (!payments.statusCodesTrusted()) {
        throw new DomainError('status_unverified', "This checkout's payment cannot be confirmed right now, so no new code is issued; try again later.");
      }
      if (renewalsUsed >= renewals) {
        throw new DomainError('renewals_exhausted', "This checkout's payment expired and no new one may be issued; the merchant must create a new checkout.");
      }
      renewalsUsed++;
    }
    const input = {
      value: checkout.valueCents / 100,
      description: checkout.description ?? undefined,
      name: checkout.name ?? undefined,
      document: checkout.document ?? undefined,
      callback: checkout.callback ?? this.options.defaultCallback,
    };
    let record;
    try {
      record = await payments.issue(input, checkout.id);
    } catch (error) {
      // A payment whose creation has an unknown outcome was never shown to the customer, so it cannot
      // be paid: issue another at once (logged with its transaction_id by PaymentService).
      if (!(error instanceof PartnerError && error.kind === 'outcome_unknown')) throw error;
      record = await payments.issue(input, checkout.id);
    }
    // Made current only if no other issuer (another instance) made one current meanwhile: one code
    // shown per checkout, whichever instance the customer's requests reach.
    if (await store.attachPayment(checkout.id, record, renewalsUsed, checkout.paymentReference)) {
      return { payment: { ...payments.view(record), renewable: renewable(renewalsUsed) }, created: true };
    }
    const winner = await this.find(id);
    if (!winner.paymentReference) throw new DomainError('not_found', 'No such checkout.');
    const current = payments.view(await payments.record(winner.paymentReference));
    return { payment: { ...current, renewable: renewable(winner.renewalsUsed) }, created: false };
  }

  /** A paid payment among all the checkout's, asking the partner about records older than `maxAgeMs`. */
  private async paidPayment(checkout: CheckoutRecord, maxAgeMs?: number): Promise<PaymentView | null> {
    const { payments, store } = this.options;
    for (const stored of await store.checkoutPayments(checkout.id)) {
      // Asked now (maxAgeMs 0, before a new code is issued): never left to another instance's poll.
      const view = payments.view(stored.final ? stored : await payments.record(stored.reference, maxAgeMs, maxAgeMs === 0));
      if (view.status === 'paid') return view;
    }
    return null;
  }

  private async find(id: string): Promise<CheckoutRecord> {
    const checkout = await this.options.store.getCheckout(id);
    if (!checkout) throw new DomainError('not_found', 'No such checkout.');
    return checkout;
  }

  private async view(checkout: CheckoutRecord): Promise<CheckoutView> {
    const base = {
      checkout_id: checkout.id,
      order_id: checkout.orderId,
      value: checkout.valueCents / 100,
      renewals_left: Math.max(0, this.options.renewals - checkout.renewalsUsed),
      ...(this.options.payouts ? { refunds: await this.options.payouts.refundsOf(checkout.id) } : {}),
      ...((await this.options.disputes?.disputed(checkout.id)) ? { disputed: true } : {}),
    };
    if (!checkout.paymentReference) return { ...base, status: 'open' };
    let payment = await this.options.payments.read(checkout.paymentReference);
    // A renewed checkout is paid if any of its codes was (a late payment of an expired one).
    if (payment.status !== 'paid' && checkout.renewalsUsed > 0) payment = (await this.paidPayment(checkout)) ?? payment;
    return { ...base, status: payment.status, payment };
  }
}
