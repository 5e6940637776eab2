// Type-checked (tsc, NodeNext) against the installed package's declarations. Every
// `@ts-expect-error` fails the check if the types it guards were missing (any) or wrong.
import { PixCheckout, PixPaidEvent } from 'pix-checkout';
import { PixCheckout as ElementClass } from 'pix-checkout/element';
import {
  CheckoutApiError,
  WebhookVerificationError,
  constructEvent,
  createApp,
  createCheckoutClient,
  createProxy,
  verifyWebhookSignature,
  webhookFetchHandler,
  webhookHandler,
  type OutcomeEvent,
} from 'pix-checkout-server';
import { startDevStack } from 'pix-checkout-server/sandbox';
import { LIMITS, PaymentView, type CheckoutView } from 'pix-checkout-server/shared';
import { LIMITS as BROWSER_LIMITS, type PaymentView as BrowserPaymentView } from 'pix-checkout/shared';

const element: PixCheckout = document.createElement('pix-checkout');
element.amount = 10.5;
// @ts-expect-error amount is a number
element.amount = 'ten';
element.addEventListener('pix-paid', (event) => {
  const paid: PixPaidEvent = event;
  const reference: string = paid.detail.payment.reference;
  // @ts-expect-error the detail is typed
  paid.detail.nothing.here;
  void reference;
});
const same: typeof ElementClass = PixCheckout;

const ok: boolean = verifyWebhookSignature('{}', 't=1,v1=00', 'secret');
// @ts-expect-error createApp needs a partner client and a store
createApp({});
const view: PaymentView = PaymentView.parse({});
const checkout: CheckoutView | null = null;
const max: number = LIMITS.paymentValue.max;
// The contract from either package is one contract.
const sameMax: typeof max = BROWSER_LIMITS.paymentValue.max;
const browserView: BrowserPaymentView = view;
const outcome = (event: OutcomeEvent): string => event.data.reference;

// The merchant's server: the typed client and the webhook in one call.
const pix = createCheckoutClient({ url: 'http://127.0.0.1:8787/api', apiKey: 'sandbox-api-key' });
const created: Promise<CheckoutView> = pix.checkouts.create({ value: 10, order_id: 'o-1' });
// @ts-expect-error a checkout needs its order_id
void pix.checkouts.create({ value: 10 });
const refund = pix.refunds.create('co_x', { pix_key: 'ana@cliente.example' }, { idempotencyKey: 'k-1' }).then((t) => t.transfer_id);
// @ts-expect-error a transfer's status is one of TRANSFER_STATUSES
void pix.transfers.list({ status: 'done' });
const failed = (error: unknown): string | undefined =>
  error instanceof CheckoutApiError ? `${error.code} ${error.status} ${error.idempotencyKey}` : undefined;
const event: OutcomeEvent = constructEvent('{}', { 'pix-checkout-signature': 't=1,v1=00' }, 'secret', { now: 0 });
const refusal = (error: unknown): 'missing_signature' | 'invalid_signature' | 'timestamp_out_of_window' | 'invalid_payload' | null =>
  error instanceof WebhookVerificationError ? error.code : null;
const onRequest: (request: Request) => Promise<Response> = webhookFetchHandler('secret', (e) => void e.data.transfer_id);
// @ts-expect-error onEvent receives a typed event
webhookHandler('secret', (e) => void e.data.nothing);
void [same, ok, view, sameMax, browserView, checkout, max, outcome, createProxy, startDevStack, created, refund, failed, event, refusal, onRequest];
