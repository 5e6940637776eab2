/**
 * `npm run bench:size`: builds the script-tag bundle and prints its size raw, gzip and brotli, next
 * to the budget (issue "Widget": at most 20 KB gzip, aim 18 KB). A figure to read, not a test.
 */
import { readFile } from 'node:fs/promises';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import { build } from 'vite';

const BUDGET_GZIP = 20 * 1024;

await build({ logLevel: 'warn' });
const file = 'dist/pix-checkout.js';
const code = await readFile(file);
const gzip = gzipSync(code, { level: 9 }).length;
const brotli = brotliCompressSync(code, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } }).length;
const kb = (n: number) => `${(n / 1024).toFixed(1)} KB`;

console.log(`${file}
  minified  ${kb(code.length)}
  gzip -9   ${kb(gzip)}   (budget ${kb(BUDGET_GZIP)}: ${gzip <= BUDGET_GZIP ? 'within' : `over by ${kb(gzip - BUDGET_GZIP)}`})
  brotli    ${kb(brotli)}`);
