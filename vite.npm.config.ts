import { defineConfig } from 'vite';
import { minifyCssTemplates, qrByteModeOnly } from './vite.config.ts';

/**
 * The package's element entries for bundlers (`pix-checkout`, `pix-checkout/element`): ES modules
 * that import lit (the app's bundler dedupes it with any other Lit component) and carry qrcode
 * inside, trimmed like the script-tag build (qrcode is CommonJS; no bundler has to convert it).
 * Not minified: the app's bundler does that. Types come from tsc (tsconfig.build.json, lib/).
 */
export default defineConfig({
  plugins: [minifyCssTemplates(), qrByteModeOnly()],
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
