// Type-checked (tsc, NodeNext) against the installed package's declarations. Every
// `@ts-expect-error` fails the check if the types it guards were missing (any) or wrong.
import { PixCheckout, PixPaidEvent } from 'pix-checkout';
import { PixCheckout as ElementClass } from 'pix-checkout/element';
import { createApp, createProxy, verifyWebhookSignature, type OutcomeEvent } from 'pix-checkout/server';
import { startDevStack } from 'pix-checkout/sandbox';
import { LIMITS, PaymentView, type CheckoutView } from 'pix-checkout/shared';

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
const outcome = (event: OutcomeEvent): string => event.data.reference;
void [same, ok, view, checkout, max, outcome, createProxy, startDevStack];
