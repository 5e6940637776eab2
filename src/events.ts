/**
 * The widget's events: each bubbles and crosses shadow roots, with a typed, read-only detail. A page
 * may react to `pix-paid` in its interface, but must confirm the payment on its own server.
 */
import type { PaymentView } from './shared/contract.ts';
import type { PaymentStatus } from './shared/status.ts';

const init = { bubbles: true, composed: true } as const;

/** A payment was created (or resumed) and its code is on screen. */
export class PixCreatedEvent extends Event {
  static readonly type = 'pix-created';
  constructor(readonly detail: { payment: PaymentView }) {
    super(PixCreatedEvent.type, init);
  }
}

/** The payment's status changed, e.g. pending -> paid. */
export class PixStatusChangeEvent extends Event {
  static readonly type = 'pix-status-change';
  constructor(readonly detail: { payment: PaymentView; previous: PaymentStatus }) {
    super(PixStatusChangeEvent.type, init);
  }
}

/** The payment is paid, as the proxy reported it. */
export class PixPaidEvent extends Event {
  static readonly type = 'pix-paid';
  constructor(readonly detail: { payment: PaymentView }) {
    super(PixPaidEvent.type, init);
  }
}

/** Something failed: `code` is the proxy's error code, or `network` / `bad_response`. */
export class PixErrorEvent extends Event {
  static readonly type = 'pix-error';
  constructor(readonly detail: { code: string; message: string; fields?: Record<string, string> }) {
    super(PixErrorEvent.type, init);
  }
}

declare global {
  interface GlobalEventHandlersEventMap {
    'pix-created': PixCreatedEvent;
    'pix-status-change': PixStatusChangeEvent;
    'pix-paid': PixPaidEvent;
    'pix-error': PixErrorEvent;
  }
}
