import { spoken, type Translation } from './translation.ts';

export const en: Translation = {
  tag: 'en',
  loading: 'Generating the Pix code…',
  scanHint: "Scan the QR code with your bank's app",
  codeLabel: 'Pix copy and paste',
  copy: 'Copy code',
  copied: 'Code copied',
  copyFailed: 'Could not copy. The code is selected: copy it by hand.',
  qrAlt: (amount) => `Pix QR code to pay ${amount}. On a phone, use the Copy code button and paste it in your bank's app.`,
  openCheckout: 'Pay on the payment page',
  pending: 'Waiting for payment',
  paid: 'Payment confirmed',
  paidAmount: (amount) => `You paid ${amount}.`,
  expired: 'This Pix code has expired',
  expiredHint: 'Nothing was charged. Generate a new code to pay.',
  renew: 'Generate a new code',
  renewLimit: 'Nothing was charged. Go back to the store to try again.',
  renewalsExhausted: 'No more codes can be generated for this order. Nothing was charged: go back to the store to try again.',
  canceled: 'Payment canceled',
  canceledHint: 'Nothing was charged.',
  invalidCode: 'The QR code could not be drawn. Use the image or the payment page.',
  error: 'The payment could not be loaded.',
  retry: 'Try again',
  reconnecting: 'Reconnecting…',
  offline: 'No connection. Reconnecting…',
  expiresIn: 'Expires in',
  timeLeft: (h, m, s) =>
    `${spoken(
      [
        [h, 'hour', 'hours'],
        [m, 'minute', 'minutes'],
        [s, 'second', 'seconds'],
      ],
      'and',
    )} left to pay.`,
};
