import { readFileSync } from 'node:fs';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import { defineConfig, type Plugin } from 'vite';
import { minifyCss } from './server/ssr/css.ts';

/** The script-tag bundle's budget (issue "Performance": at most 18 KB gzip, everything included); the build fails over it. */
export const BUNDLE_BUDGET_GZIP = 18 * 1024;

/** The figure that matters for a script tag: the file as served, gzip -9 and brotli, against the budget. */
export function bundleSizes(file: string): { minified: number; gzip: number; brotli: number } {
  const code = readFileSync(file);
  return {
    minified: code.length,
    gzip: gzipSync(code, { level: 9 }).length,
    brotli: brotliCompressSync(code, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } }).length,
  };
}

const kb = (n: number) => `${(n / 1024).toFixed(1)} KB`;

/** Prints the bundle's size after every build, and fails the build over the budget. */
function sizeBudget(file: string): Plugin {
  return {
    name: 'size-budget',
    apply: 'build',
    closeBundle() {
      const size = bundleSizes(file);
      const verdict = size.gzip <= BUNDLE_BUDGET_GZIP ? 'within' : `OVER by ${kb(size.gzip - BUNDLE_BUDGET_GZIP)}`;
      console.log(`${file}: ${kb(size.minified)} minified, ${kb(size.gzip)} gzip -9 (budget ${kb(BUNDLE_BUDGET_GZIP)}: ${verdict}), ${kb(size.brotli)} brotli`);
      if (size.gzip > BUNDLE_BUDGET_GZIP) this.error(`${file} is over its size budget`);
    },
  };
}

/**
 * Minifies the CSS inside css`` templates (the styles file is written readable; no build tool
 * minifies template literals): comments go, white space collapses, quotes leave identifier
 * attribute values, and `0.5` becomes `.5` (server/ssr/css.ts, which the server-rendered widget's
 * styles go through too). Both builds use it, so the bundle measured is the bundle shipped.
 */
export function minifyCssTemplates(): Plugin {
  const minify = minifyCss;
  return {
    name: 'minify-css-templates',
    enforce: 'pre',
    transform(code, id) {
      if (!/\.styles\.ts$/.test(id)) return null;
      const minified = code.replace(
        /\bcss`([^`]*)`/g,
        (_all, body: string) =>
          `css\`${body
            .split(/(\$\{[^}]*\})/)
            .map((part, i) => (i % 2 ? part : minify(part)))
            .join('')
            .trim()}\``,
      );
      // No mappings for the styles file: once minified, its CSS is one line.
      return { code: minified, map: { mappings: '' } };
    },
  };
}

/**
 * The script-tag build: one ES module with lit and our QR encoder (src/qr-encoder.ts) inside, fully
 * minified, and a small module per language besides pt-BR, loaded only by pages that speak it.
 */
export default defineConfig({
  plugins: [minifyCssTemplates(), sizeBudget('dist/pix-checkout.js')],
  build: {
    outDir: 'dist',
    // dist/npm/ (vite.npm.config.ts) lives beside this file.
    emptyOutDir: false,
    target: 'es2022',
    minify: true,
    // The map is written beside the file, without a comment pointing at it: pages that load the
    // script from the proxy ask for nothing more (attach it in the browser's tools to debug).
    sourcemap: 'hidden',
    lib: {
      entry: 'src/define.ts',
      formats: ['es'],
      fileName: () => 'pix-checkout.js',
    },
    rolldownOptions: {
      // Library mode keeps whitespace and comments unless told otherwise. The languages loaded on
      // demand (src/locales/index.ts) are files beside the script, under fixed names the proxy serves
      // (server/routes/widget-script.ts): pix-checkout.en.js, pix-checkout.es.js.
      output: { minify: true, comments: false, chunkFileNames: 'pix-checkout.[name].js' },
    },
  },
});
