import { defineConfig } from 'vite';
import { minifyCssTemplates } from './vite.config.ts';

/**
 * The package's element entries for bundlers (`pix-checkout`, `pix-checkout/element`): ES modules
 * that import lit (the app's bundler dedupes it with any other Lit component) and carry the QR
 * encoder (src/qr-encoder.ts) inside, like the script-tag build.
 * Not minified: the app's bundler does that. Types come from tsc (tsconfig.build.json, lib/).
 */
export default defineConfig({
  plugins: [minifyCssTemplates()],
  build: {
    outDir: 'dist/npm',
    emptyOutDir: true,
    target: 'es2022',
    minify: false,
    sourcemap: true,
    lib: {
      entry: { index: 'src/define.ts', element: 'src/element.ts' },
      formats: ['es'],
      fileName: (_format, name) => `${name}.js`,
    },
    rolldownOptions: {
      external: [/^lit($|\/)/, /^@lit\//],
      output: { chunkFileNames: 'chunks/[name].js' },
    },
  },
});
