/**
 * A QR encoder for what a BR Code needs (ISO/IEC 18004): one UTF-8 byte-mode segment, error
 * correction level M, the smallest version 1 to 40 that holds it. It replaces npm `qrcode` in the
 * widget's bundle and draws, for every input, the same symbol as `qrcode`'s `create([{ data, mode:
 * 'byte' }], { errorCorrectionLevel: 'M' })`, mask choice included (its penalty rules N1 to N4, as
 * it computes them; test/node/widget/qr-encoder.test.ts compares the two module by module).
 */

/** A QR symbol: `size` modules a side; `get` says whether a module is dark. */
export interface QrMatrix {
  size: number;
  get(row: number, col: number): boolean;
}

// GF(256) over x^8 + x^4 + x^3 + x^2 + 1; EXP is doubled so a product needs no modulo.
const EXP = new Uint8Array(512);
const LOG = new Uint8Array(256);
for (let i = 0, x = 1; i < 255; i++, x = (x << 1) ^ (x & 128 ? 0x11d : 0)) {
  EXP[i] = EXP[i + 255] = x;
  LOG[x] = i;
}
const mul = (a: number, b: number) => (a && b ? EXP[LOG[a]! + LOG[b]!]! : 0);

// Level M, versions 1 to 40: error correction blocks, and codewords per block (28 from version 22).
const BLOCKS = [
  1, 1, 1, 2, 2, 4, 4, 4, 5, 5, 5, 8, 9, 9, 10, 10, 11, 13, 14, 16, 17, 17, 18, 20, 21, 23, 25, 26, 28, 29, 31, 33, 35, 37, 38, 40, 43, 45, 47, 49,
];
const EC_PER_BLOCK = [10, 16, 26, 18, 24, 16, 18, 22, 22, 26, 30, 22, 22, 24, 24, 28, 28, 26, 26, 26, 26];

/** The centres of the alignment patterns along one axis (the rows and the columns are the same). */
function alignmentCoords(version: number): number[] {
  if (version < 2) return [];
  const count = Math.floor(version / 7) + 2;
  const step = version === 32 ? 26 : Math.ceil((version * 4 + 4) / (count * 2 - 2)) * 2;
  const coords = [6];
  for (let i = count - 1; i; i--) coords[i] = version * 4 + 10 - (count - 1 - i) * step;
  return coords;
}

/** Codewords of a version: modules left once function patterns are placed, over 8. */
function totalCodewords(version: number): number {
  const align = Math.floor(version / 7) + 2;
  let modules = (16 * version + 128) * version + 64;
  if (version > 1) modules -= (25 * align - 10) * align - 55;
  if (version > 6) modules -= 36;
  return modules >> 3;
}

/** BCH code: `data` followed by the remainder of its division by `poly` (of degree `degree`). */
function bch(data: number, poly: number, degree: number): number {
  let rem = data;
  for (let i = 0; i < degree; i++) rem = (rem << 1) ^ ((rem >> (degree - 1)) * poly);
  return (data << degree) | rem;
}

/** The eight mask conditions at (row i, column j), as bits 0 to 7 of one number. */
const maskBits = (i: number, j: number): number => {
  const p = i * j;
  const q = (p % 2) + (p % 3);
  return (
    +((i + j) % 2 === 0) |
    (+(i % 2 === 0) << 1) |
    (+(j % 3 === 0) << 2) |
    (+((i + j) % 3 === 0) << 3) |
    (+((Math.floor(i / 2) + Math.floor(j / 3)) % 2 === 0) << 4) |
    (+(q === 0) << 5) |
    (+(q % 2 === 0) << 6) |
    (+(((p % 3) + ((i + j) % 2)) % 2 === 0) << 7)
  );
};

/**
 * The eight masks are scored together, in one pass over the symbol: each module is one byte, bit k
 * its colour under mask k (function modules 0x00 or 0xff, the format modules each mask's own), so
 * one AND or XOR compares a module with its neighbours under every mask at once. Where a rule holds
 * under some masks (a set of bits), its points go to `points[set]`; each mask's total is summed
 * from those 256 cells at the end. The rules are `qrcode`'s, to the point (so both pick the same
 * mask): N1 a run of 5+ in a line scores its length - 2 (here: 1 for each 5-window of one colour,
 * and 2 more for the first window of each run); N2 3 for each 2x2 block of one colour; N3 40 for
 * each 1:1:3:1:1 finder-like pattern with 4 light modules on one side, inside the symbol (11
 * modules: 10111010000 or 00001011101); N4 10 for each 5% of the dark share away from 50%.
 */
function scoreLine(
  lanes: Uint8Array,
  n: number,
  at: number,
  step: number,
  points: Int32Array,
  x: Uint8Array,
  same: Uint8Array,
  light: Uint8Array,
  core: Uint8Array,
): void {
  for (let b = 0; b < n; b++, at += step) {
    const v = (x[b] = lanes[at]!);
    if (b < 1) continue;
    same[b] = ~(v ^ x[b - 1]!) & 255;
    if (b >= 3) light[b] = ~(v | x[b - 1]! | x[b - 2]! | x[b - 3]!) & 255;
    if (b >= 4) {
      const run = same[b]! & same[b - 1]! & same[b - 2]! & same[b - 3]!;
      if (run) {
        points[run]! += 1;
        const first = b >= 5 ? run & ~same[b - 4]! : run;
        if (first) points[first]! += 2;
      }
    }
    if (b >= 6) core[b] = x[b - 6]! & ~x[b - 5]! & x[b - 4]! & x[b - 3]! & x[b - 2]! & ~x[b - 1]! & v;
    if (b >= 10) {
      // The two patterns differ, so a mask matches at most one of them here.
      const finder = (core[b - 4]! & light[b]!) | (light[b - 7]! & core[b]!);
      if (finder) points[finder]! += 40;
    }
  }
}

/** The mask (0 to 7) of lowest penalty, the first of equals, from the eight-lane symbol (see scoreLine). */
function bestMask(lanes: Uint8Array, n: number): number {
  const points = new Int32Array(256);
  const darkSets = new Int32Array(256);
  const x = new Uint8Array(n);
  const same = new Uint8Array(n);
  const light = new Uint8Array(n);
  const core = new Uint8Array(n);
  for (let a = 0; a < n; a++) {
    scoreLine(lanes, n, a * n, 1, points, x, same, light, core);
    scoreLine(lanes, n, a, n, points, x, same, light, core);
  }
  for (let at = 0; at < n * n; at++) {
    const v = lanes[at]!;
    darkSets[v]!++;
    if (at >= n && at % n) {
      const block = ~((v ^ lanes[at - n]!) | (v ^ lanes[at - 1]!) | (v ^ lanes[at - n - 1]!)) & 255;
      if (block) points[block]! += 3;
    }
  }
  let best = 0;
  let lowest = Infinity;
  for (let mask = 0; mask < 8; mask++) {
    let total = 0;
    let dark = 0;
    for (let set = 1; set < 256; set++) {
      if ((set >> mask) & 1) {
        total += points[set]!;
        dark += darkSets[set]!;
      }
    }
    total += Math.abs(Math.ceil((dark * 100) / (n * n) / 5) - 10) * 10;
    if (total < lowest) {
      lowest = total;
      best = mask;
    }
  }
  return best;
}

/** Encodes `text` (as UTF-8 bytes) at level M in the smallest version that holds it; throws if none does. */
export function encodeQr(text: string): QrMatrix {
  const bytes = new TextEncoder().encode(text);
  if (!bytes.length) throw new Error('nothing to encode');
  let version = 0;
  let total: number;
  let blocks: number;
  let ecLength: number;
  let dataLength: number;
  do {
    // 2331 bytes at most (version 40, level M); the widget never gets there (a BR Code has at most 512 characters).
    if (++version > 40) throw new Error(`${bytes.length} bytes is too long for a QR code`);
    total = totalCodewords(version);
    blocks = BLOCKS[version - 1]!;
    ecLength = EC_PER_BLOCK[version - 1] ?? 28;
    dataLength = total - blocks * ecLength;
  } while (bytes.length > (dataLength * 8 - (version < 10 ? 12 : 20)) >> 3);

  // The data bits: byte mode, length, bytes, terminator, then pad codewords 0xEC and 0x11 in turn.
  const bits: number[] = [];
  const put = (value: number, length: number) => {
    while (length-- > 0) bits.push((value >> length) & 1);
  };
  put(4, 4);
  put(bytes.length, version < 10 ? 8 : 16);
  for (const byte of bytes) put(byte, 8);
  put(0, Math.min(4, dataLength * 8 - bits.length));
  put(0, -bits.length & 7);
  for (let pad = 0xec; bits.length < dataLength * 8; pad ^= 0xfd) put(pad, 8);
  const data = new Uint8Array(dataLength);
  bits.forEach((bit, i) => (data[i >> 3]! |= bit << (7 - (i & 7))));

  // Reed-Solomon over each block (the last total % blocks blocks hold one data codeword more),
  // then data and error correction codewords interleaved block by block.
  const generator = new Uint8Array(ecLength + 1);
  generator[0] = 1;
  for (let i = 0; i < ecLength; i++) for (let j = i + 1; j; j--) generator[j]! ^= mul(generator[j - 1]!, EXP[i]!);
  const short = Math.floor(dataLength / blocks);
  const firstLong = blocks - (total % blocks);
  const codewords = new Uint8Array(total);
  for (let b = 0, offset = 0; b < blocks; b++) {
    const length = short + (b < firstLong ? 0 : 1);
    const ec = new Uint8Array(ecLength);
    for (let i = 0; i < length; i++) {
      const byte = data[offset + i]!;
      codewords[i * blocks + b - (i === short ? firstLong : 0)] = byte;
      const factor = byte ^ ec[0]!;
      ec.copyWithin(0, 1);
      ec[ecLength - 1] = 0;
      for (let k = 0; k < ecLength; k++) ec[k]! ^= mul(generator[k + 1]!, factor);
    }
    ec.forEach((byte, k) => (codewords[dataLength + k * blocks + b] = byte));
    offset += length;
  }

  // Function patterns: timing, finders with their separators, alignment, format and version info.
  const n = version * 4 + 17;
  const m = new Uint8Array(n * n);
  const fixed = new Uint8Array(n * n);
  const set = (row: number, col: number, dark: unknown) => {
    m[row * n + col] = dark ? 1 : 0;
    fixed[row * n + col] = 1;
  };
  for (let i = 0; i < n; i++) {
    set(6, i, !(i & 1));
    set(i, 6, !(i & 1));
  }
  for (const [row, col] of [
    [0, 0],
    [n - 7, 0],
    [0, n - 7],
  ] as const) {
    for (let r = -1; r < 8; r++) {
      for (let c = -1; c < 8; c++) {
        const d = Math.max(Math.abs(r - 3), Math.abs(c - 3));
        if (row + r >= 0 && row + r < n && col + c >= 0 && col + c < n) set(row + r, col + c, d < 2 || d === 3);
      }
    }
  }
  const coords = alignmentCoords(version);
  const last = coords.length - 1;
  coords.forEach((row, i) =>
    coords.forEach((col, j) => {
      if ((i || j) && (i || j < last) && (i < last || j)) {
        for (let r = -2; r < 3; r++) for (let c = -2; c < 3; c++) set(row + r, col + c, Math.max(Math.abs(r), Math.abs(c)) !== 1);
      }
    }),
  );
  /** The modules format() sets. */
  const formatCells: number[] = [];
  const format = (mask: number) => {
    // Level M's two bits are 00, so the format data is the mask number alone.
    const info = bch(mask, 0x537, 10) ^ 0x5412;
    const put = (row: number, col: number, dark: number) => {
      set(row, col, dark);
      // Recorded on the first call (15 modules twice, and the dark module).
      if (formatCells.length < 31) formatCells.push(row * n + col);
    };
    for (let i = 0; i < 15; i++) {
      const dark = (info >> i) & 1;
      put(i < 6 ? i : i < 8 ? i + 1 : n - 15 + i, 8, dark);
      put(8, i < 8 ? n - i - 1 : i < 9 ? 7 : 14 - i, dark);
    }
    put(n - 8, 8, 1);
  };
  format(0);
  if (version > 6) {
    const info = bch(version, 0x1f25, 12);
    for (let i = 0; i < 18; i++) {
      const dark = (info >> i) & 1;
      set(Math.floor(i / 3), (i % 3) + n - 11, dark);
      set((i % 3) + n - 11, Math.floor(i / 3), dark);
    }
  }

  // The codewords' bits, in two-module columns zigzagging up and down from the bottom right (the
  // remainder bits past the last codeword stay light).
  let bit = 0;
  for (let right = n - 1; right > 0; right -= right === 8 ? 3 : 2) {
    for (let k = 0; k < n; k++) {
      const row = (right + 1) & 2 ? k : n - 1 - k;
      for (const col of [right, right - 1]) {
        if (!fixed[row * n + col]) {
          m[row * n + col] = (codewords[bit >> 3]! >> (7 - (bit & 7))) & 1;
          bit++;
        }
      }
    }
  }

  // Every module's colour under the eight masks, one bit each (see scoreLine): the data modules
  // flipped where a mask's condition holds, the format modules as each mask's format info sets them.
  const lanes = new Uint8Array(n * n);
  for (let r = 0, at = 0; r < n; r++) {
    for (let c = 0; c < n; c++, at++) lanes[at] = (-m[at]! & 255) ^ (fixed[at] ? 0 : maskBits(r, c));
  }
  for (let mask = 0; mask < 8; mask++) {
    format(mask);
    for (const at of formatCells) lanes[at] = (lanes[at]! & ~(1 << mask)) | (m[at]! << mask);
  }
  const best = bestMask(lanes, n);
  for (let at = 0; at < n * n; at++) m[at] = (lanes[at]! >> best) & 1;
  return { size: n, get: (row, col) => m[row * n + col] === 1 };
}
