/**
 * The encoder core of `qrcode`, imported on its own so the widget bundle carries no renderers
 * (canvas, PNG, terminal) it never uses.
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
