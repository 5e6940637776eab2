/**
 * `npm run bench:size`: builds the script-tag bundle and prints its size raw, gzip and brotli, next
 * to the budget (issue "Performance": at most 18 KB gzip, everything included). A figure to read, not a test.
 */
import { build } from 'vite';
import { BUNDLE_BUDGET_GZIP as BUDGET_GZIP, bundleSizes } from '../vite.config.ts';

await build({ logLevel: 'warn' });
const file = 'dist/pix-checkout.js';
const { minified, gzip, brotli } = bundleSizes(file);
const kb = (n: number) => `${(n / 1024).toFixed(1)} KB`;

console.log(`${file}
  minified  ${kb(minified)}
  gzip -9   ${kb(gzip)}   (budget ${kb(BUDGET_GZIP)}: ${gzip <= BUDGET_GZIP ? 'within' : `over by ${kb(gzip - BUDGET_GZIP)}`})
  brotli    ${kb(brotli)}`);
