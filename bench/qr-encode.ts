/**
 * The QR encoder's time for a BR Code's symbol (src/qr-encoder.ts), cold and warm: the first encode
 * on a page runs mostly in V8's interpreter, so run it also as `node --jitless --import tsx
 * bench/qr-encode.ts` for the figure that matters on a phone. Prints figures; asserts nothing.
 * `--against FILE` times another encoder (an earlier src/qr-encoder.ts) beside it, alternating.
 */
import { pathToFileURL } from 'node:url';
import { resolve } from 'node:path';
import { encodeQr } from '../src/qr-encoder.ts';
import { buildDynamicBrCode } from '../src/shared/brcode.ts';

type Encoder = typeof encodeQr;

// A BR Code of the size the widget draws (version 9, a 53-module symbol), a new one each run.
const code = (k: number) =>
  buildDynamicBrCode({
    locationUrl: `pix.example.com/qr/v2/${k.toString(16).padStart(32, '0')}`,
    merchantName: 'Loja Exemplo Ltda',
    merchantCity: 'São Paulo',
    amount: 10.5 + k,
  });

function time(encode: Encoder, runs: number, from: number): number[] {
  const times: number[] = [];
  for (let k = 0; k < runs; k++) {
    const start = performance.now();
    encode(code(from + k));
    times.push(performance.now() - start);
  }
  return times;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;
const fmt = (ms: number) => `${ms.toFixed(2)} ms`;

const against = process.argv.indexOf('--against');
const encoders: [string, Encoder][] = [['src/qr-encoder.ts', encodeQr]];
if (against > 0) {
  const file = resolve(process.argv[against + 1]!);
  encoders.push([file, ((await import(pathToFileURL(file).href)) as { encodeQr: Encoder }).encodeQr]);
}
console.log(`symbol: ${encodeQr(code(0)).size} modules a side${process.execArgv.includes('--jitless') ? ', --jitless' : ''}`);
const cold = encoders.map(([, encode]) => time(encode, 1, 1)[0]!);
const warm = encoders.map(() => [] as number[]);
for (let round = 0; round < 20; round++) encoders.forEach(([, encode], i) => warm[i]!.push(...time(encode, 5, 100 + round * 5)));
encoders.forEach(([name], i) => console.log(`${name}: first ${fmt(cold[i]!)}, then median ${fmt(median(warm[i]!))} of ${warm[i]!.length}`));
