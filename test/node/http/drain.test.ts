/**
 * The drain gate (http/drain.ts) in the app, asked in process: before `drain()` nothing changes;
 * after it, `/ready` and new work (POSTs under the API, new status streams) answer 503 shutting_down
 * with Retry-After (a page's with its CORS headers, so it reads the code), while reads, preflights,
 * `/health` and the partner's notifications are still served.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { ErrorBody } from '../../../src/shared/errors.ts';
import { SANDBOX_DEFAULTS, proxyConfig } from '../../../server/config/index.ts';
import { createLogger } from '../../../server/log.ts';
import { createProxy, type MountedProxy } from '../../../server/proxy.ts';
import { startSandbox, type RunningSandbox } from '../../../server/sandbox/server.ts';

const SHOP = 'https://shop.example';
const API_KEY = 'k'.repeat(40);
let dir: string;
let sandbox: RunningSandbox;
let proxy: MountedProxy;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'pix-drain-'));
  sandbox = await startSandbox();
  writeFileSync(join(dir, 'ca.pem'), sandbox.ca);
  proxy = await createProxy(
    proxyConfig({
      PIX_BASE_URL: sandbox.url,
      PIX_CA_FILE: join(dir, 'ca.pem'),
      PIX_EMAIL: SANDBOX_DEFAULTS.email,
      PIX_ACCESS_KEY: SANDBOX_DEFAULTS.accessKey,
      PIX_USER_AGENT: SANDBOX_DEFAULTS.userAgent,
      PIX_API_KEY: API_KEY,
      PIX_ALLOWED_ORIGINS: SHOP,
      PIX_OPEN_AMOUNT: 'true',
      PIX_WEBHOOK_SOURCE_IPS: '127.0.0.1',
      PIX_DATA_DIR: join(dir, 'data'),
    }),
    createLogger({ level: 'silent' }),
    { background: false },
  );
});
after(async () => {
  proxy.endStreams();
  await proxy.close();
  await sandbox.close();
  rmSync(dir, { recursive: true, force: true });
});

const ask = (path: string, init: RequestInit = {}) => proxy.app.request(path, init);
const openPayment = () =>
  ask('/api/payments', { method: 'POST', headers: { 'content-type': 'application/json', origin: SHOP }, body: JSON.stringify({ value: 2 }) });
const newCheckout = (order: string) =>
  ask('/api/checkouts', {
    method: 'POST',
    headers: { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json' },
    body: JSON.stringify({ value: 3, order_id: order }),
  });

async function shuttingDown(res: Response): Promise<void> {
  assert.equal(res.status, 503);
  assert.equal(res.headers.get('retry-after'), '1');
  assert.equal(ErrorBody.parse(await res.json()).error.code, 'shutting_down');
}

describe('draining', () => {
  let reference = '';

  test('before drain(): /ready is 200 and new work is taken', async () => {
    assert.equal((await ask('/ready')).status, 200);
    const created = await openPayment();
    assert.equal(created.status, 201);
    reference = ((await created.json()) as { reference: string }).reference;
    assert.equal((await newCheckout(`drain-before-${process.pid}`)).status, 201);
  });

  test('after drain(): /ready, a create, a checkout and a new stream answer 503 shutting_down', async () => {
    proxy.drain();
    await shuttingDown(await ask('/ready'));
    const page = await openPayment();
    assert.equal(page.headers.get('access-control-allow-origin'), SHOP, "a page's answer carries its CORS headers");
    await shuttingDown(page);
    await shuttingDown(await newCheckout(`drain-after-${process.pid}`));
    await shuttingDown(await ask(`/api/payments/${reference}/events`));
    await shuttingDown(
      await ask(`/api/checkouts/anything/refunds`, {
        method: 'POST',
        headers: { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json' },
        body: '{}',
      }),
    );
  });

  test('after drain(): reads, preflights, /health and the partner notifications are still served', async () => {
    assert.equal((await ask(`/api/payments/${reference}`)).status, 200);
    assert.equal((await ask('/health')).status, 200);
    const preflight = await ask('/api/payments', {
      method: 'OPTIONS',
      headers: { origin: SHOP, 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type' },
    });
    assert.equal(preflight.status, 204);
    // Not from a listed source (no socket here): refused by the intake's own rule, not by the drain.
    const notification = await ask('/api/webhooks/partner', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    assert.equal(notification.status, 403);
  });

  test('after endStreams(): a stream whose first read was still in flight is told to end at once, not left open', async () => {
    proxy.endStreams();
    let told = false;
    proxy.app.pix.payments.watches.onClose(() => (told = true));
    assert.equal(told, true);
  });
});
