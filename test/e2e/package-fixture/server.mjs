// Runs inside the folder where the packed tarballs were installed: everything comes from the packages,
// nothing from the repository. createApp mounted in a plain node:http server against the packaged
// sandbox, plus a page that loads the script-tag build the proxy serves. Prints its URL, stops on SIGTERM.
import { createServer } from 'node:http';
import { readFileSync } from 'node:fs';
import { getRequestListener } from '@hono/node-server';
import { SANDBOX_DEFAULTS, closeServer, createApp, createPartnerClient, openSqliteStore } from 'pix-checkout-server';
import { startSandbox } from 'pix-checkout-server/sandbox';
import { LIMITS } from 'pix-checkout-server/shared';

const sandbox = await startSandbox();
// The store in this folder, which the test removes.
const store = openSqliteStore({ dataDir: 'data' });
const partner = createPartnerClient({
  baseUrl: sandbox.url,
  ca: sandbox.ca,
  userAgent: SANDBOX_DEFAULTS.userAgent,
  credentials: { email: SANDBOX_DEFAULTS.email, accessKey: SANDBOX_DEFAULTS.accessKey },
  tokenStore: store.tokens,
});
const shutdown = new AbortController();
const app = createApp({
  partner,
  store,
  openAmount: { min: LIMITS.paymentValue.min, max: LIMITS.paymentValue.max },
  allowedOrigins: ['*'],
  signal: shutdown.signal,
  background: true,
  now: sandbox.state.clock.now,
});
const proxy = getRequestListener(app.fetch);
const page = readFileSync(new URL('./page.html', import.meta.url));

const server = createServer((req, res) => {
  if (req.url === '/') {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(page);
    return;
  }
  if (req.url?.startsWith('/api/') || req.url === '/health') return proxy(req, res);
  res.writeHead(404).end();
});
server.listen(0, '127.0.0.1', () => console.log(`listening http://127.0.0.1:${server.address().port}`));

process.on('SIGTERM', async () => {
  shutdown.abort();
  await closeServer(server);
  await app.pix.stop();
  await store.close();
  await sandbox.close();
  console.log('stopped');
  process.exit(0);
});
