/**
 * The statuses the browser sees. `expired` is derived: the partner still reports the payment as
 * pending, but its QR code can no longer be paid. `paid` and `canceled` never change again.
 */
export const PAYMENT_STATUSES = ['pending', 'paid', 'expired', 'canceled'] as const;
export type PaymentStatus = (typeof PAYMENT_STATUSES)[number];

/** Statuses after which the widget stops asking: nothing the customer can do changes them. */
export function isFinalStatus(status: PaymentStatus): boolean {
  return status !== 'pending';
}

/** True for a status this contract knows; anything else is never shown, least of all as paid. */
export function isPaymentStatus(status: unknown): status is PaymentStatus {
  return (PAYMENT_STATUSES as readonly unknown[]).includes(status);
}
