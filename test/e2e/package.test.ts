/**
 * The package as a merchant gets it: `npm pack` (which builds through `prepack`), installed from the
 * tarball into an empty folder, then used from there only. The command line runs without tsx, the
 * declarations type-check a consumer, createApp mounts in a plain node:http server against the
 * packaged sandbox, and headless Chromium renders the element from the script-tag build the proxy
 * serves. Slow (a pack and an install): one test, several checks.
 */
import assert from 'node:assert/strict';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import puppeteer, { type Browser } from 'puppeteer-core';
import { CHROME_ARGS, findChrome } from '../support/find-chrome.mjs';

const run = promisify(execFile);
const repo = fileURLToPath(new URL('../..', import.meta.url));
const fixture = fileURLToPath(new URL('./package-fixture', import.meta.url));
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';

let folder: string;
let server: ChildProcess | null = null;
let browser: Browser | null = null;

before(async () => {
  folder = mkdtempSync(join(tmpdir(), 'pix-package-'));
});
after(async () => {
  await browser?.close();
  if (server && server.exitCode === null) {
    const exited = new Promise((resolve) => server!.once('exit', resolve));
    server.kill('SIGTERM');
    await exited;
  }
  rmSync(folder, { recursive: true, force: true });
});

test('the packed tarball installs in an empty folder and works from there', { timeout: 300_000 }, async () => {
  // What `prepack` does, then the pack alone, so that its stdout is only the JSON.
  await run(npm, ['run', 'build'], { cwd: repo, maxBuffer: 64 * 1024 * 1024 });
  const { stdout } = await run(npm, ['pack', '--json', '--ignore-scripts', '--pack-destination', folder], { cwd: repo, maxBuffer: 64 * 1024 * 1024 });
  const [packed] = JSON.parse(stdout) as [{ filename: string; files: { path: string }[] }];
  const files = packed.files.map((f) => f.path);
  for (const needed of [
    'dist/pix-checkout.js',
    'dist/npm/index.js',
    'dist/npm/element.js',
    'lib/server/index.js',
    'lib/server/index.d.ts',
    'lib/src/define.d.ts',
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
  // with a cold cache, from the npm registry, as for any install.
  await run(npm, ['install', join(folder, packed.filename), '--no-audit', '--no-fund', '--prefer-offline', '--loglevel=error'], {
    cwd: folder,
    maxBuffer: 64 * 1024 * 1024,
  });
  const installed = join(folder, 'node_modules', 'pix-checkout');
  assert.ok(existsSync(join(installed, 'package.json')));
  assert.ok(!existsSync(join(folder, 'node_modules', 'tsx')), 'tsx is a development dependency only');
  for (const file of readdirSync(fixture)) cpSync(join(fixture, file), join(folder, file));

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
    const names = ['pix-checkout', 'pix-checkout/element', 'pix-checkout/script', 'pix-checkout/server', 'pix-checkout/sandbox', 'pix-checkout/shared', 'pix-checkout/custom-elements.json'];
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

  // The declarations: a consumer type-checks, and misuse is caught (its @ts-expect-error lines).
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
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    server!.stdout!.on('data', (chunk: Buffer) => {
      out += String(chunk);
      const match = /listening (\S+)/.exec(out);
      if (match) resolve(match[1]!);
    });
    server!.once('exit', (code) => reject(new Error(`the fixture server exited (${code}): ${out}`)));
  });
  const health = await fetch(`${url}/health`);
  assert.equal(health.status, 200);

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
  assert.deepEqual(failures, []);
});
