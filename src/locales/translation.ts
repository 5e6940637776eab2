/**
 * Every text the widget shows or announces; a locale provides all of them, and a page may override any
 * through the element's `texts` property (merged over the locale).
 */
export interface Translation {
  /** BCP 47 tag used for number formatting (BRL). */
  tag: string;
  loading: string;
  scanHint: string;
  /**
   * The code field's label: "Pix Copia e Cola", the central bank's name for it and the entry bank apps
   * offer under that name; other languages keep the term and explain it.
   */
  codeLabel: string;
  copy: string;
  copied: string;
  /** Shown when neither the Clipboard API nor the fallback copied: the code is left selected. */
  copyFailed: string;
  qrAlt: (amount: string) => string;
  /** The share button (Web Share API, shown only where the browser has it): pay from another device, or ask someone. */
  share: string;
  /** The button that saves the QR as an image (phones), for the bank app to read from the gallery. */
  save: string;
  /** Who is being paid, under the amount: the name the payer's bank app shows too. */
  paying: (name: string) => string;
  /** The button offered in a code's last two minutes when a new code can be had. */
  moreTime: string;
  /** Announced once, after the time left, when that button appears. */
  moreTimeOffer: string;
  /** Announced when asking for a new code failed: the code on screen still works. */
  moreTimeFailed: string;
  openCheckout: string;
  pending: string;
  paid: string;
  paidAmount: (amount: string) => string;
  /** The receipt's labels (paid screen): the value, who was paid, the date and time, the reference. */
  receiptAmount: string;
  receiptTo: string;
  receiptWhen: string;
  receiptReference: string;
  /** The paid screen's button that calls the browser's print dialog (print, or save as PDF). */
  print: string;
  expired: string;
  expiredHint: string;
  renew: string;
  renewLimit: string;
  /** Checkout mode: the proxy will issue no new code for this checkout (409 renewals_exhausted). */
  renewalsExhausted: string;
  /**
   * A new code was refused while an earlier one may still be paid (503 status_unverified): the widget
   * is confirming it, the customer must not pay again yet, and it asks again by itself.
   */
  unverified: string;
  unverifiedHint: string;
  canceled: string;
  canceledHint: string;
  invalidCode: string;
  error: string;
  retry: string;
  reconnecting: string;
  offline: string;
  expiresIn: string;
  /** Spoken time left, announced every few minutes (then more often near the end). */
  timeLeft: (hours: number, minutes: number, seconds: number) => string;
}

/**
 * The texts only what follows the first QR says (the later chunk's buttons and screens, the status
 * stream's connection lines, the announcements of a status change or of a refused new code, each
 * said once the chunk is here): a Brazilian page's script carries none of them
 * (src/locales/pt-BR-later.ts).
 */
export type LaterKey =
  | 'paid'
  | 'expired'
  | 'canceled'
  | 'renewalsExhausted'
  | 'unverified'
  | 'reconnecting'
  | 'offline'
  | 'share'
  | 'save'
  | 'moreTime'
  | 'moreTimeFailed'
  | 'paidAmount'
  | 'receiptAmount'
  | 'receiptTo'
  | 'receiptWhen'
  | 'receiptReference'
  | 'print'
  | 'expiredHint'
  | 'renew'
  | 'renewLimit'
  | 'canceledHint'
  | 'unverifiedHint'
  | 'moreTimeOffer'
  | 'timeLeft';

/** `spoken`'s type: the languages loaded on demand are handed it, so their chunks import nothing. */
export type Spoken = typeof spoken;

/** Joins the non-zero parts of a spoken duration, e.g. "1 hora e 5 minutos". */
export function spoken(parts: [number, string, string][], and: string): string {
  const words = parts.filter(([n]) => n > 0).map(([n, one, many]) => `${n} ${n === 1 ? one : many}`);
  return words.length > 1 ? `${words.slice(0, -1).join(', ')} ${and} ${words.at(-1)}` : (words[0] ?? `0 ${parts[2]![2]}`);
}
