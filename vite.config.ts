import { fileURLToPath } from 'node:url';
import { defineConfig, type Plugin } from 'vite';

const byteSegments = fileURLToPath(new URL('./src/vendor/qr-byte-segments.cjs', import.meta.url));
const noModeDetection = fileURLToPath(new URL('./src/vendor/qr-no-mode-detection.cjs', import.meta.url));
const levelMOnly = fileURLToPath(new URL('./src/vendor/qr-ec-level-m.cjs', import.meta.url));

/**
 * qrcode's encoder trimmed to what a BR Code needs: byte-mode segments and level M (the files in
 * src/vendor/ say why). test/browser/bundle.test.ts checks the built bundle draws the same symbol as
 * the untrimmed encoder.
 */
export function qrByteModeOnly(): Plugin {
  return {
    name: 'qr-byte-mode-only',
    enforce: 'pre',
    resolveId(source, importer) {
      if (!importer || !/qrcode[\\/]lib[\\/]core[\\/]/.test(importer)) return null;
      if (source === './segments' && importer.endsWith('qrcode.js')) return byteSegments;
      // Only the mode detection reads these patterns, and byte mode needs no detection.
      if (source === './regex' && importer.endsWith('mode.js')) return noModeDetection;
      // The widget encodes at level M only: one column of the error correction tables.
      if (source === './error-correction-code') return levelMOnly;
      return null;
    },
  };
}

/** The script-tag build: one ES module with lit and qrcode inside, fully minified. */
export default defineConfig({
  plugins: [qrByteModeOnly()],
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    target: 'es2022',
    minify: true,
    sourcemap: true,
    lib: {
      entry: 'src/define.ts',
      formats: ['es'],
      fileName: () => 'pix-checkout.js',
    },
    rolldownOptions: {
      // Library mode keeps whitespace and comments unless told otherwise.
      output: { minify: true, comments: false },
    },
  },
});
