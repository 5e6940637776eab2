import { fileURLToPath } from 'node:url';
import { defineConfig, type Plugin } from 'vite';

const byteSegments = fileURLToPath(new URL('./src/vendor/qr-byte-segments.cjs', import.meta.url));

/** qrcode's encoder with byte-mode segments only (src/vendor/qr-byte-segments.cjs says why). */
export function qrByteModeOnly(): Plugin {
  return {
    name: 'qr-byte-mode-only',
    enforce: 'pre',
    resolveId(source, importer) {
      if (source === './segments' && importer && /qrcode[\\/]lib[\\/]core[\\/]qrcode\.js$/.test(importer)) return byteSegments;
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
