/**
 * A QR encoder for what a BR Code needs (ISO/IEC 18004): one UTF-8 byte-mode segment, error
 * correction level M, the smallest version 1 to 40 that holds it. It replaces npm `qrcode` in the
 * widget's bundle and draws, for every input, the same symbol as `qrcode`'s `create([{ data, mode:
 * 'byte' }], { errorCorrectionLevel: 'M' })`, mask choice included (its penalty rules N1 to N4, as
 * it computes them; test/node/widget/qr-encoder.test.ts compares the two module by module). Written
 * for size: it is on the first QR's script.
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

/**
 * Level M, versions 1 to 40, two characters each (char code - 48): the error correction blocks, then
 * the codewords per block.
 */
const EC_TABLE = '1:1@1J2B2H4@4B4F5F5J5N8F9F9H:H:L;L=J>J@JAJALBLDLELGLILJLLLMLOLQLSLULVLXL[L]L_LaL';
const table = (version: number, k: number) => EC_TABLE.charCodeAt(version * 2 + k - 2) - 48;

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
    (+((((i / 2) | 0) + ((j / 3) | 0)) % 2 === 0) << 4) |
    (+(q === 0) << 5) |
    (+(q % 2 === 0) << 6) |
    (+(((p % 3) + ((i + j) % 2)) % 2 === 0) << 7)
  );
};

/**
 * The mask (0 to 7) of lowest penalty, the first of equals. The eight masks are scored together, in
 * one pass over the symbol: each module is one byte of `lanes`, bit k its colour under mask k
 * (function modules 0x00 or 0xff, the format modules each mask's own), so one AND or XOR compares a
 * module with its neighbours under every mask at once. Where a rule holds under some masks (a set of
 * bits), its points go to `points[set]` (`points[0]`, no mask, is never read); each mask's total is
 * summed from those 256 cells at the end. The rules are `qrcode`'s, to the point (so both pick the
 * same mask): N1 a run of 5+ in a line scores its length - 2 (here: 1 for each 5-window of one
 * colour, and 2 more for the first window of each run); N2 3 for each 2x2 block of one colour; N3 40
 * for each 1:1:3:1:1 finder-like pattern with 4 light modules on one side, inside the symbol (11
 * modules: 10111010000 or 00001011101); N4 10 for each 5% of the dark share away from 50%.
 */
function bestMask(lanes: Uint8Array, n: number): number {
  const points = new Int32Array(256);
  const darkSets = new Int32Array(256);
  // Along the line being scored: its modules, "same colour as the one before", "4 light ending
  // here", "1011101 ending here".
  const x = new Uint8Array(n);
  const same = new Uint8Array(n);
  const light = new Uint8Array(n);
  const core = new Uint8Array(n);
  // Rows (a < n), then columns.
  for (let a = 0; a < 2 * n; a++) {
    for (let b = 0, at = a < n ? a * n : a - n; b < n; b++, at += a < n ? 1 : n) {
      const v = (x[b] = lanes[at]!);
      if (!b) continue;
      same[b] = ~(v ^ x[b - 1]!);
      if (b > 2) light[b] = ~(v | x[b - 1]! | x[b - 2]! | x[b - 3]!);
      if (b > 3) {
        const run = same[b]! & same[b - 1]! & same[b - 2]! & same[b - 3]!;
        points[run]! += 1;
        points[b > 4 ? run & ~same[b - 4]! : run]! += 2;
      }
      if (b > 5) core[b] = x[b - 6]! & ~x[b - 5]! & x[b - 4]! & x[b - 3]! & x[b - 2]! & ~x[b - 1]! & v;
      // The two patterns differ, so a mask matches at most one of them here.
      if (b > 9) points[(core[b - 4]! & light[b]!) | (light[b - 7]! & core[b]!)]! += 40;
    }
  }
  for (let at = 0; at < n * n; at++) {
    const v = lanes[at]!;
    darkSets[v]!++;
    if (at >= n && at % n) points[~((v ^ lanes[at - n]!) | (v ^ lanes[at - 1]!) | (v ^ lanes[at - n - 1]!)) & 255]! += 3;
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
    // The modules left once the function patterns are placed, over 8.
    const align = ((version / 7) | 0) + 2;
    total = (((16 * version + 128) * version + 64 - (version > 1 ? (25 * align - 10) * align - 55 : 0) - (version > 6 ? 36 : 0)) / 8) | 0;
    blocks = table(version, 0);
    ecLength = table(version, 1);
    dataLength = total - blocks * ecLength;
    // The mode (4 bits) and the length (8 bits below version 10, 16 from it) before the bytes.
  } while (bytes.length + (version < 10 ? 2 : 3) > dataLength);

  // The data codewords: byte mode, the length, the bytes, a 4-bit terminator (it always fits and
  // ends on a byte's edge: the header is 4 bits and a multiple of 8), then pads 0xEC and 0x11 in turn.
  const data = new Uint8Array(dataLength);
  let bitLength = 0;
  const put = (value: number, length: number) => {
    for (; length--; bitLength++) data[bitLength >> 3]! |= ((value >> length) & 1) << (~bitLength & 7);
  };
  put(4, 4);
  put(bytes.length, version < 10 ? 8 : 16);
  for (const byte of bytes) put(byte, 8);
  for (let i = (bitLength + 4) >> 3, pad = 0xec; i < dataLength; i++, pad ^= 0xfd) data[i] = pad;

  // Reed-Solomon over each block (the last total % blocks blocks hold one data codeword more),
  // then data and error correction codewords interleaved block by block.
  const generator = new Uint8Array(ecLength + 1);
  const mul = (a: number, b: number) => (a && b ? EXP[LOG[a]! + LOG[b]!]! : 0);
  generator[0] = 1;
  for (let i = 0; i < ecLength; i++) for (let j = i + 1; j; j--) generator[j]! ^= mul(generator[j - 1]!, EXP[i]!);
  const short = (dataLength / blocks) | 0;
  const firstLong = blocks - (total % blocks);
  const codewords = new Uint8Array(total);
  for (let b = 0, offset = 0; b < blocks; b++) {
    const ec = new Uint8Array(ecLength + 1);
    for (let i = 0; i < short + +(b >= firstLong); i++) {
      const byte = data[offset++]!;
      codewords[i * blocks + b - (i === short ? firstLong : 0)] = byte;
      const factor = byte ^ ec[0]!;
      for (let k = 0; k < ecLength; k++) ec[k] = ec[k + 1]! ^ mul(generator[k + 1]!, factor);
    }
    for (let k = 0; k < ecLength; k++) codewords[dataLength + k * blocks + b] = ec[k]!;
  }

  // Each module's colour under the eight masks, one bit each (see bestMask). The function patterns
  // first, marked fixed.
  const n = version * 4 + 17;
  const lanes = new Uint8Array(n * n);
  const fixed = new Uint8Array(n * n);
  const set = (row: number, col: number, lane: number) => {
    lanes[row * n + col] = lane;
    fixed[row * n + col] = 1;
  };
  const dark = (is: unknown) => (is ? 255 : 0);
  /** A square of `radius` around (row, col), inside the symbol: its rings dark where `rings` has their bit. */
  const square = (row: number, col: number, radius: number, rings: number) => {
    for (let r = row - radius; r <= row + radius; r++) {
      for (let c = col - radius; c <= col + radius; c++) {
        if (r >>> 0 < n && c >>> 0 < n) set(r, c, dark((rings >> Math.max(Math.abs(r - row), Math.abs(c - col))) & 1));
      }
    }
  };
  // The finders with their separators (rings 0, 1 and 3 dark, 2 and 4 light).
  square(3, 3, 4, 0b1011);
  square(3, n - 4, 4, 0b1011);
  square(n - 4, 3, 4, 0b1011);
  if (version > 1) {
    // The alignment patterns (rings 0 and 2 dark) centred on each pair of these coordinates, but
    // where a finder is.
    const count = ((version / 7) | 0) + 2;
    const step = version === 32 ? 26 : Math.ceil((version * 4 + 4) / (count * 2 - 2)) * 2;
    const coords = [6];
    for (let i = count - 1; i; i--) coords[i] = n - 7 - (count - 1 - i) * step;
    for (const row of coords) for (const col of coords) if (!fixed[row * n + col]) square(row, col, 2, 0b101);
  }
  // The timing patterns between the finders (where they cross an alignment pattern, its colours).
  for (let i = 8; i < n - 8; i++) {
    set(6, i, dark(~i & 1));
    set(i, 6, dark(~i & 1));
  }
  // The format info, 15 bits, twice: level M's two bits are 00, so its data is the mask number
  // alone; bit k of a module's lane from mask k's format.
  for (let i = 0; i < 15; i++) {
    let lane = 0;
    for (let mask = 0; mask < 8; mask++) lane |= (((bch(mask, 0x537, 10) ^ 0x5412) >> i) & 1) << mask;
    set(i < 6 ? i : i < 8 ? i + 1 : n - 15 + i, 8, lane);
    set(8, i < 8 ? n - i - 1 : i < 9 ? 7 : 14 - i, lane);
  }
  set(n - 8, 8, 255);
  if (version > 6) {
    const info = bch(version, 0x1f25, 12);
    for (let i = 0; i < 18; i++) {
      const lane = dark((info >> i) & 1);
      set((i / 3) | 0, (i % 3) + n - 11, lane);
      set((i % 3) + n - 11, (i / 3) | 0, lane);
    }
  }

  // The codewords' bits, in two-module columns zigzagging up and down from the bottom right, each
  // flipped where a mask's condition holds (the remainder bits past the last codeword are light).
  let bit = 0;
  for (let right = n - 1; right > 0; right -= right === 8 ? 3 : 2) {
    for (let k = 0; k < n; k++) {
      const row = (right + 1) & 2 ? k : n - 1 - k;
      for (let col = right; col > right - 2; col--) {
        if (!fixed[row * n + col]) lanes[row * n + col] = dark((codewords[bit >> 3]! >> (~bit++ & 7)) & 1) ^ maskBits(row, col);
      }
    }
  }
  const best = bestMask(lanes, n);
  return { size: n, get: (row, col) => !!((lanes[row * n + col]! >> best) & 1) };
}
