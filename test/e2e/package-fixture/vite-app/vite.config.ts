// A merchant's Vite app during development: the page is served by Vite, `/api` by the proxy.
// `npx pix-checkout serve` (in a project that installed pix-checkout-server) listens on
// http://127.0.0.1:8787; the package test passes its own proxy.
import { defineConfig } from 'vite';

const proxy = { '/api': { target: process.env.PIX_PROXY_URL ?? 'http://127.0.0.1:8787' } };

export default defineConfig({
  server: { proxy },
  preview: { proxy },
});
