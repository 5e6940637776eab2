import { markOnce } from '../marks.ts';
import { qrPath, type QrPath } from '../qr.ts';
import { readBrCode } from '../shared/brcode.ts';
import type { PaymentView } from '../shared/contract.ts';

/** A code checked: its BR Code check (the fields of a payable code), and its QR path once drawn (null: the code fails its check). */
interface Checked {
  brcode: string;
  check: ReturnType<typeof readBrCode>;
  path?: QrPath | null;
}

/** The code on screen, checked once per code: its BR Code check, and its QR path drawn on first use. */
export class CodeOnScreen {
  #code: Checked | null = null;

  /** The QR path for the code, computed once per code; null when the code fails the BR Code check. */
  qr(brcode: string): QrPath | null {
    const code = this.#checked(brcode);
    if (code.path === undefined && code.check.ok) {
      markOnce('pix-checkout:encode');
      code.path = qrPath(brcode);
      markOnce('pix-checkout:encoded');
    }
    return (code.path ??= null);
  }

  /**
   * Who is being paid. First the proxy's `favoured`: the receiver's registered name, which the payer's
   * bank app shows before the payment is confirmed. While the proxy has not read it (null) or is too
   * old to send it, the merchant name inside the code (field 59): the partner wrote it there for the
   * same receiver, and it is what a bank app has of the receiver when it reads the code itself. Null
   * when neither exists (or the code fails the check).
   */
  receiver(payment: PaymentView): string | null {
    const { check } = this.#checked(payment.brcode);
    return payment.favoured || (check.ok && check.fields.get('59')) || null;
  }

  #checked(brcode: string): Checked {
    if (this.#code?.brcode !== brcode) {
      markOnce('pix-checkout:check');
      this.#code = { brcode, check: readBrCode(brcode) };
      markOnce('pix-checkout:checked');
    }
    return this.#code;
  }
}
