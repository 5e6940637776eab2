/**
 * The two packages as a merchant gets them, from the commands the docs write, typed literally in a
 * fresh checkout of this repository (test/support/documented.ts): the docs' `npm ci && npm run pack`
 * (the build, then one tarball for the widget, `pix-checkout`, and one for the proxy,
 * `pix-checkout-server`), `sha512sum -c SHA512SUMS`, the docs' `npm install ../pix-checkout/…tgz`
 * lines in folders beside the checkout, and the Dockerfile's steps replayed without a container daemon.
 *
 * - The widget alone, added to a Vite app: measured (packages, MB on disk), and it brings lit and
 *   nothing of the server: no native binary, no database driver, no logger, no HTTP framework.
 * - The server alone, installed by the Dockerfile's own steps (`--omit=dev`, no tsx, no development
 *   dependency): measured, then `pix-checkout sandbox` and `pix-checkout serve` from that folder
 *   against a throwaway Postgres: `/ready` 200, the script-tag build served, SIGTERM ends it with
 *   exit 0 and no error line.
 * - The merchant's app with both: the declarations type-check a consumer and a React 19 and a Vue
 *   component, createApp mounts in a plain node:http server against the packaged sandbox, a Vite dev
 *   server proxies `/api` to it, and headless Chromium renders the element from the script-tag build
 *   the proxy serves and from the Vite app.
 *
 * Slow (two installs and two packs of the repository, five installs of packages): one file, run
 * alone. The figures are printed.
 */
import assert from 'node:assert/strict';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify, stripVTControlCharacters } from 'node:util';
import puppeteer, { type Browser } from 'puppeteer-core';
import { documentedLines, freshCheckout, readTarball, replayDockerfile, type TarballInfo } from '../support/documented.ts';
import { CHROME_ARGS, findChrome } from '../support/find-chrome.mjs';
import { startPostgres, type RunningPostgres } from '../support/postgres.ts';

const run = promisify(execFile);
const repo = fileURLToPath(new URL('../..', import.meta.url));
const fixture = fileURLToPath(new URL('./package-fixture', import.meta.url));
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const big = { maxBuffer: 64 * 1024 * 1024 };
/** What the server package must never bring to a browser app. */
const SERVER_ONLY = ['pg', 'pino', 'hono', '@hono/node-server', 'libsql', '@libsql', 'selfsigned', 'prom-client', 'qrcode'];

let root: string;
/** The merchant's app: Vite, then the widget, then the server and the front end's types. */
let folder: string;
/** The fresh checkout the docs' commands are typed in: `../pix-checkout` from the folders beside it. */
let checkout: string;
let widget: TarballInfo;
let serverPackage: TarballInfo;
/** The folder `/app` of the Dockerfile's install stage: the server package as the image holds it. */
let imageApp: string;
let server: ChildProcess | null = null;
let vite: ChildProcess | null = null;
let preview: ChildProcess | null = null;
let browser: Browser | null = null;
let sandboxProcess: ChildProcess | null = null;
let proxyProcess: ChildProcess | null = null;
let postgres: RunningPostgres | null = null;

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

/** `npm install` in `cwd`, from npm's cache where it can (`npm ci` filled it); with a cold cache, from the registry. */
async function install(cwd: string, specs: string[], options: string[] = []): Promise<void> {
  await run(npm, ['install', ...specs, ...options, '--no-audit', '--no-fund', '--prefer-offline', '--loglevel=error'], { cwd, ...big });
}

/** An empty project folder. */
function project(name: string): string {
  const dir = join(root, name);
  mkdirSync(dir);
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name, private: true, type: 'module' }));
  return dir;
}

interface Footprint {
  /** Package folders in node_modules, nested ones included ("name" or "name@nested/path"). */
  packages: Set<string>;
  /** Native binaries (*.node), relative to node_modules. */
  natives: string[];
  /** On disk, as `du -sk` counts it. */
  kilobytes: number;
}

/** What node_modules holds: its packages, its native binaries, its size on disk. */
async function footprint(dir: string): Promise<Footprint> {
  const modules = join(dir, 'node_modules');
  const packages = new Set<string>();
  const natives: string[] = [];
  const visit = (path: string, relative: string): void => {
    for (const entry of readdirSync(path, { withFileTypes: true })) {
      const full = join(path, entry.name);
      const rel = relative ? `${relative}/${entry.name}` : entry.name;
      if (entry.isDirectory()) visit(full, rel);
      else if (entry.name.endsWith('.node')) natives.push(rel);
      else if (entry.name === 'package.json' && /(^|\/)node_modules\/(@[^/]+\/)?[^/@][^/]*$/.test(`node_modules/${relative}`)) packages.add(relative);
    }
  };
  visit(modules, '');
  const { stdout } = await run('du', ['-sk', modules]);
  return { packages, natives, kilobytes: Number(stdout.split(/\s/)[0]) };
}

/** The package names (the last `name` or `@scope/name` of each path). */
const names = (packages: Iterable<string>): string[] => [...new Set([...packages].map((path) => /(@[^/]+\/)?[^/]+$/.exec(path)![0]))].sort();
const mb = (kilobytes: number): string => (kilobytes / 1024).toFixed(1);

before(async () => {
  root = mkdtempSync(join(tmpdir(), 'pix-package-'));
});
after(async () => {
  await browser?.close();
  await stop(vite);
  await stop(preview);
  await stop(server);
  await stop(proxyProcess);
  await stop(sandboxProcess);
  await postgres?.stop();
  rmSync(root, { recursive: true, force: true });
});

/** Runs one documented shell line as a person would, in `cwd`; throws with its output if it fails. */
async function typed(line: { file: string; line: number; command: string }, cwd: string): Promise<string> {
  try {
    const { stdout, stderr } = await run('/bin/sh', ['-c', line.command], { cwd, ...big });
    return `${stdout}${stderr}`;
  } catch (error) {
    const failed = error as { stdout?: string; stderr?: string };
    throw new Error(`${line.file}:${line.line} failed as written: ${line.command}\n${failed.stdout ?? ''}${failed.stderr ?? ''}`, { cause: error });
  }
}

/** Each distinct documented line (its comment aside) typed once in `cwd`. */
async function typedOnce(lines: { file: string; line: number; command: string }[], cwd: string): Promise<void> {
  const seen = new Set<string>();
  for (const line of lines) {
    const command = line.command.replace(/\s+#.*$/, '');
    if (seen.has(command)) continue;
    seen.add(command);
    await typed(line, cwd);
  }
}

test('npm run pack, as the docs write it, makes two packages: the widget, and the server with the command line', { timeout: 600_000 }, async () => {
  checkout = join(root, 'pix-checkout');
  freshCheckout(repo, checkout);
  const packLines = documentedLines(repo, /^npm ci && npm run pack\b/);
  assert.ok(packLines.length > 0, 'the docs say how to make the packages');
  await typedOnce(packLines, checkout);
  const version = (JSON.parse(readFileSync(join(repo, 'package.json'), 'utf8')) as { version: string }).version;
  const packed = await Promise.all(['pix-checkout', 'pix-checkout-server'].map((name) => readTarball(join(checkout, `${name}-${version}.tgz`))));
  [widget, serverPackage] = packed as [TarballInfo, TarballInfo];
  // `npm pack` in the development manifest still refuses, and says what to run instead.
  const refused = await run(npm, ['pack', '--dry-run'], { cwd: checkout }).then(
    () => null,
    (error: { stderr: string }) => error.stderr,
  );
  assert.match(refused ?? 'npm pack succeeded', /npm run pack makes the two packages/, 'npm pack in the root refuses with a sentence');
  assert.deepEqual(
    packed.map((p) => p.filename),
    ['pix-checkout-0.1.0.tgz', 'pix-checkout-server-0.1.0.tgz'].map((name) => name.replace('0.1.0', widget.version)),
  );
  assert.equal(widget.version, serverPackage.version, 'the two versions move together');
  for (const p of packed) {
    assert.match(p.integrity, /^sha512-/, `${p.filename} has a sha512 integrity to pin it by`);
    assert.ok(p.size < 1024 * 1024, `${p.filename} stays small (${p.size} bytes)`);
    assert.ok(
      !p.files.some((f) => f.startsWith('test/') || f.startsWith('node_modules/') || /\.ts$/.test(f.replace(/\.d\.ts$/, ''))),
      `no tests, TypeScript sources or modules in ${p.filename}`,
    );
    console.log(`packed ${p.filename}: ${(p.size / 1024).toFixed(1)} KB, ${p.files.length} files, ${p.integrity}`);
  }
  const sums = await run('sha512sum', ['-c', 'SHA512SUMS'], { cwd: checkout });
  assert.equal(sums.stdout, packed.map((p) => `${p.filename}: OK\n`).join(''), 'SHA512SUMS checks both tarballs');
  for (const needed of [
    'dist/pix-checkout.js',
    'dist/npm/index.js',
    'dist/npm/element.js',
    'lib/src/define.d.ts',
    'lib/src/frameworks/react.d.ts',
    'lib/src/frameworks/vue.d.ts',
    'lib/src/shared/index.js',
    'custom-elements.json',
  ]) {
    assert.ok(widget.files.includes(needed), `the widget holds ${needed}`);
  }
  assert.ok(!widget.files.some((f) => f.startsWith('lib/server/') || f.startsWith('bin/')), 'the widget holds no server and no command line');
  assert.deepEqual(Object.keys(widget.dependencies), ['lit', 'zod'], "the widget's dependencies");
  for (const needed of [
    'lib/server/index.js',
    'lib/server/index.d.ts',
    'lib/server/dev-stack.js',
    'lib/src/shared/index.js',
    'bin/pix-checkout.mjs',
    'dist/pix-checkout.js',
    'dist/pix-checkout.later.js',
    'dist/pix-checkout.files.json',
  ]) {
    assert.ok(serverPackage.files.includes(needed), `the server package holds ${needed}`);
  }
  assert.ok(!serverPackage.files.some((f) => f.startsWith('dist/npm/')), 'the server package holds no bundler build of the element');
  assert.ok(!('lit' in serverPackage.dependencies), 'the server does not depend on lit');
  const development = (JSON.parse(readFileSync(join(repo, 'package.json'), 'utf8')) as { dependencies: Record<string, string> }).dependencies;
  for (const [name, range] of Object.entries({ ...widget.dependencies, ...serverPackage.dependencies })) {
    assert.equal(range, development[name], `${name}'s range is the root package.json's`);
  }
});

test('the widget alone, added to a Vite app, brings lit and nothing of the server', { timeout: 300_000 }, async () => {
  folder = project('shop');
  await install(folder, [`vite@${installedVersion('vite')}`]);
  const before = await footprint(folder);
  const widgetLines = documentedLines(repo, new RegExp(`^npm install \\.\\./pix-checkout/pix-checkout-${widget.version.replace(/\./g, '\\.')}\\.tgz\\b`));
  assert.ok(widgetLines.length > 0, "the docs say how to install the widget's tarball");
  await typedOnce(widgetLines, folder);
  const after = await footprint(folder);
  const added = [...after.packages].filter((p) => !before.packages.has(p));
  const addedNatives = after.natives.filter((n) => !before.natives.includes(n));
  const kilobytes = after.kilobytes - before.kilobytes;
  console.log(
    `widget install: +${added.length} packages, +${mb(kilobytes)} MB over a Vite app (${before.packages.size} packages, ${mb(before.kilobytes)} MB): ${names(added).join(', ')}`,
  );
  assert.deepEqual(addedNatives, [], 'no native binary comes with the widget');
  for (const name of SERVER_ONLY)
    assert.ok(!names(after.packages).includes(name) && !names(after.packages).some((n) => n.startsWith(`${name}/`)), `no ${name}`);
  assert.deepEqual(
    names(added).filter(
      (n) => !['pix-checkout', 'lit', 'lit-html', 'lit-element', '@lit/reactive-element', '@lit-labs/ssr-dom-shim', '@types/trusted-types', 'zod'].includes(n),
    ),
    [],
    'the widget, lit (with its own two) and zod, nothing else',
  );
  assert.ok(!existsSync(join(folder, 'node_modules', '.bin', 'pix-checkout')), 'the widget has no command line');
});

test("the Dockerfile's steps, replayed without a container daemon, pack and install the server as the image holds it", { timeout: 600_000 }, async () => {
  const stages = await replayDockerfile(join(checkout, 'Dockerfile'), checkout, join(root, 'image'));
  assert.deepEqual(
    stages.map((stage) => stage.name),
    ['build', 'install', 'stage-2'],
  );
  const [build, install, image] = stages as [(typeof stages)[0], (typeof stages)[0], (typeof stages)[0]];
  const sums = await run('sha512sum', ['-c', 'SHA512SUMS'], { cwd: join(build.root, 'packages') });
  assert.match(sums.stdout, /pix-checkout-server-[\d.]+\.tgz: OK/, "the build stage's tarballs check against their SHA512SUMS");
  assert.ok(existsSync(join(install.root, 'app', 'node_modules', 'pix-checkout-server', 'package.json')), 'the install stage holds the server package');
  imageApp = join(image.root, 'app');
  assert.ok(existsSync(join(imageApp, 'node_modules', '.bin', 'pix-checkout')), "the image's /app has the command line its ENTRYPOINT runs");
  assert.ok(existsSync(join(image.root, 'data')), "the image's /data, for the store and the token file");
});

test('the server package installed with --omit=dev serves against Postgres and stops cleanly on SIGTERM', { timeout: 300_000 }, async () => {
  // What the container image holds (the Dockerfile's steps, replayed above): the tarball alone, production dependencies only.
  const app = imageApp;
  assert.ok(app, "the Dockerfile's steps ran");
  const installed = await footprint(app);
  console.log(
    `server install (--omit=dev): ${installed.packages.size} packages, ${mb(installed.kilobytes)} MB, native binaries: ${installed.natives.join(', ') || 'none'}`,
  );
  assert.ok(!existsSync(join(app, 'node_modules', 'tsx')), 'no TypeScript runtime');
  assert.ok(!existsSync(join(app, 'node_modules', 'pix-checkout')), 'the server carries the script it serves: no widget package');
  // The render entry's packages are optional peers, which the image adds (the pages' first screens): the entry loads from it.
  assert.ok(existsSync(join(app, 'node_modules', '@lit-labs', 'ssr', 'package.json')), "the image has the render entry's optional peers");
  await run(process.execPath, ['--input-type=module', '-e', "await import('pix-checkout-server/render')"], { cwd: app });
  const bin = join(app, 'node_modules', '.bin', 'pix-checkout');
  // Nothing of this machine's environment: only what the unit or the compose file would set.
  const baseEnv = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: app };

  sandboxProcess = spawn(process.execPath, [bin, 'sandbox', '--port', '0', '--json'], { cwd: app, env: baseEnv, stdio: ['ignore', 'pipe', 'inherit'] });
  const sandbox = JSON.parse(await printed(sandboxProcess, /^(\{.*\})$/m, 'pix-checkout sandbox')) as { settings: Record<string, string> };
  postgres = await startPostgres();
  const databaseUrl = await postgres.createDatabase('proxy');
  const apiKey = 'k'.repeat(40);
  proxyProcess = spawn(process.execPath, [bin, 'serve'], {
    cwd: app,
    env: {
      ...baseEnv,
      ...sandbox.settings,
      PIX_DATABASE_URL: databaseUrl,
      PIX_API_KEY: apiKey,
      PIX_WEBHOOK_SECRET_PATH: 'w'.repeat(32),
      PIX_ALLOWED_ORIGINS: 'https://shop.example',
      PORT: '0',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  proxyProcess.stdout!.on('data', (chunk: Buffer) => (out += String(chunk)));
  proxyProcess.stderr!.on('data', (chunk: Buffer) => (err += String(chunk)));
  const url = await printed(proxyProcess, /"url":"(http:\/\/[^"]+)"/, 'pix-checkout serve');

  const ready = await fetch(`${url}/ready`);
  const readiness = (await ready.json()) as { status: string; checks: { database: string } };
  assert.equal(ready.status, 200, `ready: ${JSON.stringify(readiness)}`);
  assert.equal(readiness.checks.database, 'postgres');
  const script = await fetch(`${url}/api/pix-checkout.js`);
  assert.equal(script.status, 200, 'the script-tag build, from the server package itself');
  const scriptText = await script.text();
  assert.match(scriptText, /customElements\.define\(\s*["'`]pix-checkout["'`]/);
  // Its chunks, under the build's version the script names (the package's manifest).
  const chunkUrl = /\.\/(pix-checkout\.later\.js\?v=[\w-]{8})/.exec(scriptText)?.[1];
  assert.ok(chunkUrl, 'the script asks for its later chunk with its version');
  const chunk = await fetch(`${url}/api/${chunkUrl}`);
  assert.equal(chunk.status, 200, `${chunkUrl}, from the server package itself`);
  assert.equal(chunk.headers.get('cache-control'), 'public, max-age=31536000, immutable', 'the version is the build of the package');
  const created = await fetch(`${url}/api/checkouts`, {
    method: 'POST',
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ value: 12.34, order_id: 'image-1', issue_payment: true }),
  });
  assert.equal(created.status, 201, `a checkout through the sandbox, kept in Postgres: ${await created.clone().text()}`);
  // A script-tag page's head asks for the payment with its first screen: rendered by the image's proxy.
  const { checkout_id } = (await created.json()) as { checkout_id: string };
  const firstScreen = await fetch(`${url}/api/checkouts/${checkout_id}/payment?render=pt-BR`, { method: 'POST', headers: { origin: 'https://shop.example' } });
  const withScreen = (await firstScreen.json()) as { brcode: string; first_screen?: { html: string } };
  assert.equal(firstScreen.status, 200, JSON.stringify(withScreen));
  assert.ok(withScreen.first_screen?.html.includes(`>${withScreen.brcode}</textarea>`), "the payment's first screen, with its code");

  const signalled = performance.now();
  // 'close', not 'exit': the process can exit before its last stdout chunk (the "stopped" line) is read.
  const exited = new Promise<[number | null, NodeJS.Signals | null]>((resolve) => proxyProcess!.once('close', (code, signal) => resolve([code, signal])));
  proxyProcess.kill('SIGTERM');
  const [code, signal] = await exited;
  console.log(`serve: exit ${code} ${Math.round(performance.now() - signalled)} ms after SIGTERM (Postgres, one idle instance)`);
  assert.deepEqual([code, signal], [0, null], `exit 0 after SIGTERM: ${out}${err}`);
  assert.equal(err, '', 'nothing on stderr');
  const lines = out
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as { level: number; msg: string });
  assert.deepEqual(
    lines.filter((line) => line.level >= 50),
    [],
    'no error line',
  );
  assert.ok(
    lines.some((line) => line.msg === 'stopped'),
    'the last word is "stopped"',
  );
  await stop(sandboxProcess);
  await postgres.stop();
  postgres = null;
});

test("the merchant's app with both packages: types, the proxy's script and the Vite app in Chromium", { timeout: 300_000 }, async () => {
  // Beside the widget, the server for the app's own backend and what a front end already has, at the
  // versions this repository develops against.
  const serverLines = documentedLines(
    repo,
    new RegExp(`^npm install \\.\\./pix-checkout/pix-checkout-server-${serverPackage.version.replace(/\./g, '\\.')}\\.tgz\\b`),
  );
  assert.ok(serverLines.length > 0, "the docs say how to install the server's tarball");
  await typedOnce(serverLines, folder);
  await install(
    folder,
    ['@types/react', 'vue', '@lit-labs/ssr'].map((name) => `${name}@${installedVersion(name)}`),
  );
  const installed = join(folder, 'node_modules', 'pix-checkout');
  assert.ok(!existsSync(join(folder, 'node_modules', 'tsx')), 'tsx is a development dependency only');
  for (const file of readdirSync(fixture)) cpSync(join(fixture, file), join(folder, file), { recursive: true });

  // The packages as published: where they come from, and a README whose pictures are in the package.
  for (const p of [widget, serverPackage]) {
    const meta = JSON.parse(readFileSync(join(folder, 'node_modules', p.name, 'package.json'), 'utf8')) as {
      homepage?: string;
      repository?: { url?: string };
      bugs?: { url?: string };
    };
    assert.match(meta.homepage ?? '', /^https:\/\//, `${p.name}'s package.json has a homepage`);
    assert.match(meta.repository?.url ?? '', /^git\+https:\/\/.+\.git$/, `${p.name}'s package.json has a repository`);
    assert.match(meta.bugs?.url ?? '', /^https:\/\/.+\/issues$/, `${p.name}'s package.json says where to report bugs`);
    const readme = readFileSync(join(folder, 'node_modules', p.name, 'README.md'), 'utf8');
    assert.doesNotMatch(readme, /^npm install pix-checkout(-server)?\s*$/m, 'while unpublished, the README installs the tarballs');
    const pictures = [...readme.matchAll(/<img src="([^"]+)"/g)].map((m) => m[1]!);
    assert.deepEqual(pictures, ['docs/images/widget-phone.png', 'docs/images/widget-desktop.png']);
    for (const picture of pictures) assert.ok(p.files.includes(picture), `the README's picture ${picture} is in ${p.filename}`);
  }

  // The command line, compiled: no TypeScript runtime in the folder.
  const help = await run(join(folder, 'node_modules', '.bin', 'pix-checkout'), ['--help'], { cwd: folder });
  assert.match(help.stdout, /Usage: pix-checkout <command>/);

  // The server-rendered widget from the installed package, in plain Node (no tsx), with its optional peers (@lit-labs/ssr added, lit from the widget).
  const rendered = await run(
    process.execPath,
    [
      '--input-type=module',
      '-e',
      `
    const { renderPixCheckout } = await import('pix-checkout-server/render');
    const { buildDynamicBrCode } = await import('pix-checkout-server/shared');
    const now = new Date();
    const brcode = buildDynamicBrCode({ locationUrl: 'pix.example.com/qr/v2/abc', amount: 12.34, merchantName: 'LOJA', merchantCity: 'SAO PAULO' });
    const payment = { reference: 'r1', status: 'pending', value: 12.34, brcode, qr_code_url: '', checkout_url: '', created_at: now.toISOString(), expires_at: new Date(+now + 6e5).toISOString(), server_time: now.toISOString() };
    const html = await renderPixCheckout({ checkout_id: 'co_' + 'A'.repeat(24), renewals_left: 1, payment }, { endpoint: '/api', locale: 'en' });
    console.log(JSON.stringify({ dsd: html.includes('shadowrootmode="open"'), qr: /<svg part="qr"[^>]*>[^]*<path d="M/.test(html), code: html.includes('>' + brcode + '</textarea>'), english: html.includes('Waiting for payment') }));`,
    ],
    { cwd: folder },
  );
  assert.deepEqual(
    JSON.parse(rendered.stdout),
    { dsd: true, qr: true, code: true, english: true },
    'pix-checkout-server/render renders from the installed package',
  );
  // The exports maps: every entry resolves, and the manifest describes the element.
  const resolved = await run(
    process.execPath,
    [
      '--input-type=module',
      '-e',
      `
    const names = ['pix-checkout', 'pix-checkout/element', 'pix-checkout/script', 'pix-checkout-server', 'pix-checkout-server/sandbox', 'pix-checkout/shared', 'pix-checkout/custom-elements.json', 'pix-checkout/react', 'pix-checkout/vue', 'pix-checkout-server/shared'];
    const shared = await import('pix-checkout/shared');
    const serverShared = await import('pix-checkout-server/shared');
    const server = await import('pix-checkout-server');
    console.log(JSON.stringify({
      paths: names.map((n) => import.meta.resolve(n)),
      crc: [shared.crc16('123456789'), serverShared.crc16('123456789')],
      verifier: typeof server.verifyWebhookSignature,
      createApp: typeof server.createApp,
      merchant: [typeof server.createCheckoutClient, typeof server.constructEvent, typeof server.webhookHandler],
    }));`,
    ],
    { cwd: folder },
  );
  const exported = JSON.parse(resolved.stdout) as { paths: string[]; crc: string[]; verifier: string; createApp: string; merchant: string[] };
  assert.ok(exported.paths[2]!.endsWith('/node_modules/pix-checkout/dist/pix-checkout.js'));
  assert.deepEqual(exported.paths.slice(7, 9), [exported.paths[0], exported.paths[0]], "'pix-checkout/react' and '/vue' run as 'pix-checkout' itself");
  assert.deepEqual(exported.crc, ['29B1', '29B1'], 'CRC-16/CCITT-FALSE check value, from either package');
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
    ['endpoint', 'checkout', 'payment', 'payment-from', 'amount', 'description', 'locale', 'renewals', 'mode', 'layout', 'theme'],
  );
  assert.deepEqual(element.events?.map((e) => e.name).sort(), [
    'pix-canceled',
    'pix-copy',
    'pix-created',
    'pix-error',
    'pix-expired',
    'pix-paid',
    'pix-save',
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
