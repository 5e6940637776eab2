/** Every text the widget shows or announces; a locale provides all of them. */
export interface Translation {
  loading: string;
  scanTitle: string;
  codeLabel: string;
  copy: string;
  copied: string;
  copyFailed: string;
  qrAlt: (amount: string) => string;
  openCheckout: string;
  pending: string;
  paid: string;
  expired: string;
  canceled: string;
  invalidCode: string;
  error: string;
  retry: string;
  reconnecting: string;
}
