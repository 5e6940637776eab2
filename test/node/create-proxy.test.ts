/**
 * `createProxy` (pix-checkout-server): the proxy built from the same configuration as `pix-checkout
 * serve`, mounted in a plain node:http server beside the merchant's own routes. Against a real
 * sandbox over HTTPS (credentials and CA file, as in production) and in sandbox mode (nothing set).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { getRequestListener } from '@hono/node-server';
import { PaymentView } from '../../src/shared/contract.ts';
import { SANDBOX_DEFAULTS, proxyConfig } from '../../server/config/index.ts';
import { createApp } from '../../server/app.ts';
import { closeServer } from '../../server/http/close-server.ts';
import { createLogger } from '../../server/log.ts';
import { createProxy, type MountedProxy } from '../../server/proxy.ts';
import { startSandbox, type RunningSandbox } from '../../server/sandbox/server.ts';
import { sandboxPartnerEnv } from '../support/cluster-harness.ts';

const silent = createLogger({ level: 'silent' });

/** The merchant's server: its own route, and everything under /api handed to the proxy. */
async function mount(proxy: MountedProxy): Promise<{ server: Server; url: string }> {
  const handle = getRequestListener(proxy.app.fetch);
  const server = createServer((req, res) => {
    if (req.url?.startsWith('/api/')) return void handle(req, res);
    res.writeHead(200, { 'content-type': 'text/plain' }).end('the shop');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

/** The sandbox's control API (the customer's bank), asked in process. */
const control = (sandbox: RunningSandbox) => (path: string) => Promise.resolve(sandbox.publicApp.request(`/_sandbox/${path}`, { method: 'POST' }));

/** A payment created through the mounted proxy, paid at the sandbox, then read back. */
async function payAndRead(url: string, sandboxControl: (path: string) => Promise<Response>, origin?: string) {
  const headers: Record<string, string> = { 'content-type': 'application/json', ...(origin ? { origin } : {}) };
  const created = await fetch(`${url}/api/payments`, { method: 'POST', headers, body: JSON.stringify({ value: 15.5 }) });
  assert.equal(created.status, 201);
  if (origin) assert.equal(created.headers.get('access-control-allow-origin'), origin);
  const view = PaymentView.parse(await created.json());
  assert.equal(view.status, 'pending');
  assert.equal((await sandboxControl(`payments/${view.reference}/pay`)).status, 200);
  const read = PaymentView.parse(await (await fetch(`${url}/api/payments/${view.reference}`)).json());
  return { view, read };
}

describe('createProxy mounted in node:http', () => {
  let dir: string;
  let reference: string | undefined;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'pix-mount-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  test('with partner credentials and a CA file, as in production', async () => {
    const warned: string[] = [];
    const sandbox: RunningSandbox = await startSandbox();
    const caFile = join(dir, 'ca.pem');
    writeFileSync(caFile, sandbox.ca);
    const proxy = await createProxy(
      proxyConfig({
        ...sandboxPartnerEnv(sandbox.url, caFile, SANDBOX_DEFAULTS.userAgent),
        PIX_API_KEY: 'k'.repeat(40),
        PIX_ALLOWED_ORIGINS: 'https://shop.example',
        PIX_OPEN_AMOUNT: 'true',
        // Every read asks the partner: no webhook is registered here.
        PIX_STALE_AFTER_MS: '0',
        PIX_DATA_DIR: join(dir, 'production'),
      }),
      createLogger({ level: 'warn', destination: { write: (line: string) => void warned.push(line) } }),
    );
    const { server, url } = await mount(proxy);
    try {
      assert.equal(proxy.sandbox, null);
      assert.equal(await (await fetch(url)).text(), 'the shop', "the merchant's own routes still answer");
      const { read } = await payAndRead(url, control(sandbox), 'https://shop.example');
      assert.equal(read.status, 'paid');
      const refused = await fetch(`${url}/api/payments`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', origin: 'https://evil.example' },
        body: JSON.stringify({ value: 15.5 }),
      });
      assert.equal(refused.status, 403, 'origins outside PIX_ALLOWED_ORIGINS are refused');
      // Neither PIX_WEBHOOK_SECRET_PATH nor PIX_WEBHOOK_SOURCE_IPS: said at start and in /ready.
      const open = 'the partner webhook intake is open to anyone: set PIX_WEBHOOK_SECRET_PATH or PIX_WEBHOOK_SOURCE_IPS';
      assert.ok(warned.some((line) => (JSON.parse(line) as { msg: string }).msg === open));
      const ready = (await (await proxy.app.request('/ready')).json()) as { status: string; warnings?: string[] };
      // Nor PIX_DATA_KEY: documents at rest unencrypted, said at start and in /ready too.
      const clear = "customers' documents are stored unencrypted: set PIX_DATA_KEY (openssl rand -base64 32)";
      assert.ok(warned.some((line) => (JSON.parse(line) as { msg: string }).msg === clear));
      assert.deepEqual([ready.status, ready.warnings], ['ready', [open, clear]]);
    } finally {
      proxy.endStreams();
      await closeServer(server);
      await proxy.close();
      await sandbox.close();
    }
  });

  test('outside the sandbox with neither PIX_ALLOWED_ORIGINS nor PIX_PUBLIC_URL: said at start and in /ready, and the 403 names the origin and both', async () => {
    const sandbox: RunningSandbox = await startSandbox();
    const caFile = join(dir, 'no-origins-ca.pem');
    writeFileSync(caFile, sandbox.ca);
    const production = {
      ...sandboxPartnerEnv(sandbox.url, caFile, SANDBOX_DEFAULTS.userAgent),
      PIX_API_KEY: 'k'.repeat(40),
      PIX_OPEN_AMOUNT: 'true',
      PIX_WEBHOOK_SECRET_PATH: 's'.repeat(32),
      PIX_DATA_KEY: Buffer.alloc(32, 7).toString('base64'),
    };
    // The shop's own page, on https://shop.example (its TLS in front of this server), creating a payment.
    const shopOrigin = 'https://shop.example';
    const ownPagePost = (url: string) =>
      fetch(`${url}/api/payments`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', origin: shopOrigin },
        body: JSON.stringify({ value: 15.5 }),
      });
    try {
      const warned: string[] = [];
      const proxy = await createProxy(
        proxyConfig({ ...production, PIX_DATA_DIR: join(dir, 'no-origins') }),
        createLogger({ level: 'warn', destination: { write: (line: string) => void warned.push(line) } }),
      );
      const { server, url } = await mount(proxy);
      try {
        const lines = warned.map((line) => (JSON.parse(line) as { msg: string }).msg).filter((msg) => msg.startsWith('no page may call'));
        assert.equal(lines.length, 1, `one start line: ${JSON.stringify(warned)}`);
        const [said] = lines;
        assert.ok(said!.includes('PIX_ALLOWED_ORIGINS') && said!.includes('PIX_PUBLIC_URL'), said);
        const ready = (await (await proxy.app.request('/ready')).json()) as { status: string; warnings?: string[] };
        assert.deepEqual([ready.status, ready.warnings], ['ready', [said]], 'the only warning: the others are set');
        const refused = await ownPagePost(url);
        assert.equal(refused.status, 403);
        const { error } = (await refused.json()) as { error: { code: string; message: string } };
        assert.equal(error.code, 'forbidden');
        for (const part of [`"${shopOrigin}"`, 'PIX_ALLOWED_ORIGINS', 'PIX_PUBLIC_URL'])
          assert.ok(error.message.includes(part), `${error.message} names ${part}`);
      } finally {
        proxy.endStreams();
        await closeServer(server);
        await proxy.close();
      }
      // PIX_PUBLIC_URL set to the shop's URL: no warning, and its page may create a payment.
      warned.length = 0;
      const fixed = await createProxy(
        proxyConfig({ ...production, PIX_PUBLIC_URL: shopOrigin, PIX_DATA_DIR: join(dir, 'public-url') }),
        createLogger({ level: 'warn', destination: { write: (line: string) => void warned.push(line) } }),
      );
      const mounted = await mount(fixed);
      try {
        assert.deepEqual(warned, []);
        assert.equal(((await (await fixed.app.request('/ready')).json()) as { warnings?: string[] }).warnings, undefined);
        assert.equal((await ownPagePost(mounted.url)).status, 201);
      } finally {
        fixed.endStreams();
        await closeServer(mounted.server);
        await fixed.close();
      }
    } finally {
      await sandbox.close();
    }
  });

  test('with nothing configured: an in-process sandbox, and a payment paid there is read as paid', async () => {
    const proxy = await createProxy(proxyConfig({ PIX_OPEN_AMOUNT: 'true', PIX_STALE_AFTER_MS: '0', PIX_DATA_DIR: join(dir, 'sandbox') }), silent);
    const { server, url } = await mount(proxy);
    try {
      assert.ok(proxy.sandbox, 'sandbox mode');
      const { view, read } = await payAndRead(url, control(proxy.sandbox));
      assert.equal(read.reference, view.reference);
      assert.equal(read.status, 'paid');
      reference = view.reference;
    } finally {
      proxy.endStreams();
      await closeServer(server);
      await proxy.close();
    }
  });

  test('PIX_READY_CACHE_MS: how long /ready keeps its answer', async () => {
    /** What /ready says of the pending code before and after a first payment verifies it. */
    const pendingAcrossPayment = async (name: string, env: Record<string, string>) => {
      const proxy = await createProxy(proxyConfig({ PIX_OPEN_AMOUNT: 'true', PIX_DATA_DIR: join(dir, name), ...env }), silent);
      const pending = async () =>
        ((await (await proxy.app.request('/ready')).json()) as { status_codes: { codes: { pending: string } } }).status_codes.codes.pending;
      try {
        const before = await pending();
        const created = await proxy.app.request('/api/payments', {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ value: 2 }),
        });
        assert.equal(created.status, 201);
        return [before, await pending()];
      } finally {
        proxy.endStreams();
        await proxy.close();
      }
    };
    assert.deepEqual(await pendingAcrossPayment('ready-default', {}), ['unverified', 'unverified'], 'the default keeps the answer 5 s');
    assert.deepEqual(await pendingAcrossPayment('ready-0', { PIX_READY_CACHE_MS: '0' }), ['unverified', 'verified'], '0 answers anew at every probe');
  });

  test('a second sandbox-mode proxy does not serve the payments of the first, gone sandbox', async () => {
    assert.ok(reference, 'the test above made a payment');
    const proxy = await createProxy(proxyConfig({ PIX_OPEN_AMOUNT: 'true', PIX_DATA_DIR: join(dir, 'sandbox') }), silent);
    const { server, url } = await mount(proxy);
    try {
      const res = await fetch(`${url}/api/payments/${reference}`);
      assert.equal(res.status, 404);
    } finally {
      proxy.endStreams();
      await closeServer(server);
      await proxy.close();
    }
  });
});

test('createApp (the lower level of mounting): a part not set says so by name', () => {
  const store = {} as MountedProxy['store'];
  const partner = {} as MountedProxy['partner'];
  const unset = undefined as unknown as typeof store;
  assert.throws(() => createApp({ partner, store: unset }), /^TypeError: createApp: store is not set \(/);
  assert.throws(() => createApp({ partner: undefined as unknown as typeof partner, store }), /^TypeError: createApp: partner is not set \(/);
  assert.throws(() => createApp(undefined as unknown as Parameters<typeof createApp>[0]), /^TypeError: createApp: deps is not set \(/);
});
