/**
 * The encoder core of `qrcode`: the reference our own encoder (src/qr-encoder.ts) is tested against
 * (test/node/widget/qr-encoder.test.ts, test/browser/bundle.test.ts). The widget itself no longer imports it.
 */
declare module 'qrcode/lib/core/qrcode.js' {
  export interface BitMatrix {
    size: number;
    get(row: number, col: number): number | boolean;
  }
  export function create(
    data: string | { data: string; mode: 'byte' | 'alphanumeric' | 'numeric' | 'kanji' }[],
    options?: { errorCorrectionLevel?: 'L' | 'M' | 'Q' | 'H' },
  ): { modules: BitMatrix; version: number };
}
