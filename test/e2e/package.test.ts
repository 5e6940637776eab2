/**
 * The package as a merchant gets it: `npm pack` (which builds through `prepack`), installed from the
 * tarball into an empty folder next to what a merchant's front end has (React's types, Vue, Vite),
 * then used from there only. The command line runs without tsx, the declarations type-check a
 * consumer and a React 19 and a Vue component with no declaration of their own, createApp mounts in
 * a plain node:http server against the packaged sandbox, a Vite dev server proxies `/api` to it, and
 * headless Chromium renders the element from the script-tag build the proxy serves and from the Vite
 * app. Slow (a pack and an install): one test, several checks.
 */
import assert from 'node:assert/strict';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify, stripVTControlCharacters } from 'node:util';
import puppeteer, { type Browser } from 'puppeteer-core';
import { CHROME_ARGS, findChrome } from '../support/find-chrome.mjs';

const run = promisify(execFile);
const repo = fileURLToPath(new URL('../..', import.meta.url));
const fixture = fileURLToPath(new URL('./package-fixture', import.meta.url));
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';

let folder: string;
let server: ChildProcess | null = null;
let vite: ChildProcess | null = null;
let preview: ChildProcess | null = null;
let browser: Browser | null = null;

/** Stops a child process this test started, and waits for it to go. */
async function stop(child: ChildProcess | null): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
}

/** Resolves with the first match of `pattern` in what `child` prints on stdout; rejects if it exits first. */
function printed(child: ChildProcess, pattern: RegExp, what: string): Promise<string> {
  return new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      // Without the terminal's colours, which Vite prints when it thinks it may.
      out += stripVTControlCharacters(String(chunk));
      const match = pattern.exec(out);
      if (match) resolve(match[1]!);
    });
    child.once('exit', (code) => reject(new Error(`${what} exited (${code}): ${out}`)));
  });
}

/** The version of a development dependency as the repository has it installed (so npm's cache has it). */
const installedVersion = (name: string): string =>
  (JSON.parse(readFileSync(join(repo, 'node_modules', name, 'package.json'), 'utf8')) as { version: string }).version;

before(async () => {
  folder = mkdtempSync(join(tmpdir(), 'pix-package-'));
});
after(async () => {
  await browser?.close();
  await stop(vite);
  await stop(preview);
  await stop(server);
  rmSync(folder, { recursive: true, force: true });
});

test('the packed tarball installs in an empty folder and works from there', { timeout: 300_000 }, async () => {
  // What `prepack` does, then the pack alone, so that its stdout is only the JSON.
  await run(npm, ['run', 'build'], { cwd: repo, maxBuffer: 64 * 1024 * 1024 });
  const { stdout } = await run(npm, ['pack', '--json', '--ignore-scripts', '--pack-destination', folder], { cwd: repo, maxBuffer: 64 * 1024 * 1024 });
  const [packed] = JSON.parse(stdout) as [{ filename: string; size: number; files: { path: string }[] }];
  const files = packed.files.map((f) => f.path);
  for (const needed of [
    'dist/pix-checkout.js',
    'dist/npm/index.js',
    'dist/npm/element.js',
    'lib/server/index.js',
    'lib/server/index.d.ts',
    'lib/src/define.d.ts',
    'lib/src/frameworks/react.d.ts',
    'lib/src/frameworks/vue.d.ts',
    'custom-elements.json',
    'bin/pix-checkout.mjs',
  ]) {
    assert.ok(files.includes(needed), `the package holds ${needed}`);
  }
  assert.ok(
    !files.some((f) => f.startsWith('test/') || f.startsWith('node_modules/') || /\.ts$/.test(f.replace(/\.d\.ts$/, ''))),
    'no tests, TypeScript sources or modules in the package',
  );

  writeFileSync(join(folder, 'package.json'), JSON.stringify({ name: 'shop', private: true, type: 'module' }));
  // The dependencies come from npm's cache, which `npm ci` has filled (no server is reached then);
  // with a cold cache, from the npm registry, as for any install. Beside the package, what a
  // merchant's front end already has, at the versions this repository develops against.
  const frontEnd = ['@types/react', 'vue', 'vite'].map((name) => `${name}@${installedVersion(name)}`);
  await run(npm, ['install', join(folder, packed.filename), ...frontEnd, '--no-audit', '--no-fund', '--prefer-offline', '--loglevel=error'], {
    cwd: folder,
    maxBuffer: 64 * 1024 * 1024,
  });
  const installed = join(folder, 'node_modules', 'pix-checkout');
  assert.ok(existsSync(join(installed, 'package.json')));
  assert.ok(!existsSync(join(folder, 'node_modules', 'tsx')), 'tsx is a development dependency only');
  for (const file of readdirSync(fixture)) cpSync(join(fixture, file), join(folder, file), { recursive: true });

  // The package as published: where it comes from, and a README whose pictures are in the package.
  const meta = JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8')) as {
    homepage?: string;
    repository?: { url?: string };
    bugs?: { url?: string };
  };
  assert.match(meta.homepage ?? '', /^https:\/\//, 'package.json has a homepage');
  assert.match(meta.repository?.url ?? '', /^git\+https:\/\/.+\.git$/, 'package.json has a repository');
  assert.match(meta.bugs?.url ?? '', /^https:\/\/.+\/issues$/, 'package.json says where to report bugs');
  const readme = readFileSync(join(installed, 'README.md'), 'utf8');
  assert.doesNotMatch(readme, /^npm install pix-checkout\s*$/m, 'while unpublished, the README installs the tarball');
  const pictures = [...readme.matchAll(/<img src="([^"]+)"/g)].map((m) => m[1]!);
  assert.deepEqual(pictures, ['docs/images/widget-phone.png', 'docs/images/widget-desktop.png']);
  for (const picture of pictures) assert.ok(files.includes(picture), `the README's picture ${picture} is in the package`);
  assert.ok(packed.size < 1024 * 1024, `the tarball stays small (${packed.size} bytes)`);

  // The command line, compiled: no TypeScript runtime in the folder.
  const help = await run(join(folder, 'node_modules', '.bin', 'pix-checkout'), ['--help'], { cwd: folder });
  assert.match(help.stdout, /Usage: pix-checkout <command>/);

  // The exports map: every entry resolves, and the manifest describes the element.
  const resolved = await run(
    process.execPath,
    [
      '--input-type=module',
      '-e',
      `
    const names = ['pix-checkout', 'pix-checkout/element', 'pix-checkout/script', 'pix-checkout/server', 'pix-checkout/sandbox', 'pix-checkout/shared', 'pix-checkout/custom-elements.json', 'pix-checkout/react', 'pix-checkout/vue'];
    const shared = await import('pix-checkout/shared');
    const server = await import('pix-checkout/server');
    console.log(JSON.stringify({
      paths: names.map((n) => import.meta.resolve(n)),
      crc: shared.crc16('123456789'),
      verifier: typeof server.verifyWebhookSignature,
      createApp: typeof server.createApp,
      merchant: [typeof server.createCheckoutClient, typeof server.constructEvent, typeof server.webhookHandler],
    }));`,
    ],
    { cwd: folder },
  );
  const exported = JSON.parse(resolved.stdout) as { paths: string[]; crc: string; verifier: string; createApp: string; merchant: string[] };
  assert.ok(exported.paths[2]!.endsWith('/node_modules/pix-checkout/dist/pix-checkout.js'));
  assert.deepEqual(exported.paths.slice(7), [exported.paths[0], exported.paths[0]], "'pix-checkout/react' and '/vue' run as 'pix-checkout' itself");
  assert.equal(exported.crc, '29B1', 'CRC-16/CCITT-FALSE check value');
  assert.equal(exported.verifier, 'function');
  assert.equal(exported.createApp, 'function');
  assert.deepEqual(exported.merchant, ['function', 'function', 'function'], 'the merchant client and webhook helpers');
  const manifest = JSON.parse(readFileSync(join(installed, 'custom-elements.json'), 'utf8')) as {
    modules: {
      path: string;
      declarations?: {
        tagName?: string;
        attributes?: { name: string }[];
        events?: { name: string }[];
        cssParts?: { name: string }[];
        cssProperties?: { name: string }[];
      }[];
    }[];
  };
  const element = manifest.modules.flatMap((m) => m.declarations ?? []).find((d) => d.tagName === 'pix-checkout');
  assert.ok(element, 'the manifest declares <pix-checkout>');
  for (const mod of manifest.modules) assert.ok(existsSync(join(installed, mod.path)), `the manifest's module ${mod.path} is in the package`);
  assert.deepEqual(
    element.attributes?.map((a) => a.name),
    ['endpoint', 'checkout', 'amount', 'description', 'locale', 'renewals', 'mode', 'layout', 'theme'],
  );
  assert.deepEqual(element.events?.map((e) => e.name).sort(), [
    'pix-canceled',
    'pix-copy',
    'pix-created',
    'pix-error',
    'pix-expired',
    'pix-paid',
    'pix-status-change',
  ]);
  assert.ok(element.cssParts?.some((p) => p.name === 'copy-button'));
  assert.ok(element.cssProperties?.some((p) => p.name === '--pix-accent'));

  // The declarations: a consumer, a React 19 component (react.tsx) and a Vue one (vue.tsx, TSX and the
  // template's GlobalComponents) type-check, and misuse is caught (their @ts-expect-error lines).
  const types = join(repo, 'node_modules', '@types');
  writeFileSync(
    join(folder, 'tsconfig.json'),
    readFileSync(join(fixture, 'tsconfig.json'), 'utf8').replace('"types": ["node"]', `"types": ["node"], "typeRoots": [${JSON.stringify(types)}]`),
  );
  const problems = await run(process.execPath, [join(repo, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', folder]).then(
    () => '',
    (error: { stdout: string; stderr: string }) => `${error.stdout}${error.stderr}` || 'tsc failed',
  );
  assert.equal(problems, '', 'the consumer type-checks against the declarations');

  // createApp in node:http, from the installed package; the page loads the proxy-served script.
  server = spawn(process.execPath, ['server.mjs'], { cwd: folder, stdio: ['ignore', 'pipe', 'inherit'] });
  const url = await printed(server, /listening (\S+)/, 'the fixture server');
  const health = await fetch(`${url}/health`);
  assert.equal(health.status, 200);

  // The Vite dev server of a merchant's app (vite-app/), its vite.config.ts proxying /api to the proxy.
  const viteBin = join(folder, 'node_modules', 'vite', 'bin', 'vite.js');
  const viteApp = { cwd: join(folder, 'vite-app'), env: { ...process.env, PIX_PROXY_URL: url } };
  vite = spawn(process.execPath, [viteBin, '--port', '0', '--host', '127.0.0.1', '--clearScreen', 'false'], {
    ...viteApp,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const app = (await printed(vite, /Local:\s+(http:\/\/\S+?)\/?\s/, 'the Vite dev server')).replace(/\/$/, '');
  // The page's fetch, through Vite to the proxy and back: the proxy's JSON.
  const created = await fetch(`${app}/api/payments`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', origin: app },
    body: JSON.stringify({ value: 5.5, description: 'Vite proxy' }),
  });
  assert.equal(created.status, 201, 'Vite passes POST /api/payments to the proxy');
  const payment = (await created.json()) as { reference: string; brcode: string; status: string };
  assert.match(payment.brcode, /^000201/);
  assert.equal(payment.status, 'pending');
  // The status stream, through Vite: the first event arrives while the stream stays open (unbuffered).
  const streaming = new AbortController();
  const stream = await fetch(`${app}/api/payments/${payment.reference}/events`, { signal: streaming.signal });
  assert.equal(stream.status, 200);
  assert.match(stream.headers.get('content-type') ?? '', /^text\/event-stream/);
  const reader = stream.body!.getReader();
  let events = '';
  const deadline = setTimeout(() => streaming.abort(), 10_000);
  while (!/\n\n/.test(events)) {
    const { value, done } = await reader.read();
    if (done) break;
    events += Buffer.from(value).toString();
  }
  clearTimeout(deadline);
  streaming.abort();
  assert.match(events, new RegExp(`event: status\\ndata: \\{[^\\n]*"reference":"${payment.reference}"`), 'the first status event, before the stream ends');
  // The element's module, served by Vite from the installed package.
  const entry = await (await fetch(`${app}/main.ts`)).text();
  const elementModule = /import\s*["']([^"']*pix-checkout[^"']*)["']/.exec(entry)?.[1];
  assert.ok(elementModule, `main.ts imports the package through Vite: ${entry}`);
  const served = await fetch(new URL(elementModule, app));
  assert.equal(served.status, 200);
  assert.match(await served.text(), /customElements\.define\(\s*["']pix-checkout["']/, 'the module that registers <pix-checkout>');
  // The same app built, under `vite preview`: its preview.proxy passes /api to the proxy too.
  await run(process.execPath, [viteBin, 'build', '--logLevel', 'warn'], viteApp);
  preview = spawn(process.execPath, [viteBin, 'preview', '--port', '0', '--host', '127.0.0.1'], { ...viteApp, stdio: ['ignore', 'pipe', 'inherit'] });
  const previewed = (await printed(preview, /Local:\s+(http:\/\/\S+?)\/?\s/, 'vite preview')).replace(/\/$/, '');
  const read = await fetch(`${previewed}/api/payments/${payment.reference}`);
  assert.equal(read.status, 200, 'vite preview passes GET /api/payments/:reference to the proxy');
  assert.equal(((await read.json()) as { reference: string }).reference, payment.reference);
  assert.match(await (await fetch(previewed)).text(), /<script type="module" crossorigin src="\/assets\/[^"]+\.js">/, 'the built page');
  await stop(preview);

  browser = await puppeteer.launch({
    executablePath: findChrome() ?? '/usr/bin/chromium',
    headless: true,
    args: CHROME_ARGS,
  });
  const page = await browser.newPage();
  const failures: string[] = [];
  page.on('pageerror', (error) => failures.push(String(error)));
  await page.goto(url);
  await page.waitForFunction(() => document.querySelector('pix-checkout')?.shadowRoot?.querySelector('[part~="qr"] path'), { timeout: 20_000 });
  const shown = await page.evaluate(() => {
    const root = document.querySelector('pix-checkout')!.shadowRoot!;
    const code = root.querySelector<HTMLInputElement | HTMLTextAreaElement>('[part~="code"]');
    return { code: code?.value ?? code?.textContent ?? '', amount: root.querySelector('[part~="amount"]')?.textContent ?? '' };
  });
  assert.match(shown.code, /^000201/, 'the copy-and-paste code is shown');
  assert.match(shown.amount, /12,34/);

  // The Vite app's page: the element from the app's bundle, its payment made through Vite's proxy.
  await page.goto(app);
  await page.waitForFunction(() => document.querySelector('pix-checkout')?.shadowRoot?.querySelector('[part~="qr"] path'), { timeout: 20_000 });
  const viaVite = await page.evaluate(() => document.querySelector('pix-checkout')!.shadowRoot!.querySelector('[part~="amount"]')?.textContent ?? '');
  assert.match(viaVite, /12,34/);
  assert.deepEqual(failures, []);
});
