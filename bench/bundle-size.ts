/**
 * `npm run bench:size`: builds the script-tag bundle and prints its size raw, gzip and brotli, next
 * and each chunk's, next to their budgets (vite.config.ts; the build fails over them), then where the bytes
 * are: each module's share of the minified bundle, as the bundler rendered it, and that text gzipped
 * alone (an upper bound: gzip shares a window across modules, so the parts add up to more than the
 * whole). A figure to read, not a test.
 */
import { gzipSync } from 'node:zlib';
import { build, type Plugin } from 'vite';
import { BUNDLE_BUDGET_GZIP as BUDGET_GZIP, CHUNK_BUDGET_GZIP, bundleSizes } from '../vite.config.ts';

const modules: { id: string; file: string; minified: number; gzip: number }[] = [];
/** Reads each module's rendered code from the output chunk (rollup's and rolldown's bundle info). */
const moduleSizes: Plugin = {
  name: 'module-sizes',
  generateBundle(_options, bundle) {
    for (const chunk of Object.values(bundle)) {
      if (chunk.type !== 'chunk') continue;
      for (const [id, info] of Object.entries(chunk.modules)) {
        const code = info.code ?? '';
        modules.push({ id, file: chunk.fileName, minified: info.renderedLength, gzip: gzipSync(code, { level: 9 }).length });
      }
    }
  },
};

await build({ logLevel: 'warn', plugins: [moduleSizes] });
const file = 'dist/pix-checkout.js';
const { minified, gzip, brotli } = bundleSizes(file);
const kb = (n: number) => `${(n / 1024).toFixed(1)} KB`;
const name = (id: string) => id.replace(`${process.cwd()}/`, '').replace(/^.*node_modules\//, '');

// The languages loaded on demand (src/locales/index.ts), files beside the script.
const languages = ['en', 'es'].map((language) => ({ language, ...bundleSizes(`dist/pix-checkout.${language}.js`) }));
// The "Salvar QR Code" drawing (src/save.ts): loaded on the phone layout, when its button shows.
const save = bundleSizes('dist/pix-checkout.save.js');
// What follows the first QR (src/later.ts, and the status controller's file beside it): loaded on
// every page once that QR is on screen.
const later = bundleSizes('dist/pix-checkout.later.js');
const status = bundleSizes('dist/pix-checkout.status.js');
const chunkVerdict = (size: number) => `budget ${CHUNK_BUDGET_GZIP} B each: ${size <= CHUNK_BUDGET_GZIP ? 'within' : `OVER by ${size - CHUNK_BUDGET_GZIP} B`}`;

console.log(`${file}
  minified  ${kb(minified)}
  gzip -9   ${kb(gzip)}   (budget ${kb(BUDGET_GZIP)}: ${gzip <= BUDGET_GZIP ? 'within' : `over by ${kb(gzip - BUDGET_GZIP)}`})
  brotli    ${kb(brotli)}
  goal: the first QR's script <= ${kb(BUDGET_GZIP)} gzip (the budget): ${gzip <= BUDGET_GZIP ? 'met' : `MISSED by ${gzip - BUDGET_GZIP} B`} (${gzip} B)
once the first QR is on screen, what follows it, two files asked for together (the screens of a code's end, more time, share, save; following the status; every page):
  dist/pix-checkout.later.js  ${kb(later.minified)} min, ${later.gzip} B gzip -9 (${chunkVerdict(later.gzip)}), ${kb(later.brotli)} brotli
  dist/pix-checkout.status.js  ${kb(status.minified)} min, ${status.gzip} B gzip -9 (${chunkVerdict(status.gzip)}), ${kb(status.brotli)} brotli
a page in pt-BR needs the script alone for its first QR; one in another language loads its texts beside it:
${languages
  .map(
    (l) =>
      `  dist/pix-checkout.${l.language}.js  ${kb(l.minified)} min, ${l.gzip} B gzip -9 (${chunkVerdict(l.gzip)}): an ${l.language} page ${kb(gzip + l.gzip)} gzip in two files (${kb(brotli + l.brotli)} brotli)`,
  )
  .join('\n')}
on the phone layout, the "Salvar QR Code" drawing (imported by the later chunk), loaded when its button shows:
  dist/pix-checkout.save.js  ${kb(save.minified)} min, ${save.gzip} B gzip -9 (${chunkVerdict(save.gzip)}), ${kb(save.brotli)} brotli
per module (rendered into the bundle, largest first; gzip: the module alone):
${modules
  .filter((m) => m.minified > 0)
  .sort((a, b) => b.minified - a.minified)
  .map((m) => `  ${kb(m.minified).padStart(8)} min  ${kb(m.gzip).padStart(8)} gz  ${name(m.id)}${m.file === 'pix-checkout.js' ? '' : `  (in ${m.file})`}`)
  .join('\n')}`);
