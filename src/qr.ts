import { encodeQr } from './qr-encoder.ts';

/** The spec's quiet zone: four modules of light around the code (brcode.md, QR rendering). */
const QUIET_ZONE = 4;

export interface QrPath {
  /** Side of the square viewBox, quiet zone included, in modules. */
  size: number;
  /** One SVG path of every dark module, so the DOM holds one node instead of thousands. */
  d: string;
}

/** The QR symbol of `text` (UTF-8, byte mode, level M), as an SVG path (no innerHTML, no image). */
export function qrPath(text: string): QrPath {
  return matrixPath(encodeQr(text));
}

/** A QR module matrix (ours, or qrcode's in tests) as one SVG path, quiet zone included. */
export function matrixPath(modules: { size: number; get(row: number, col: number): boolean | number }): QrPath {
  const n = modules.size;
  let d = '';
  for (let y = 0; y < n; y++) {
    let x = 0;
    while (x < n) {
      if (!modules.get(y, x)) {
        x++;
        continue;
      }
      // Runs of dark modules on a row become one rectangle.
      const start = x;
      while (x < n && modules.get(y, x)) x++;
      d += `M${start + QUIET_ZONE} ${y + QUIET_ZONE}h${x - start}v1h${start - x}z`;
    }
  }
  return { size: n + 2 * QUIET_ZONE, d };
}
