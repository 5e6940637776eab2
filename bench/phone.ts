/**
 * `npm run bench:phone [-- --runs N --modes a,b,c,d --profile lighthouse-devtools --height 823 --cpu-profile]`:
 * a customer's phone, measured. Each run loads the demo store's order page COLD (a new incognito
 * context, cache disabled) in headless Chromium under Lighthouse's mobile profile, applied through
 * the DevTools protocol: 4x CPU slowdown, 150 ms latency, 1.6 Mbps down, 750 kbps up, a 412 px wide
 * screen (1200 px tall: see PHONE) at DPR 1.75 with touch and a mobile user agent. It prints p50 /
 * min / max over the runs of:
 *   - first contentful paint (the page's paint timing entry);
 *   - QR painted: the first screen frame (CDP Page.startScreencast, with its timestamps) in which jsqr
 *     decodes the payment's exact code: what a phone camera would read, not our own marks; the
 *     widget's `pix-checkout:qr` mark is printed beside it;
 *   - copy button usable: the first moment a probe (Runtime.evaluate from CDP, every 25 ms) finds the
 *     element upgraded and updated (`hasUpdated`: client-rendered or hydrated, so the copy button has
 *     its click handler) with its copy button on screen, or, server-rendered, the render's inline copy
 *     handler in place (its `pix-checkout:copy-ready` mark); the probe runs on the page's main thread,
 *     so it answers no earlier than a tap would be handled;
 *   - bytes the page loaded (Network domain transfer sizes): total, and the payment UI's share.
 * for four pages: (a) the script tag, the payment issued by the widget's first call; (b) the script
 * tag with the payment issued at creation and `modulepreload`; (c) server-rendered (the widget with
 * its payment inside, declarative shadow DOM); (d) Adyen Web's Pix component (@adyen/adyen-web, its
 * payment-action path, every URL it calls pointed at loopback). docs/performance.md#on-a-customers-phone
 * describes the setup exactly. Every file is served by one loopback front that gzips (-9) whatever is
 * text, the same for our script and Adyen's, as a CDN or nginx would.
 *
 * Figures to read, never asserted; exits 1 when a run is broken (no QR decoded, a page error).
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { gzipSync } from 'node:zlib';
import puppeteer, { type Browser, type CDPSession, type Page, type Protocol } from 'puppeteer-core';
import { build } from 'vite';
import { renderOrderPage } from '../demo/order-page.ts';
import { startDemo } from '../demo/server.ts';
import { createCheckoutClient, renderPaymentRequest } from '../server/index.ts';
import { FIRST_SCREEN, type CheckoutView } from '../src/shared/index.ts';
import { CHROME_ARGS, findChrome } from '../test/support/find-chrome.mjs';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const ADYEN_VERSION = (JSON.parse(readFileSync(`${ROOT}node_modules/@adyen/adyen-web/package.json`, 'utf8')) as { version: string }).version;

const { values: args } = parseArgs({
  options: {
    runs: { type: 'string', default: '7' },
    profile: { type: 'string', default: 'lighthouse' },
    modes: { type: 'string', default: 'a,b,c,d' },
    height: { type: 'string', default: '1200' },
    /** Use dist/ as it is (`npm run build` or `vite build` made it) instead of building it first. */
    'skip-build': { type: 'boolean', default: false },
    /** Record a JavaScript CPU profile of each run (V8's sampler; it costs main-thread time) and print where the main thread went until the QR was painted. */
    'cpu-profile': { type: 'boolean', default: false },
    /** Write each run's Chrome performance trace (the main thread's tasks, as DevTools' Performance panel shows them) into this folder: `<mode>-<run>.json`. */
    trace: { type: 'string' },
  },
});

/**
 * Lighthouse's mobile profile (its `mobileSlow4G` constants: rttMs 150, throughputKbps 1.6 * 1024,
 * uploadThroughputKbps 750, cpuSlowdownMultiplier 4), as byte rates the way Lighthouse's own DevTools
 * driver converts them (kbps * 1024 / 8). `lighthouse-devtools` is Lighthouse's DevTools-throttling
 * mode: request latency 150 * 3.75 = 562.5 ms and 0.9 of the throughput, its approximation of
 * packet-level throttling; the default is the profile's figures as they are.
 */
const PROFILES = {
  lighthouse: { latencyMs: 150, downloadBytesPerS: (1.6 * 1024 * 1024) / 8, uploadBytesPerS: (750 * 1024) / 8, cpuSlowdown: 4 },
  'lighthouse-devtools': { latencyMs: 150 * 3.75, downloadBytesPerS: (0.9 * 1.6 * 1024 * 1024) / 8, uploadBytesPerS: (0.9 * 750 * 1024) / 8, cpuSlowdown: 4 },
} as const;
type ProfileName = keyof typeof PROFILES;

/**
 * Lighthouse's mobile screen and user agent (a moto g power, Chrome on Android), but taller by
 * default: on a phone the widget puts the copy button first and the QR below it, under the fold of
 * an 823 px screen, and a screencast frame holds only the viewport. `--height 823` is Lighthouse's
 * screen exactly (then QR painted is measured only where the QR fits in it).
 */
const PHONE = {
  width: 412,
  height: Number(args.height),
  deviceScaleFactor: 1.75,
  userAgent: 'Mozilla/5.0 (Linux; Android 11; moto g power (2022)) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/119.0.0.0 Mobile Safari/537.36',
};

const MODES = {
  a: "script tag, payment issued by the page (asked for by the page's head, which puts its first screen in)",
  b: 'script tag, payment in the page (payment-from) + modulepreload',
  c: 'server-rendered (declarative shadow DOM)',
  d: `Adyen Web ${ADYEN_VERSION} Pix (createFromAction)`,
} as const;
type Mode = keyof typeof MODES;

const RUNS = Number(args.runs);
if (!Number.isInteger(RUNS) || RUNS < 1) throw new Error(`--runs must be a whole number >= 1, not ${args.runs}`);
if (!(args.profile in PROFILES)) throw new Error(`--profile must be one of ${Object.keys(PROFILES).join(', ')}`);
if (!Number.isInteger(PHONE.height) || PHONE.height < 400) throw new Error(`--height must be a whole number of CSS pixels >= 400, not ${args.height}`);
const PROFILE_NAME = args.profile as ProfileName;
const PROFILE = PROFILES[PROFILE_NAME];
const SELECTED = args.modes.split(',').map((m) => m.trim()) as Mode[];
for (const m of SELECTED) if (!(m in MODES)) throw new Error(`--modes takes a comma list of ${Object.keys(MODES).join(', ')}; not ${m}`);

// ---------------------------------------------------------------------------------------------------
// Adyen Web, bundled as a merchant using the npm package would: `import {AdyenCheckout, Pix}`, tree-shaken
// and minified by the same Vite that builds our script; its one stylesheet as the package ships it.

const ADYEN_ENTRY = 'virtual:adyen-pix-entry';
async function buildAdyen(outDir: string): Promise<void> {
  await build({
    configFile: false,
    root: ROOT,
    logLevel: 'warn',
    plugins: [
      {
        name: 'adyen-pix-entry',
        resolveId: (id) => (id === ADYEN_ENTRY ? `\0${ADYEN_ENTRY}` : null),
        load: (id) => (id === `\0${ADYEN_ENTRY}` ? "export { AdyenCheckout, Pix } from '@adyen/adyen-web';" : null),
      },
    ],
    build: {
      outDir,
      emptyOutDir: true,
      copyPublicDir: false,
      minify: true,
      modulePreload: false,
      rollupOptions: {
        input: { 'adyen-pix': ADYEN_ENTRY },
        preserveEntrySignatures: 'exports-only',
        output: { entryFileNames: '[name].js', chunkFileNames: '[name]-[hash].js' },
      },
    },
  });
}

// ---------------------------------------------------------------------------------------------------
// The stack and the loopback front.

if (!args['skip-build']) await build({ logLevel: 'warn' });
const adyenDir = mkdtempSync(join(tmpdir(), 'bench-phone-adyen-'));
await buildAdyen(adyenDir);
const ADYEN_FILES = new Map(readdirSync(adyenDir).map((name) => [name, readFileSync(join(adyenDir, name))]));
ADYEN_FILES.set('adyen.css', readFileSync(`${ROOT}node_modules/@adyen/adyen-web/dist/es/adyen.css`));
rmSync(adyenDir, { recursive: true, force: true });
const size = (name: string, body: Buffer) =>
  `${name} ${(body.length / 1024).toFixed(1)} KB, gzip -9 ${(gzipSync(body, { level: 9 }).length / 1024).toFixed(1)} KB`;
const FILES = [size('pix-checkout.js', readFileSync(`${ROOT}dist/pix-checkout.js`)), ...[...ADYEN_FILES].map(([name, body]) => size(name, body))].join('; ');
/** Adyen fetches its translations for a locale other than en-US from its CDN: the package's en-US ones, served at that URL (the round trip is kept; the words are English). */
const ADYEN_TRANSLATIONS = JSON.stringify(
  ((await import(`${ROOT}node_modules/@adyen/adyen-web/dist/es/packages/server/translations/en-US.json.js`)) as { default: unknown }).default,
);
/** Stands in for Adyen's Pix logo (its CDN's images/logos/pix.svg), which is not in the package. */
const PIX_LOGO =
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 40 26"><rect width="40" height="26" rx="4" fill="#fff" stroke="#ddd"/><path d="M20 5l8 8-8 8-8-8z" fill="#32bcad"/></svg>';

// The store as deployed (no test panel): the page a customer gets.
const demo = await startDemo({ sandbox: false });
const client = createCheckoutClient({ url: demo.stack.apiUrl, apiKey: demo.stack.apiKey });
// The proxy loads its first screens' renderer when a page first asks: loaded here, as on a proxy that has served a page.
{
  const warm = await client.checkouts.create({ value: 1, order_id: `bench-phone-warm-${process.pid}` });
  await fetch(`${demo.stack.apiUrl}/checkouts/${warm.checkout_id}/payment?${FIRST_SCREEN.param}=pt-BR`, { method: 'POST' }).then((res) => res.text());
}

/** What each page of a run shows: set before the navigation, read by the front's routes. */
const pages = new Map<string, string>();
/** Adyen's QR image requests carry the code itself: code -> the sandbox's image of it. */
const qrImageByCode = new Map<string, string>();

const COMPRESSIBLE = /^(text\/(?!event-stream)|application\/(json|javascript)|image\/svg\+xml)/;
const gzipCache = new Map<string, Buffer>();
function gzip(body: Buffer): Buffer {
  const key = createHash('sha256').update(body).digest('base64');
  let out = gzipCache.get(key);
  if (!out) gzipCache.set(key, (out = gzipSync(body, { level: 9 })));
  return out;
}

/** Sends a body, gzipped when it is text and the browser accepts it (every file, ours and Adyen's, alike). */
function send(req: IncomingMessage, res: ServerResponse, status: number, headers: Record<string, string | string[]>, body: Buffer): void {
  const type = String(headers['content-type'] ?? '');
  if (COMPRESSIBLE.test(type) && /\bgzip\b/.test(req.headers['accept-encoding'] ?? '') && body.length > 0) {
    body = gzip(body);
    headers = { ...headers, 'content-encoding': 'gzip', vary: 'accept-encoding' };
  }
  res.writeHead(status, { ...headers, 'content-length': String(body.length) });
  res.end(body);
}

const json = (req: IncomingMessage, res: ServerResponse, body: unknown) =>
  send(req, res, 200, { 'content-type': 'application/json', 'cache-control': 'no-store' }, Buffer.from(JSON.stringify(body)));

/** The bench's own routes: the pages of a run, Adyen's files and its service stand-ins. Anything else goes to the demo. */
async function local(req: IncomingMessage, res: ServerResponse, url: URL): Promise<boolean> {
  const page = url.pathname.startsWith('/bench/page/') ? pages.get(url.pathname.slice('/bench/page/'.length)) : undefined;
  if (page !== undefined) {
    send(req, res, 200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' }, Buffer.from(page));
    return true;
  }
  if (!url.pathname.startsWith('/adyen/')) return false;
  const rest = url.pathname.slice('/adyen/'.length);
  const file = ADYEN_FILES.get(rest);
  if (file) {
    send(
      req,
      res,
      200,
      { 'content-type': rest.endsWith('.css') ? 'text/css' : 'text/javascript; charset=utf-8', 'cache-control': 'public, max-age=300' },
      file,
    );
  } else if (rest === 'checkoutshopper-test/utility/v1/barcode.png') {
    // Adyen builds `${loadingContext}utility/v1/barcode.png?type=qrCode&data=${qrCodeData}&clientKey=...`
    // without encoding the code: read it back raw, then the sandbox's image of that payment.
    const raw = /[?&]data=(.*)&clientKey=/.exec(url.search)?.[1];
    const image = raw === undefined ? undefined : qrImageByCode.get(decodeURIComponent(raw));
    if (!image) {
      send(req, res, 404, { 'content-type': 'application/json' }, Buffer.from('{"error":{"code":"not_found","message":"No such code."}}'));
    } else {
      const upstream = await fetch(image);
      send(
        req,
        res,
        upstream.status,
        { 'content-type': upstream.headers.get('content-type') ?? 'image/svg+xml', 'cache-control': 'no-store' },
        Buffer.from(await upstream.arrayBuffer()),
      );
    }
  } else if (rest === 'checkoutshopper-test/services/PaymentInitiation/v1/status') {
    // Adyen's status check: the payment stays pending (its first answer ends the component's loading state).
    json(req, res, { type: 'pending', resultCode: 'pending' });
  } else if (rest.startsWith('analytics/')) {
    json(req, res, { checkoutAttemptId: 'bench-attempt' });
  } else if (/^cdn\/sdk\/[^/]+\/translations\/[A-Za-z-]+\.json$/.test(rest)) {
    send(req, res, 200, { 'content-type': 'application/json', 'cache-control': 'public, max-age=300' }, Buffer.from(ADYEN_TRANSLATIONS));
  } else if (rest.startsWith('cdn/images/')) {
    send(req, res, 200, { 'content-type': 'image/svg+xml', 'cache-control': 'public, max-age=300' }, Buffer.from(PIX_LOGO));
  } else {
    send(req, res, 404, { 'content-type': 'application/json' }, Buffer.from('{"error":{"code":"not_found","message":"Not a bench route."}}'));
  }
  return true;
}

/** The front: our routes, else the demo's answer passed on (gzipped when text; streams as they come). */
const HOP = new Set(['host', 'connection', 'accept-encoding', 'content-length', 'transfer-encoding', 'keep-alive']);
const front = createServer((req, res) => {
  const url = new URL(req.url ?? '/', 'http://front');
  void (async () => {
    if (await local(req, res, url)) return;
    const abort = new AbortController();
    res.on('close', () => abort.abort());
    const headers = new Headers();
    for (const [name, value] of Object.entries(req.headers)) {
      if (HOP.has(name) || value === undefined) continue;
      // One origin, as a reverse proxy in front of the merchant's site would present it.
      const text = Array.isArray(value) ? value.join(', ') : value;
      headers.set(name, name === 'origin' || name === 'referer' ? text.replace(frontUrl, demo.url) : text);
    }
    const hasBody = req.method !== 'GET' && req.method !== 'HEAD';
    const upstream = await fetch(`${demo.url}${url.pathname}${url.search}`, {
      method: req.method,
      headers,
      body: hasBody ? (Readable.toWeb(req) as ReadableStream) : undefined,
      redirect: 'manual',
      signal: abort.signal,
      ...(hasBody ? { duplex: 'half' } : {}),
    });
    const out: Record<string, string | string[]> = {};
    upstream.headers.forEach((value, name) => {
      if (!HOP.has(name) && name !== 'content-encoding' && name !== 'set-cookie') out[name] = value;
    });
    const cookies = upstream.headers.getSetCookie();
    if (cookies.length) out['set-cookie'] = cookies;
    const type = upstream.headers.get('content-type') ?? '';
    if (!upstream.body || COMPRESSIBLE.test(type)) {
      send(req, res, upstream.status, out, Buffer.from(await upstream.arrayBuffer()));
    } else {
      res.writeHead(upstream.status, out);
      // A status stream: passed on as it comes, and dropped with the page.
      const stream = Readable.fromWeb(upstream.body as import('node:stream/web').ReadableStream);
      stream.on('error', () => res.destroy());
      stream.pipe(res);
    }
  })().catch((error: unknown) => {
    if (!res.headersSent) res.writeHead(502, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ error: { code: 'bad_gateway', message: `bench front: ${(error as Error).name}` } }));
  });
});
await new Promise<void>((resolve) => front.listen(0, '127.0.0.1', resolve));
const frontUrl = `http://127.0.0.1:${(front.address() as AddressInfo).port}`;

// ---------------------------------------------------------------------------------------------------
// The pages.

/** The store's order as its API answers it (POST /shop/orders). */
interface ShopOrder {
  order_id: string;
  checkout_id: string;
  total: number;
  [field: string]: unknown;
}

/** Places an order at the demo store as its page does (one coffee): its checkout is created with its payment (issue_payment). */
async function placeOrder(): Promise<ShopOrder> {
  const res = await fetch(`${frontUrl}/shop/orders`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ items: [{ product_id: 'cafe-especial', quantity: 1 }] }),
  });
  const order = (await res.json()) as ShopOrder;
  if (res.status !== 201 || typeof order.checkout_id !== 'string') throw new Error(`the store did not place the order: ${res.status} ${JSON.stringify(order)}`);
  return order;
}

/** Replaces `from` in a page, where it must be exactly once (a changed order page fails loudly). */
function replaceOnce(page: string, from: string | RegExp, to: string): string {
  const matches = page.match(typeof from === 'string' ? new RegExp(from.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'), 'g') : new RegExp(from.source, 'g'));
  if (matches?.length !== 1) throw new Error(`the order page changed: expected ${String(from)} once, found it ${matches?.length ?? 0} times`);
  return page.replace(from, () => to);
}

/**
 * (d): the same order page with Adyen's Pix in the widget's place: our script tag and element out,
 * Adyen's stylesheet and module (preloaded, like (b)'s) in the head, its container where the widget
 * was and its payment-action path below it. The merchant's server holds the action (from its
 * /payments call) and writes it into the page, as (b) and (c) hold their payment at creation. The
 * page's own script puts an element in the (now empty) checkout slot; without our script it stays an
 * unknown, empty element.
 */
function adyenOrderPage(page: string, action: Record<string, unknown>, value: number): string {
  const config = {
    environment: 'test',
    clientKey: 'test_BENCHLOOPBACKCLIENTKEY0000000',
    locale: 'pt-BR',
    countryCode: 'BR',
    amount: { value: Math.round(value * 100), currency: 'BRL' },
    analytics: { enabled: false },
    _environmentUrls: {
      // A `test_` client key must be used against a URL with `test` in it (Adyen's check).
      api: `${frontUrl}/adyen/checkoutshopper-test/`,
      analytics: `${frontUrl}/adyen/analytics/`,
      cdn: { images: `${frontUrl}/adyen/cdn/`, translations: `${frontUrl}/adyen/cdn/` },
    },
  };
  page = replaceOnce(
    page,
    '<script type="module" src="/api/pix-checkout.js"></script>',
    '<link rel="stylesheet" href="/adyen/adyen.css" /><link rel="modulepreload" href="/adyen/adyen-pix.js" />',
  );
  page = replaceOnce(page, /<pix-checkout\b[^>]*><\/pix-checkout>/, '');
  return replaceOnce(
    page,
    '<div id="checkout-slot"',
    `<div id="adyen-pix"></div>
<script type="module">
import { AdyenCheckout, Pix } from '/adyen/adyen-pix.js';
AdyenCheckout.register(Pix);
const checkout = await AdyenCheckout(${JSON.stringify(config)});
checkout.createFromAction(${JSON.stringify(action)}).mount('#adyen-pix');
</script>
<div id="checkout-slot"`,
  );
}

interface Prepared {
  url: string;
  /** The payment's code, once known (mode a: after the page issued it). */
  code: () => Promise<string>;
}

/**
 * A run's page. (b), (c): the demo store's order page (GET /pagamento/:checkout_id) for a new order,
 * `?render=script-preload` or server-rendered. (a): the same page (renderOrderPage, mode `script`)
 * for a checkout created without `issue_payment`: its head's inline script (renderPaymentRequest)
 * issues the payment as the page is parsed, and the widget takes that answer; served by the bench (the store's orders always issue theirs at creation). (d): the order page with
 * Adyen's component in the widget's place.
 */
async function prepare(mode: Mode): Promise<Prepared> {
  const order = await placeOrder();
  const payment = async (checkoutId: string) => {
    const read: CheckoutView = await client.checkouts.retrieve(checkoutId);
    if (!read.payment) throw new Error(`mode ${mode}: checkout ${checkoutId} has no payment`);
    return read.payment;
  };
  if (mode === 'b' || mode === 'c') {
    return {
      url: `${frontUrl}/pagamento/${order.checkout_id}${mode === 'b' ? '?render=script-preload' : ''}`,
      code: async () => (await payment(order.checkout_id)).brcode,
    };
  }
  const id = `bench-phone-${process.pid}-${++pageCount}`;
  if (mode === 'a') {
    const checkout = await client.checkouts.create({ value: order.total, order_id: id });
    pages.set(
      id,
      await renderOrderPage({
        // The page's script asks the store about this order by its checkout: a 404 it takes in its stride.
        order: { ...order, checkout_id: checkout.checkout_id },
        checkout,
        endpoint: '/api',
        scriptUrl: '/api/pix-checkout.js',
        mode: 'script',
        phone: true,
      }),
    );
    return { url: `${frontUrl}/bench/page/${id}`, code: async () => (await payment(checkout.checkout_id)).brcode };
  }
  const checkout = await client.checkouts.retrieve(order.checkout_id);
  const issued = await payment(order.checkout_id);
  qrImageByCode.set(issued.brcode, issued.qr_code_url);
  // The script-tag page without what is ours: its head's request of the payment (renderPaymentRequest) too.
  const page = replaceOnce(
    await renderOrderPage({ order, checkout, endpoint: '/api', scriptUrl: '/api/pix-checkout.js', mode: 'script', phone: true }),
    `${renderPaymentRequest(checkout.checkout_id, { endpoint: '/api' })}\n    `,
    '',
  );
  pages.set(
    id,
    adyenOrderPage(page, { type: 'qrCode', paymentMethodType: 'pix', qrCodeData: issued.brcode, paymentData: `bench-payment-data-${id}` }, order.total),
  );
  return { url: `${frontUrl}/bench/page/${id}`, code: () => Promise.resolve(issued.brcode) };
}
let pageCount = 0;

// ---------------------------------------------------------------------------------------------------
// One cold run.

interface Run {
  fcp: number;
  /** The first screencast frame with text or an image (not only backgrounds): FCP on the frames' clock. */
  contentFrame: number;
  /** --cpu-profile: ms of main thread by script until the QR was painted and the copy button usable. */
  mainThread?: Record<string, number>;
  /** --cpu-profile: the same by function (self time). */
  functions?: Record<string, number>;
  /** --cpu-profile: ms the main thread was busy (any non-idle sample) from the script's arrival until the QR's frame. */
  busyScriptToQr?: number;
  /** (c), when the QR was not in the first contentful frame: that frame, saved as a PNG. */
  contentWithoutQr: string;
  qrFrame: number;
  qrMark: number;
  copyUsable: number;
  bytesTotal: number;
  bytesUi: number;
  bytesApi: number;
  requests: number;
  phases: Record<Phase, number>;
  /** (c): what the server-rendered widget adds to the HTML, gzip -9 (the page with it, less the page without it). */
  bytesInHtml: number;
  /** The page's requests, ms after the document's request was sent. */
  waterfall: { path: string; sent: number; answered: number; finished: number; bytes: number }[];
}

/** One request of the page; times on the browser's monotonic clock (ms). */
interface Request {
  url: string;
  bytes: number;
  done: boolean;
  sent: number;
  answered: number;
  finished: number;
}

interface Frame {
  at: number;
  data: string;
}

async function applyPhone(cdp: CDPSession): Promise<void> {
  await cdp.send('Network.enable');
  await cdp.send('Network.setCacheDisabled', { cacheDisabled: true });
  await cdp.send('Network.emulateNetworkConditions', {
    offline: false,
    latency: PROFILE.latencyMs,
    downloadThroughput: PROFILE.downloadBytesPerS,
    uploadThroughput: PROFILE.uploadBytesPerS,
  });
  await cdp.send('Emulation.setCPUThrottlingRate', { rate: PROFILE.cpuSlowdown });
  await cdp.send('Emulation.setDeviceMetricsOverride', { width: PHONE.width, height: PHONE.height, deviceScaleFactor: PHONE.deviceScaleFactor, mobile: true });
  await cdp.send('Emulation.setTouchEmulationEnabled', { enabled: true, maxTouchPoints: 5 });
  await cdp.send('Emulation.setUserAgentOverride', { userAgent: PHONE.userAgent, platform: 'Android' });
}

/** Which of the page's requests belong to the payment UI: our script, its chunks and API calls; Adyen's files, services and QR image. */
function share(url: string): 'ui' | 'api' | 'page' {
  const path = new URL(url).pathname;
  if (/^\/api\/pix-checkout[\w.-]*\.js$/.test(path) || /^\/adyen\/(?!checkoutshopper-test\/services|analytics)/.test(path)) return 'ui';
  if (path.startsWith('/api/') || path.startsWith('/adyen/')) return 'api';
  return 'page';
}

/**
 * The copy-button probe: the moment the button is on screen with its click handler. Ours: the element
 * upgraded and updated once (`hasUpdated`) with its copy button in the shadow root, or before that,
 * markup put there by the server render (c) or the page's head (a) with the inline copy handler on
 * its button (its `pix-checkout:copy-ready` mark). Adyen's: its Preact tree renders the button with
 * its handler, so the button's presence is enough.
 */
const MARKUP_PROBE = `(() => {
  const el = document.querySelector('pix-checkout');
  const button = el && el.shadowRoot && el.shadowRoot.querySelector('[part~="copy-button"]');
  const ready = button && ((customElements.get('pix-checkout') && el.hasUpdated) || performance.getEntriesByName('pix-checkout:copy-ready', 'mark').length);
  return ready ? performance.now() : 0;
})()`;
const PROBES: Record<Mode, string> = {
  a: MARKUP_PROBE,
  b: MARKUP_PROBE,
  c: MARKUP_PROBE,
  d: `document.querySelector('#adyen-pix .adyen-checkout__qr-loader button') ? performance.now() : 0`,
};

/** Where the time goes, read after the run: the document, our script's download, the element's marks. */
const PHASES = [
  ['htmlStart', 'HTML first byte'],
  ['html', 'HTML received'],
  ['script', 'script received (pix-checkout.js / adyen-pix.js)'],
  ['connected', 'element connected'],
  ['request', 'API request sent'],
  ['firstScreen', "first screen put in by the page's head"],
  ['payment', 'payment answered'],
  ['encoded', 'QR encoded'],
  ['qr', 'pix-checkout:qr mark'],
] as const;
type Phase = (typeof PHASES)[number][0];
const TIMING = `(() => {
  const mark = (name) => performance.getEntriesByName('pix-checkout:' + name, 'mark')[0]?.startTime ?? NaN;
  const script = performance.getEntriesByType('resource').find((r) => /\\/(pix-checkout|adyen-pix)\\.js$/.test(new URL(r.name).pathname));
  return {
    origin: performance.timeOrigin,
    fcp: performance.getEntriesByName('first-contentful-paint')[0]?.startTime ?? NaN,
    phases: {
      htmlStart: performance.getEntriesByType('navigation')[0]?.responseStart ?? NaN,
      html: performance.getEntriesByType('navigation')[0]?.responseEnd ?? NaN,
      script: script?.responseEnd ?? NaN,
      connected: mark('connected'),
      request: mark('request'),
      firstScreen: mark('first-screen'),
      payment: mark('payment'),
      encoded: mark('encoded'),
      qr: mark('qr'),
    },
  };
})()`;

/**
 * Chromium's own pages (chrome://) seen beside a run's page: a renderer of the browser's UI that a
 * phone does not have, taking CPU from the page (CHROME_ARGS turns off the ones known).
 */
const browserUi = new Set<string>();

/** --trace: runs traced so far, by mode. */
const traced: Partial<Record<Mode, number>> = {};

async function run(browser: Browser, decoder: Page, mode: Mode): Promise<Run> {
  const prepared = await prepare(mode);
  const context = await browser.createBrowserContext();
  try {
    const page = await context.newPage();
    const cdp = await page.createCDPSession();
    await applyPhone(cdp);

    const requests = new Map<string, Request>();
    cdp.on('Network.requestWillBeSent', (e) => {
      if (!requests.has(e.requestId))
        requests.set(e.requestId, { url: e.request.url, bytes: 0, done: false, sent: e.timestamp * 1000, answered: NaN, finished: NaN });
    });
    cdp.on('Network.responseReceived', (e) => {
      const r = requests.get(e.requestId);
      // The headers' arrival on the request's own clock (the event itself may come later).
      if (r) r.answered = e.response.timing ? e.response.timing.requestTime * 1000 + e.response.timing.receiveHeadersEnd : e.timestamp * 1000;
    });
    cdp.on('Network.dataReceived', (e) => {
      const r = requests.get(e.requestId);
      if (r && !r.done) r.bytes += e.encodedDataLength;
    });
    cdp.on('Network.loadingFinished', (e) => {
      const r = requests.get(e.requestId);
      if (r) Object.assign(r, { bytes: e.encodedDataLength, done: true, finished: e.timestamp * 1000 });
    });

    const frames: Frame[] = [];
    cdp.on('Page.screencastFrame', (e) => {
      frames.push({ at: (e.metadata.timestamp ?? 0) * 1000, data: e.data });
      void cdp.send('Page.screencastFrameAck', { sessionId: e.sessionId }).catch(() => {});
    });
    await cdp.send('Page.startScreencast', {
      format: 'jpeg',
      quality: 90,
      maxWidth: Math.round(PHONE.width * PHONE.deviceScaleFactor),
      maxHeight: Math.round(PHONE.height * PHONE.deviceScaleFactor),
      everyNthFrame: 1,
    });

    const errors: string[] = [];
    page.on('pageerror', (error) => errors.push(String(error)));
    const consoleLines: string[] = [];
    page.on('console', (message) => {
      if (message.type() === 'error' || message.type() === 'warn') consoleLines.push(`${message.type()}: ${message.text()}`);
    });
    if (args['cpu-profile']) {
      await cdp.send('Profiler.enable');
      await cdp.send('Profiler.setSamplingInterval', { interval: 500 });
      await cdp.send('Profiler.start');
    }
    const traceFile = args.trace ? `${args.trace}/${mode}-${(traced[mode] = (traced[mode] ?? 0) + 1)}.json` : undefined;
    if (traceFile) await page.tracing.start({ path: traceFile });
    const navigation = page.goto(prepared.url, { waitUntil: 'load', timeout: 60_000 });
    navigation.catch(() => {});

    // The copy-button probe, from navigation until it answers (or 30 s).
    let copyUsable = NaN;
    const probeUntil = Date.now() + 30_000;
    {
      while (Date.now() < probeUntil) {
        const at = await cdp.send('Runtime.evaluate', { expression: PROBES[mode], returnByValue: true }).then(
          (r) => (typeof r.result.value === 'number' ? r.result.value : 0),
          () => 0,
        );
        if (at > 0 && page.url() === prepared.url) {
          copyUsable = at;
          break;
        }
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
    }
    await navigation;
    if (mode === 'd') {
      await page
        .waitForFunction(() => document.querySelector<HTMLImageElement>('#adyen-pix img[src*="barcode"]')?.complete === true, { timeout: 30_000 })
        .catch((error: unknown) => {
          throw new Error(`${(error as Error).message}; page errors: ${[...errors, ...consoleLines].join(' | ') || 'none'}`);
        });
    }
    // Let the last frames and the first status calls arrive.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    await cdp.send('Page.stopScreencast');
    const profile = args['cpu-profile'] ? (await cdp.send('Profiler.stop')).profile : undefined;
    if (traceFile) await page.tracing.stop();

    // A string, not a function: tsx's helpers (__name) do not exist in the page.
    const timing = (await page.evaluate(TIMING)) as { origin: number; fcp: number; phases: Record<Phase, number> };
    if (errors.length) throw new Error(`mode ${mode}: page error: ${errors.join('; ')}`);

    const code = await prepared.code();
    const { content: contentFrame, contentData, qr: qrFrame } = await readFrames(decoder, frames, code, timing.origin);
    let contentWithoutQr = '';
    if (mode === 'c' && qrFrame !== contentFrame && contentData) {
      // The server-rendered QR was not in the first contentful frame: keep that frame to look at.
      contentWithoutQr = join(tmpdir(), `bench-phone-c-first-frame-${Date.now()}.png`);
      writeFileSync(contentWithoutQr, Buffer.from(await asPng(decoder, contentData), 'base64'));
    }
    if (!Number.isFinite(qrFrame)) {
      const last = join(tmpdir(), `bench-phone-${mode}-last-frame.png`);
      if (frames.length) writeFileSync(last, Buffer.from(await asPng(decoder, frames.at(-1)!.data), 'base64'));
      throw new Error(
        `mode ${mode}: no screen frame decodes to the payment's code (${frames.length} frames; the last one: ${last}; a QR below the fold is not in any frame: --height ${PHONE.height} may be too short)`,
      );
    }
    if (!Number.isFinite(copyUsable)) throw new Error(`mode ${mode}: the copy button never became usable`);

    let bytesTotal = 0;
    let bytesUi = 0;
    let bytesApi = 0;
    for (const r of requests.values()) {
      if (!r.url.startsWith('http')) continue;
      bytesTotal += r.bytes;
      const kind = share(r.url);
      if (kind === 'ui') bytesUi += r.bytes;
      if (kind === 'api') bytesApi += r.bytes;
    }
    const start = Math.min(...[...requests.values()].map((r) => r.sent));
    const waterfall = [...requests.values()]
      .filter((r) => r.url.startsWith('http'))
      .map((r) => ({ path: new URL(r.url).pathname, sent: r.sent - start, answered: r.answered - start, finished: r.finished - start, bytes: r.bytes }));
    // Until both the QR is painted and the copy button usable: what stood before either.
    const mainThread = profile ? busyUntil(profile, start, Math.max(qrFrame, copyUsable)) : undefined;
    const functions = profile ? busyUntil(profile, start, Math.max(qrFrame, copyUsable), true) : undefined;
    const busyScriptToQr = profile ? Object.values(busyUntil(profile, start, qrFrame, false, timing.phases.script)).reduce((sum, x) => sum + x, 0) : undefined;
    let bytesInHtml = 0;
    if (mode === 'c') {
      const html = Buffer.from(await (await fetch(prepared.url, { headers: { 'user-agent': PHONE.userAgent } })).arrayBuffer());
      const without = Buffer.from(html.toString('utf8').replace(/<pix-checkout\b[\s\S]*?<\/pix-checkout>/, ''));
      if (without.length === html.length) throw new Error('mode c: the page has no <pix-checkout> element');
      bytesInHtml = gzipSync(html, { level: 9 }).length - gzipSync(without, { level: 9 }).length;
    }
    return {
      mainThread,
      functions,
      busyScriptToQr,
      contentWithoutQr,
      waterfall,
      contentFrame,
      bytesInHtml,
      fcp: timing.fcp,
      qrFrame,
      qrMark: timing.phases.qr,
      copyUsable,
      bytesTotal,
      bytesUi,
      bytesApi,
      requests: requests.size,
      phases: timing.phases,
    };
  } finally {
    for (const target of browser.targets()) if (target.url().startsWith('chrome://')) browserUi.add(target.url());
    await context.close();
  }
}

/**
 * Where the main thread went from navigation until `until` (ms after it): the profile's samples
 * (microseconds on the browser's monotonic clock, like the Network domain's seconds), their time
 * summed by script file (V8's own entries, such as (garbage collector) or (program), by name).
 */
function busyUntil(profile: Protocol.Profiler.Profile, navigationSent: number, until: number, byFunction = false, from = 0): Record<string, number> {
  const byNode = new Map(profile.nodes.map((node) => [node.id, node]));
  const out: Record<string, number> = {};
  let at = profile.startTime;
  const end = (navigationSent + until) * 1000;
  for (const [i, id] of (profile.samples ?? []).entries()) {
    const delta = profile.timeDeltas?.[i] ?? 0;
    at += delta;
    if (at < (navigationSent + from) * 1000 || at > end) continue;
    const frame = byNode.get(id)?.callFrame;
    if (!frame || frame.functionName === '(idle)') continue;
    const file = frame.url ? (new URL(frame.url).pathname.split('/').pop() ?? frame.url) : '';
    const key = file
      ? `${byFunction ? `${file} ${frame.functionName || '(anonymous)'}:${frame.lineNumber + 1}:${frame.columnNumber + 1}` : file}`
      : frame.functionName || '(anonymous)';
    out[key] = (out[key] ?? 0) + delta / 1000;
  }
  return out;
}

/** A frame as PNG (base64), to look at a broken run. */
async function asPng(decoder: Page, jpeg: string): Promise<string> {
  return decoder.evaluate(async (data: string) => {
    const bitmap = await createImageBitmap(await (await fetch(`data:image/jpeg;base64,${data}`)).blob());
    const canvas = new OffscreenCanvas(bitmap.width, bitmap.height);
    canvas.getContext('2d')!.drawImage(bitmap, 0, 0);
    const url = await new Promise<string>((resolve) => {
      const reader = new FileReader();
      reader.onload = () => resolve(reader.result as string);
      void canvas.convertToBlob({ type: 'image/png' }).then((blob) => reader.readAsDataURL(blob));
    });
    return url.slice(url.indexOf(',') + 1);
  }, jpeg);
}

/**
 * Reads the frames in order, in an unthrottled page: the first one with text or an image (not only
 * backgrounds: the first contentful frame, on the same clock as the QR's) and the first in which jsqr
 * decodes exactly `code`. Both in ms after navigation start; NaN when none.
 */
async function readFrames(decoder: Page, frames: Frame[], code: string, origin: number): Promise<{ content: number; contentData: string; qr: number }> {
  let content = NaN;
  let contentData = '';
  for (const frame of frames) {
    if (frame.at < origin) continue;
    const seen = await decoder.evaluate(
      async (data: string, findContent: boolean) => {
        const bitmap = await createImageBitmap(await (await fetch(`data:image/jpeg;base64,${data}`)).blob());
        const canvas = new OffscreenCanvas(bitmap.width, bitmap.height);
        const context = canvas.getContext('2d')!;
        context.drawImage(bitmap, 0, 0);
        const image = context.getImageData(0, 0, bitmap.width, bitmap.height);
        // Contentful, as paint timing means it: text or an image, not only backgrounds. Backgrounds
        // and borders change colour from one pixel to the next almost nowhere along a row; text
        // and images do in many places. Count sampled pixels that differ from their right neighbour.
        let edges = 0;
        for (let i = 0; findContent && edges <= 40 && i + 4 < image.data.length; i += 4 * 13) {
          const step =
            Math.abs(image.data[i]! - image.data[i + 4]!) +
            Math.abs(image.data[i + 1]! - image.data[i + 5]!) +
            Math.abs(image.data[i + 2]! - image.data[i + 6]!);
          if (step > 60) edges++;
        }
        const flat = edges <= 40;
        const jsQR = (window as unknown as { jsQR: (d: Uint8ClampedArray, w: number, h: number) => { data: string } | null }).jsQR;
        return { flat, decoded: flat && findContent ? null : (jsQR(image.data, image.width, image.height)?.data ?? null) };
      },
      frame.data,
      Number.isNaN(content),
    );
    if (Number.isNaN(content) && !seen.flat) {
      content = frame.at - origin;
      contentData = frame.data;
    }
    if (seen.decoded === code) return { content, contentData, qr: frame.at - origin };
  }
  return { content, contentData, qr: NaN };
}

// ---------------------------------------------------------------------------------------------------
// The runs and the figures.

const stats = (xs: number[]) => {
  const sorted = xs.filter(Number.isFinite).sort((x, y) => x - y);
  return sorted.length ? { p50: sorted[Math.floor((sorted.length - 1) / 2)]!, min: sorted[0]!, max: sorted.at(-1)! } : null;
};
const ms = (xs: number[]) => {
  const s = stats(xs);
  return s ? `${s.p50.toFixed(0).padStart(5)} ms (${s.min.toFixed(0)}-${s.max.toFixed(0)})` : '            n/a';
};
const kb = (xs: number[]) => {
  const s = stats(xs);
  return s ? `${(s.p50 / 1024).toFixed(1)} KB` : 'n/a';
};

/**
 * The phone's goals (docs/performance.md), each judged within this run against the page's own first paint (the floor) and
 * against Adyen's: absolute times say little on a loaded machine. Figures are p50s over the runs.
 */
const GOALS = {
  /** (b): QR painted <= first contentful paint + 250 ms. */
  bQrAfterFcpMs: 250,
  /** (a): QR painted <= first contentful paint + 400 ms. */
  aQrAfterFcpMs: 400,
  /** (c): copy button usable <= first contentful paint + 100 ms. */
  cCopyAfterFcpMs: 100,
  /** Adyen's QR painted (d) at least this many times ours in (a). */
  adyenOverA: 2.5,
  /** (b): main thread busy from the script's arrival to the QR painted (--cpu-profile), at the profile's CPU slowdown. */
  bMainThreadMs: 250,
} as const;

/** The goals' lines: each met or MISSED, with its figure; a goal whose modes did not run says so. */
function goalLines(results: Map<Mode, Run[]>): string[] {
  const p50 = (mode: Mode, pick: (r: Run) => number | undefined) => {
    const rs = results.get(mode);
    return rs?.length ? stats(rs.map((r) => pick(r) ?? NaN))?.p50 : undefined;
  };
  const line = (goal: string, figure: number | undefined, met: (x: number) => boolean, show: (x: number) => string, why = 'not measured in this run') =>
    `    ${figure === undefined ? 'n/a   ' : met(figure) ? 'met   ' : 'MISSED'} ${goal.padEnd(58)} ${figure === undefined ? `(${why})` : show(figure)}`;
  const after = (mode: Mode, pick: (r: Run) => number) => {
    const x = p50(mode, pick);
    const fcp = p50(mode, (r) => r.fcp);
    return x === undefined || fcp === undefined ? undefined : x - fcp;
  };
  const plus = (x: number) => `FCP ${x >= 0 ? '+' : ''}${x.toFixed(0)} ms (p50s)`;
  const out = [
    line(
      `(b) QR painted <= FCP + ${GOALS.bQrAfterFcpMs} ms`,
      after('b', (r) => r.qrFrame),
      (x) => x <= GOALS.bQrAfterFcpMs,
      plus,
    ),
    line(
      `(a) QR painted <= FCP + ${GOALS.aQrAfterFcpMs} ms`,
      after('a', (r) => r.qrFrame),
      (x) => x <= GOALS.aQrAfterFcpMs,
      plus,
    ),
  ];
  const c = results.get('c') ?? [];
  const missedFrames = c.filter((r) => r.qrFrame !== r.contentFrame).length;
  out.push(
    line(
      '(c) QR in the first contentful frame, every run',
      c.length ? missedFrames : undefined,
      (x) => x === 0,
      (x) => (x === 0 ? `in all ${c.length} runs` : `missed in ${x} of ${c.length} runs`),
    ),
    line(
      `(c) copy usable <= FCP + ${GOALS.cCopyAfterFcpMs} ms`,
      after('c', (r) => r.copyUsable),
      (x) => x <= GOALS.cCopyAfterFcpMs,
      plus,
    ),
  );
  const a = p50('a', (r) => r.qrFrame);
  const d = p50('d', (r) => r.qrFrame);
  out.push(
    line(
      `Adyen's QR (d) >= ${GOALS.adyenOverA} x ours in (a)`,
      a !== undefined && d !== undefined ? d / a : undefined,
      (x) => x >= GOALS.adyenOverA,
      (x) => `${x.toFixed(2)} x (${d!.toFixed(0)} / ${a!.toFixed(0)} ms)`,
    ),
    line(
      `(b) main thread, script arrival -> QR <= ${GOALS.bMainThreadMs} ms at ${PROFILE.cpuSlowdown}x`,
      p50('b', (r) => r.busyScriptToQr),
      (x) => x <= GOALS.bMainThreadMs,
      (x) => `${x.toFixed(0)} ms busy (p50; wall time ${p50('b', (r) => r.qrFrame - r.phases.script)?.toFixed(0)} ms)`,
      args['cpu-profile'] ? 'mode b not run' : 'needs --cpu-profile',
    ),
  );
  return out;
}

function report(results: Map<Mode, Run[]>, failures: Map<Mode, string>): void {
  const p = PROFILE;
  console.log(`Checkout page on a phone, cold (new incognito context, cache disabled), headless Chromium, ${RUNS} runs per mode
profile ${PROFILE_NAME}: CPU ${p.cpuSlowdown}x slower; latency ${p.latencyMs} ms, down ${p.downloadBytesPerS.toFixed(1)} B/s, up ${p.uploadBytesPerS.toFixed(1)} B/s (Network.emulateNetworkConditions)
screen ${PHONE.width}x${PHONE.height} CSS px at DPR ${PHONE.deviceScaleFactor}, touch, mobile UA; every text file gzip -9 from one loopback origin
times: ms after navigation start, p50 (min-max); bytes transferred, p50
files: ${FILES}`);
  if (browserUi.size)
    console.log(
      `WARNING: Chromium's own pages ran beside the page, taking CPU a phone would give it (${[...browserUi].join(', ')}): the figures carry them; turn them off in CHROME_ARGS (test/support/find-chrome.mjs)`,
    );
  for (const mode of SELECTED) {
    const rs = results.get(mode)!;
    console.log(`\n(${mode}) ${MODES[mode]}`);
    if (rs.length === 0) {
      console.log(`    FAILED: ${failures.get(mode)}`);
      continue;
    }
    const col = (label: string, xs: number[], note = '') => console.log(`    ${label.padEnd(26)} ${ms(xs).padEnd(24)} ${note}`);
    col(
      'first contentful paint',
      rs.map((r) => r.fcp),
      `first contentful frame ${ms(rs.map((r) => r.contentFrame)).trim()}`,
    );
    const qr = rs.map((r) => r.qrFrame);
    let qrGoal = '';
    if (mode === 'c') {
      const same = rs.filter((r) => r.qrFrame === r.contentFrame).length;
      qrGoal = `goal: in the first contentful frame: ${same === rs.length ? `met in all ${rs.length} runs` : `MISSED in ${rs.length - same} of ${rs.length} runs`}`;
      for (const r of rs.filter((r) => r.qrFrame !== r.contentFrame)) {
        qrGoal += `\n${''.padEnd(56)}missed: QR ${(r.qrFrame - r.contentFrame).toFixed(0)} ms after the first contentful frame (${r.contentWithoutQr})`;
      }
    }
    col('QR painted (frames, jsqr)', qr, qrGoal);
    // (a): the QR a frame after the page's head put its first screen in, or drawn by the widget when its script ran first.
    const each = (r: Run) =>
      `${(r.qrFrame - r.fcp).toFixed(0)}${mode !== 'a' ? '' : Number.isFinite(r.phases.firstScreen) ? ` (head +${(r.qrFrame - r.phases.firstScreen).toFixed(0)})` : ' (widget)'}`;
    console.log(`    ${'QR - FCP, each run'.padEnd(26)} ${rs.map(each).join(', ')}`);
    if (mode !== 'd') {
      const lag = stats(rs.map((r) => r.qrFrame - r.qrMark));
      col(
        'pix-checkout:qr mark',
        rs.map((r) => r.qrMark),
        lag && Math.abs(lag.p50) > 100 ? `the frames show the QR ${lag.p50.toFixed(0)} ms after the mark (p50)` : '',
      );
    }
    col(
      'copy button usable',
      rs.map((r) => r.copyUsable),
    );
    console.log(
      `    ${'bytes'.padEnd(26)} total ${kb(rs.map((r) => r.bytesTotal))}, payment UI ${kb(rs.map((r) => r.bytesUi))} (${mode === 'd' ? "Adyen's JS, CSS, translations, images and QR image" : 'our script and its chunks'}${mode === 'c' ? ` + ${kb(rs.map((r) => r.bytesInHtml))} of widget markup inside the HTML` : ''}), payment API ${kb(rs.map((r) => r.bytesApi))}`,
    );
    if (failures.has(mode)) console.log(`    stopped after ${rs.length} runs: ${failures.get(mode)}`);
  }
  console.log('\nwhere the time goes (p50 ms after navigation start; n/a: no such step in that mode)');
  console.log(`${''.padEnd(50)}${SELECTED.map((m) => `(${m})`.padStart(8)).join('')}`);
  for (const [phase, label] of PHASES) {
    const cells = SELECTED.map((m) => {
      const s = stats(results.get(m)!.map((r) => r.phases[phase]));
      return (s ? s.p50.toFixed(0) : 'n/a').padStart(8);
    });
    console.log(`${label.padEnd(50)}${cells.join('')}`);
  }
  if (args['cpu-profile']) {
    console.log('\nmain thread busy until the QR was painted and the copy button usable (--cpu-profile; p50 ms by script, the largest)');
    for (const mode of SELECTED) {
      const rs = results.get(mode)!;
      const keys = [...new Set(rs.flatMap((r) => Object.keys(r.mainThread ?? {})))];
      const rows = keys
        .map((key) => [key, stats(rs.map((r) => r.mainThread?.[key] ?? 0))!.p50] as const)
        .sort((x, y) => y[1] - x[1])
        .slice(0, 8);
      const total = stats(rs.map((r) => Object.values(r.mainThread ?? {}).reduce((sum, x) => sum + x, 0)))!.p50;
      console.log(`(${mode}) ${total.toFixed(0)} ms in all: ${rows.map(([key, x]) => `${key} ${x.toFixed(0)}`).join(', ')}`);
      const fnKeys = [...new Set(rs.flatMap((r) => Object.keys(r.functions ?? {})))].filter((key) => key.includes(' '));
      const fns = fnKeys
        .map((key) => [key, stats(rs.map((r) => r.functions?.[key] ?? 0))!.p50] as const)
        .sort((x, y) => y[1] - x[1])
        .slice(0, 10);
      console.log(`    functions (self, p50 ms): ${fns.map(([key, x]) => `${key} ${x.toFixed(0)}`).join('; ')}`);
    }
  }
  console.log("\nthe median run's requests (ms after the document's request: sent, headers in, done; bytes on the wire)");
  for (const mode of SELECTED) {
    const rs = [...results.get(mode)!].sort((x, y) => x.qrFrame - y.qrFrame);
    const median = rs[Math.floor((rs.length - 1) / 2)];
    if (!median) continue;
    console.log(`(${mode}) QR painted at ${median.qrFrame.toFixed(0)} ms`);
    for (const r of [...median.waterfall].sort((x, y) => x.sent - y.sent)) {
      const t = (x: number) => (Number.isFinite(x) ? x.toFixed(0) : '…').padStart(6);
      console.log(
        `    ${t(r.sent)} ${t(r.answered)} ${t(r.finished)} ${`${(r.bytes / 1024).toFixed(1)} KB`.padStart(9)}  ${r.path.length > 60 ? `${r.path.slice(0, 57)}...` : r.path}`,
      );
    }
  }
  console.log('\ngoals (judged within this run, p50 of each figure)');
  for (const line of goalLines(results)) console.log(line);
}

let failed = false;
const browser = await puppeteer.launch({ executablePath: findChrome() ?? '/usr/bin/chromium', headless: true, args: CHROME_ARGS, defaultViewport: null });
try {
  const decoder = await browser.newPage();
  await decoder.addScriptTag({ content: readFileSync(`${ROOT}node_modules/jsqr/dist/jsQR.js`, 'utf8') });
  const results = new Map<Mode, Run[]>(SELECTED.map((m) => [m, []]));
  const failures = new Map<Mode, string>();
  for (let i = 0; i < RUNS; i++) {
    for (const mode of SELECTED) {
      if (failures.has(mode)) continue;
      try {
        results.get(mode)!.push(await run(browser, decoder, mode));
      } catch (error) {
        failures.set(mode, (error as Error).message);
        failed = true;
      }
    }
  }
  report(results, failures);
} finally {
  await browser.close();
  await new Promise((resolve) => front.close(resolve));
  front.closeAllConnections();
  await demo.close();
}
process.exitCode = failed ? 1 : 0;
