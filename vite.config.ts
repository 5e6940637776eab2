import { defineConfig } from 'vite';

/** The script-tag build: one ES module with lit, qrcode and zod inside, minified. */
export default defineConfig({
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
  },
});
