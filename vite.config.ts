import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import MagicString from 'magic-string';
import { minify as terserMinify } from 'terser';
import { defineConfig, minifySync, type Plugin } from 'vite';
import { minifyCss } from './server/ssr/css.ts';
import {
  WIDGET_CHUNKS,
  WIDGET_MANIFEST_FILE,
  WIDGET_SCRIPT_FILE,
  WIDGET_VERSION,
  WIDGET_VERSION_PARAM,
  widgetChunkFile,
  type WidgetManifest,
} from './src/shared/widget-files.ts';

/**
 * The script-tag bundle's budget: the script a page's first QR needs, gzip -9, at most 16 KB; the
 * build fails over it, so a new feature goes in a chunk or pays.
 */
export const BUNDLE_BUDGET_GZIP = 16_384;
/**
 * Each chunk's budget, gzip -9 (dist/pix-checkout.*.js: the languages, the later chunk and the
 * status controller's, the QR drawing): loaded beside the script or after the first QR, but a page
 * still downloads them. A chunk over it is split in two, not given more.
 */
export const CHUNK_BUDGET_GZIP = 3 * 1024;

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

/** Prints the bundle's and each chunk's size after every build, and fails the build over a budget. */
function sizeBudget(file: string): Plugin {
  let chunks: string[] = [];
  return {
    name: 'size-budget',
    apply: 'build',
    writeBundle(options, bundle) {
      const dir = relative(process.cwd(), options.dir ?? 'dist');
      chunks = Object.keys(bundle)
        .map((name) => `${dir}/${name}`)
        .filter((path) => path.endsWith('.js') && path !== file);
    },
    closeBundle() {
      const over: string[] = [];
      for (const [path, budget] of [[file, BUNDLE_BUDGET_GZIP] as const, ...chunks.map((chunk) => [chunk, CHUNK_BUDGET_GZIP] as const)]) {
        const size = bundleSizes(path);
        const verdict = size.gzip <= budget ? 'within' : `OVER by ${size.gzip - budget} B`;
        console.log(`${path}: ${kb(size.minified)} minified, ${size.gzip} B gzip -9 (budget ${budget} B: ${verdict}), ${kb(size.brotli)} brotli`);
        if (size.gzip > budget) over.push(path);
      }
      if (over.length) this.error(`over the size budget: ${over.join(', ')}`);
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
 * Drops, in the widget's html`` templates, the white space that holds a line break between a tag or
 * a binding and the next tag or binding (the indentation prettier gives them): the templates lay out
 * in flex columns and blocks (src/pix-checkout.styles.ts), where it renders nothing, and lit would
 * keep each as a text node (30 B gzip of the script). White space on one line stays: inline text that
 * needs a space before a tag or binding is written on one line (`${t.expiresIn} <time>`).
 */
function collapseTemplateLineBreaks(): Plugin {
  const BREAK = /(?<=[>}])\n\s*(?=<[a-zA-Z/]|\$\{)/g;
  return {
    name: 'collapse-template-line-breaks',
    enforce: 'pre',
    apply: 'build',
    transform(code, id) {
      if (!/\/src\/.*\.ts$/.test(id) || /\.styles\.ts$/.test(id) || !code.includes('html`')) return null;
      const out = new MagicString(code);
      for (const match of code.matchAll(BREAK)) out.remove(match.index, match.index + match[0].length);
      return out.hasChanged() ? { code: out.toString(), map: out.generateMap({ hires: true, source: id }) } : null;
    },
  };
}

/**
 * Property names the minifier shortens in the script-tag bundle (identifiers it shortens anyway):
 * the widget's own, read and written only inside the bundle, each name used for nothing else there.
 * Never a name the page, the proxy's JSON, the texts (`Translation`, also read by the language
 * chunks), the environment, an event's detail, lit or the DOM uses: those keep their names. The
 * source keeps readable names; test/browser/bundle.test.ts and the end-to-end tests run the bundle.
 */
const INTERNAL_PROPERTIES = [
  // LocaleController, PaymentSessionController, StatusController and their options, ProxyClient.
  'hasTranslation|localeReady|startIfNew',
  // ClipboardController, CountdownController, CodeOnScreen, the pending screen's fields, the element's inner state.
  'reset|fraction|copyState|check|path|announcement|timeAnnouncement|phoneScreen|applyTexts|copyCode|urlOf',
  // Keys of src/shared/wire.ts's path and stream constants (the server has its own copy of them).
  'payments|paymentEvents|checkouts|retryMs|keepAliveMs',
  // The takeover's and the screens' own (src/views/screens.ts).
  'adopt|followed|serverMarkup|claim|extras',
].join('|');

/**
 * The names the later chunk (src/later.ts) reads or calls across the chunk's edge, shortened in both
 * the script and that chunk to the same names: the session's members marked "the later chunk's", the
 * status controller's options (client, onView, onError, onConnection, isFinal), follow, checkNow, the
 * client's methods, ProxyError's wait, the kit's (src/kit.ts) classes and helpers, and the pending
 * screen's fields and context its buttons read. Not `payment` or `amount` (the element's own), the
 * chunk's exports (read off its module), or a name lit or the DOM uses (`host`, `options`); lit's
 * `html` and `nothing` are kit keys here, no property of lit's own code.
 */
const ACROSS_CHUNKS = (
  'phase|countdown|fail|i18n|announce|createPayment|checkoutPayment|getPayment|eventsUrl|created|retryAfterMs|' +
  'renewalsUsed|creating|askAgain|askRenew|sessionHost|sessionOptions|client|order|show|setState|' +
  'onView|onError|onConnection|isFinal|follow|checkNow|env|stream|say|html|nothing|statusLine|splitSeconds|PixErrorEvent|PixSaveEvent|PixStatusChangeEvent|PixPaidEvent|PixExpiredEvent|PixCanceledEvent|STATUS_STREAM|isPaymentView|ProxyError|isFinalStatus|connection|formatMoney|paidSeen|' +
  'seconds|receiver|qr|context|session|copyFirst'
).split('|');
/**
 * One fixed name each, the same in every chunk: `$` and a letter or two (`$a`... `$Z`, `$aa`...).
 * Never a name the code has already (checked at each build): a fixed name is not checked by the
 * mangler against the properties it leaves alone (lit's own are single letters, and so is the
 * texts' `t`), so an object with both would lose one.
 */
const LETTERS = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ';
const ACROSS_CHUNKS_NAMES = Object.fromEntries(
  ACROSS_CHUNKS.map((name, i) => [name, `$${LETTERS[i % LETTERS.length]}${i < LETTERS.length ? '' : LETTERS[Math.floor(i / LETTERS.length) - 1]}`]),
);
const FIXED_NAME = /(?<![\w$])\$[a-zA-Z]{1,2}(?![\w$])/;

/**
 * Shortens property names before the minifier runs (the bundler's own property mangling refuses
 * builds of several chunks): in the script, INTERNAL_PROPERTIES (no other chunk uses those names)
 * and ACROSS_CHUNKS; in the chunks that follow the first QR, ACROSS_CHUNKS, to the same names.
 */
function mangleInternalProperties(script: string, later: string[]): Plugin {
  return {
    name: 'mangle-internal-properties',
    apply: 'build',
    renderChunk(code, chunk) {
      if (chunk.fileName !== script && !later.includes(chunk.fileName)) return null;
      const names = chunk.fileName === script ? `${INTERNAL_PROPERTIES}|${ACROSS_CHUNKS.join('|')}` : ACROSS_CHUNKS.join('|');
      // The script reads a chunk's exports off its module by name: one the script shortens would be lost.
      const shortened = new RegExp(`^(${INTERNAL_PROPERTIES}|${ACROSS_CHUNKS.join('|')})$`);
      const lost = chunk.fileName === script ? [] : chunk.exports.filter((name) => shortened.test(name));
      if (lost.length) this.error(`${chunk.fileName} exports ${lost.join(', ')}, a name the script shortens: rename the export`);
      const taken = FIXED_NAME.exec(code);
      if (taken) this.error(`${chunk.fileName} has a name of the fixed ones already (${taken[0]}): ACROSS_CHUNKS_NAMES must change`);
      const result = minifySync(chunk.fileName, code, {
        module: true,
        compress: false,
        mangle: false,
        codegen: { removeWhitespace: false },
        mangleProps: { include: new RegExp(`^(${names})$`), cache: ACROSS_CHUNKS_NAMES },
        sourcemap: true,
      });
      if (result.errors.length) this.error(result.errors.map((e) => e.message).join('\n'));
      return { code: result.code, map: result.map };
    },
  };
}

/**
 * Terser's compressor, three passes, on every chunk before the bundler's own minifier mangles and
 * compresses it: it folds what one pass leaves (the script 174 B smaller gzipped than the bundler's
 * minifier alone). Only options that keep semantics (no `unsafe*`, `pure_getters` or `keep_fargs`:
 * together they saved 7 B more). Terser mangles nothing here: the bundler's minifier does, better.
 */
function compressWithTerser(): Plugin {
  return {
    name: 'compress-with-terser',
    apply: 'build',
    async renderChunk(code) {
      const result = await terserMinify(code, {
        module: true,
        ecma: 2020,
        compress: { passes: 3 },
        mangle: false,
        format: { comments: false },
        sourceMap: { asObject: true },
      });
      return { code: result.code!, map: result.map as string };
    },
  };
}

/** Stands for the build's version in the chunks' URLs until every file is written (the same length). */
const VERSION_PLACEHOLDER = '__pixv__';

/**
 * The build's version in every URL of a chunk (`./pix-checkout.later.js?v=<version>`), and the
 * manifest the proxy reads (src/shared/widget-files.ts). The version is a hash of every file as written,
 * with a placeholder where the version goes; then the placeholder becomes the version, which keeps
 * the source maps' columns. A chunk whose name is not in WIDGET_CHUNKS fails the build: the proxy
 * serves those names alone.
 */
function versionChunks(): Plugin {
  // `./pix-checkout.<chunk>.js` as an import's string, the name widgetChunkFile writes.
  const [before, after] = `./${widgetChunkFile('\0')}`.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&').split('\0');
  const chunkUrl = new RegExp(`${before}(?:${WIDGET_CHUNKS.join('|')})${after}(?=[\`'"])`, 'g');
  return {
    name: 'version-chunks',
    apply: 'build',
    renderChunk(code, chunk) {
      if (!chunk.isEntry && !(WIDGET_CHUNKS as readonly string[]).includes(chunk.name))
        this.error(`a chunk named ${chunk.name}: the proxy serves ${WIDGET_CHUNKS.join(', ')} alone (src/shared/widget-files.ts)`);
      const text = new MagicString(code);
      for (const match of code.matchAll(chunkUrl)) text.appendLeft(match.index + match[0].length, `?${WIDGET_VERSION_PARAM}=${VERSION_PLACEHOLDER}`);
      return text.hasChanged() ? { code: text.toString(), map: text.generateMap({ hires: true }) } : null;
    },
    generateBundle(_options, bundle) {
      const files = Object.values(bundle)
        .filter((file) => file.type === 'chunk')
        .sort((a, b) => (a.fileName < b.fileName ? -1 : 1));
      const hash = createHash('sha256');
      for (const file of files) hash.update(file.fileName).update('\0').update(file.code).update('\0');
      const version = hash.digest('base64url').slice(0, VERSION_PLACEHOLDER.length);
      if (!WIDGET_VERSION.test(version)) this.error(`the version ${version} is not what src/shared/widget-files.ts's WIDGET_VERSION reads`);
      for (const file of files) file.code = file.code.replaceAll(VERSION_PLACEHOLDER, version);
      const chunks = WIDGET_CHUNKS.map(widgetChunkFile).filter((name) => name in bundle);
      const entry = files.find((file) => file.isEntry);
      if (entry?.fileName !== WIDGET_SCRIPT_FILE) this.error(`the script is ${entry?.fileName}, not ${WIDGET_SCRIPT_FILE}`);
      this.emitFile({ type: 'asset', fileName: WIDGET_MANIFEST_FILE, source: `${JSON.stringify({ version, chunks } satisfies WidgetManifest)}\n` });
    },
  };
}

/**
 * Lit's css-tag module, as reactive-element imports it, replaced by src/css-tag.ts (the same exports,
 * with only what the widget needs: 203 B gzip of the script).
 */
function smallCssTag(): Plugin {
  const file = fileURLToPath(new URL('./src/css-tag.ts', import.meta.url));
  return {
    name: 'small-css-tag',
    enforce: 'pre',
    resolveId(source, importer) {
      return source === './css-tag.js' && importer && /[\\/]@lit[\\/]reactive-element[\\/]/.test(importer) ? file : null;
    },
  };
}

/**
 * The script-tag build: one ES module with lit and our QR encoder (src/qr-encoder.ts) inside, fully
 * minified, and a small module per language besides pt-BR, loaded only by pages that speak it.
 */
export default defineConfig({
  plugins: [
    smallCssTag(),
    minifyCssTemplates(),
    collapseTemplateLineBreaks(),
    versionChunks(),
    compressWithTerser(),
    mangleInternalProperties('pix-checkout.js', ['pix-checkout.later.js', 'pix-checkout.status.js']),
    sizeBudget('dist/pix-checkout.js'),
  ],
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
      // demand (src/locales/index.ts) and the "Salvar QR Code" drawing (src/save.ts) are files beside
      // the script, under fixed names the proxy serves (server/routes/widget-script.ts):
      // pix-checkout.en.js, pix-checkout.es.js, pix-checkout.save.js; and what the first QR does not
      // need, loaded once it is on screen: pix-checkout.later.js (src/later.ts) and
      // pix-checkout.status.js (src/controllers/status.ts).
      output: { minify: true, comments: false, chunkFileNames: 'pix-checkout.[name].js' },
    },
  },
});
