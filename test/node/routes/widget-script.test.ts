/**
 * The proxy serves the widget's script-tag build at {basePath}/pix-checkout.js: the bytes of
 * dist/pix-checkout.js (brotli or gzip as the browser accepts), loadable from any page (CORS), revalidated by ETag, and a clear 404 when the
 * file is not built; the languages it loads on demand beside it.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { get, type IncomingHttpHeaders } from 'node:http';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { Hono } from 'hono';
import { ErrorBody } from '../../../src/shared/errors.ts';
import { startDevStack, type DevStack } from '../../../server/dev-stack.ts';
import { WidgetVersions, readWidgetBuild } from '../../../server/domain/widget-versions.ts';
import { chooseEncoding, widgetScript, widgetScriptRoutes } from '../../../server/routes/widget-script.ts';
import { openStore } from '../../../server/store/open.ts';
import { waitFor } from '../../support/checks.ts';
import { WIDGET_CHUNKS, WIDGET_MANIFEST_FILE, WIDGET_VERSION, widgetChunkFile, type WidgetManifest } from '../../../src/shared/widget-files.ts';

describe('the widget script served by the proxy', () => {
  let stack: DevStack;
  let dir: string;
  before(async () => {
    stack = await startDevStack({ allowedOrigins: ['https://shop.example'] });
    dir = mkdtempSync(join(tmpdir(), 'pix-script-'));
  });
  after(async () => {
    await stack.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test('compressed as the browser accepts: brotli, else gzip, else the file as is; each coding its own ETag', async () => {
    const file = readFileSync(new URL('../../../dist/pix-checkout.js', import.meta.url));
    /** node:http, which decodes nothing: the bytes on the wire. */
    const raw = (acceptEncoding: string | null, etag?: string) =>
      new Promise<{ status: number; headers: IncomingHttpHeaders; body: Buffer }>((resolve, reject) => {
        const headers: Record<string, string> = {};
        if (acceptEncoding !== null) headers['accept-encoding'] = acceptEncoding;
        if (etag) headers['if-none-match'] = etag;
        get(`${stack.apiUrl}/pix-checkout.js`, { headers }, (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }));
        }).on('error', reject);
      });
    const br = await raw('gzip, deflate, br, zstd');
    assert.equal(br.headers['content-encoding'], 'br');
    assert.equal(br.headers.vary, 'Accept-Encoding');
    assert.deepEqual(brotliDecompressSync(br.body), file);
    assert.ok(br.body.length < file.length / 2, `brotli ${br.body.length} B of ${file.length}`);
    const gzip = await raw('gzip;q=1, br;q=0');
    assert.equal(gzip.headers['content-encoding'], 'gzip');
    assert.deepEqual(gunzipSync(gzip.body), file);
    const plain = await raw(null);
    assert.equal(plain.headers['content-encoding'], undefined);
    assert.deepEqual(plain.body, file);
    assert.equal(plain.headers.vary, 'Accept-Encoding');
    const etags = [br, gzip, plain].map((res) => res.headers.etag);
    assert.equal(new Set(etags).size, 3, 'one ETag per coding');
    assert.equal((await raw('br', br.headers.etag)).status, 304);
    assert.equal((await raw('gzip', br.headers.etag)).status, 200, "brotli's ETag does not validate the gzip answer");
    // The chunks beside it too.
    const chunk = await fetch(`${stack.apiUrl}/pix-checkout.save.js`, { headers: { 'accept-encoding': 'gzip' } });
    assert.equal(chunk.headers.get('content-encoding'), 'gzip');
    assert.equal(await chunk.text(), readFileSync(new URL('../../../dist/pix-checkout.save.js', import.meta.url), 'utf8'));
  });

  test('chooseEncoding reads Accept-Encoding tolerantly', () => {
    assert.equal(chooseEncoding(undefined), null);
    assert.equal(chooseEncoding(''), null);
    assert.equal(chooseEncoding('identity'), null);
    assert.equal(chooseEncoding('GZIP'), 'gzip');
    assert.equal(chooseEncoding('gzip, br'), 'br');
    assert.equal(chooseEncoding('br;q=0, gzip;q=0.5'), 'gzip');
    assert.equal(chooseEncoding('br; q=0.0, gzip; q=0'), null);
    assert.equal(chooseEncoding('*'), null);
  });

  test('answers the built file to a page on another origin, then 304 while unchanged', async () => {
    const res = await fetch(`${stack.apiUrl}/pix-checkout.js`, { headers: { origin: 'https://elsewhere.example' } });
    // `npm test` builds dist/ first; alone, run `npm run build` before this file.
    assert.equal(res.status, 200, 'dist/pix-checkout.js must be built (npm run build)');
    assert.equal(res.headers.get('content-type'), 'text/javascript; charset=utf-8');
    assert.equal(res.headers.get('access-control-allow-origin'), '*');
    assert.equal(res.headers.get('cross-origin-resource-policy'), 'cross-origin');
    assert.equal(res.headers.get('x-content-type-options'), 'nosniff');
    assert.equal(await res.text(), readFileSync(new URL('../../../dist/pix-checkout.js', import.meta.url), 'utf8'));
    const etag = res.headers.get('etag');
    assert.ok(etag);
    const again = await fetch(`${stack.apiUrl}/pix-checkout.js`, { headers: { 'if-none-match': etag } });
    assert.equal(again.status, 304);
    assert.equal(await again.text(), '');
  });

  test('re-reads a rebuilt file, and names the build when there is none', async () => {
    const file = join(dir, 'pix-checkout.js');
    const app = new Hono().get('/s.js', widgetScript([file]));
    const missing = await app.request('/s.js');
    assert.equal(missing.status, 404);
    assert.equal(ErrorBody.parse(await missing.json()).error.code, 'not_found');

    writeFileSync(file, 'export const a = 1;');
    const first = await app.request('/s.js');
    assert.equal(await first.text(), 'export const a = 1;');
    writeFileSync(file, 'export const a = 22;');
    utimesSync(file, new Date(), new Date(Date.now() + 5000));
    const second = await app.request('/s.js');
    assert.equal(await second.text(), 'export const a = 22;');
    assert.notEqual(second.headers.get('etag'), first.headers.get('etag'));
  });

  test('the languages, what follows the first QR and the QR drawing, loaded on demand, are served beside it, the same way; the script (the drawing: the later chunk) names them as it imports them', async () => {
    const script = await (await fetch(`${stack.apiUrl}/pix-checkout.js`)).text();
    const laterChunk = readFileSync(new URL('../../../dist/pix-checkout.later.js', import.meta.url), 'utf8');
    for (const [chunk, importer] of [
      ['en', script],
      ['es', script],
      ['later', script],
      ['status', script],
      ['save', laterChunk],
    ] as const) {
      const file = `pix-checkout.${chunk}.js`;
      assert.ok(importer.includes(`./${file}`), `./${file} is imported relative to the importer's own URL`);
      const res = await fetch(`${stack.apiUrl}/${file}`, { headers: { origin: 'https://elsewhere.example' } });
      assert.equal(res.status, 200, `${file} must be built (npm run build)`);
      assert.equal(res.headers.get('content-type'), 'text/javascript; charset=utf-8', file);
      assert.equal(res.headers.get('access-control-allow-origin'), '*', file);
      assert.equal(res.headers.get('cross-origin-resource-policy'), 'cross-origin', file);
      const text = await res.text();
      assert.equal(text, readFileSync(new URL(`../../../dist/${file}`, import.meta.url), 'utf8'), file);
      // A chunk of its own: it imports nothing (a second round trip, or a second copy of the script),
      // but the later chunk the drawing, on the tap's button.
      assert.ok(!/\bimport\b|\bfrom\s*["']/.test(text.replace(/import\(`\.\/pix-checkout\.save\.js\?v=[\w-]{8}`\)/, '')), `${file} imports nothing`);
    }
    assert.equal((await fetch(`${stack.apiUrl}/pix-checkout.fr.js`)).status, 404, 'no other file');
  });

  test("each chunk is asked for with the build's version: that version's bytes, cached for good; without it, revalidated; a version that is no build's is refused", async () => {
    const manifest = JSON.parse(readFileSync(new URL(`../../../dist/${WIDGET_MANIFEST_FILE}`, import.meta.url), 'utf8')) as WidgetManifest;
    assert.match(manifest.version, WIDGET_VERSION);
    assert.deepEqual(manifest.chunks, WIDGET_CHUNKS.map(widgetChunkFile));
    const script = await (await fetch(`${stack.apiUrl}/pix-checkout.js`)).text();
    const laterChunk = readFileSync(new URL('../../../dist/pix-checkout.later.js', import.meta.url), 'utf8');
    // Every chunk URL in the script and the later chunk carries the version: none without it.
    for (const text of [script, laterChunk]) {
      const urls = [...text.matchAll(/\.\/pix-checkout\.[a-z]+\.js[^`'"]*/g)].map((m) => m[0]);
      assert.ok(urls.length > 0);
      for (const url of urls) assert.ok(url.endsWith(`?v=${manifest.version}`), url);
    }
    const versioned = await fetch(`${stack.apiUrl}/pix-checkout.later.js?v=${manifest.version}`);
    assert.equal(versioned.status, 200);
    assert.equal(versioned.headers.get('cache-control'), 'public, max-age=31536000, immutable');
    assert.equal(await versioned.text(), laterChunk);
    const plain = await fetch(`${stack.apiUrl}/pix-checkout.later.js`);
    assert.equal(plain.headers.get('cache-control'), 'public, max-age=300');
    assert.equal(await plain.text(), laterChunk);
    for (const bad of ['short', 'not/a/version', 'toolongversion1']) {
      const res = await fetch(`${stack.apiUrl}/pix-checkout.later.js?v=${encodeURIComponent(bad)}`);
      assert.equal(res.status, 400, bad);
      const body = ErrorBody.parse(await res.json());
      assert.equal(body.error.code, 'invalid_request');
      assert.ok(body.error.fields?.v, 'names v');
    }
    const gone = await fetch(`${stack.apiUrl}/pix-checkout.later.js?v=Zz9_Zz9-`);
    assert.equal(gone.status, 404, "another version's chunk is never this build's");
    const body = ErrorBody.parse(await gone.json());
    assert.equal(body.error.code, 'not_found');
    assert.match(body.error.message, /Zz9_Zz9-/);
  });

  test("the store keeps this build's chunks as the proxy starts", async () => {
    const manifest = JSON.parse(readFileSync(new URL(`../../../dist/${WIDGET_MANIFEST_FILE}`, import.meta.url), 'utf8')) as WidgetManifest;
    for (const name of manifest.chunks) {
      const kept = await waitFor(`${name} kept`, async () => (await stack.store.widgetFiles.get(manifest.version, name)) ?? undefined);
      assert.ok(kept, `${name} kept`);
      assert.deepEqual(Buffer.from(kept), readFileSync(new URL(`../../../dist/${name}`, import.meta.url)), name);
    }
  });

  test("two versions over one store: each answers the other's pages with that version's chunks, and a version neither ran with a 404", async () => {
    // Two builds as two instances' packages would have them: the same file names, other bytes and versions.
    const build = (version: string, text: string) => {
      const folder = mkdtempSync(join(dir, 'build-'));
      writeFileSync(join(folder, 'pix-checkout.js'), `/* the script of ${version} */`);
      for (const chunk of WIDGET_CHUNKS) writeFileSync(join(folder, widgetChunkFile(chunk)), `/* ${chunk} of ${text} */`);
      writeFileSync(join(folder, WIDGET_MANIFEST_FILE), JSON.stringify({ version, chunks: WIDGET_CHUNKS.map(widgetChunkFile) }));
      return join(folder, 'pix-checkout.js');
    };
    const older = build('0ld-vers', 'the older');
    const newer = build('new_Vers', 'the newer');
    const store = await openStore({ dataDir: mkdtempSync(join(dir, 'store-')) });
    try {
      const versions = new WidgetVersions({ store: store.widgetFiles, now: () => 1_000 });
      const instance = (script: string) => new Hono().route('/api', widgetScriptRoutes({ candidates: [script], kept: versions }));
      // Each keeps its build as it starts (services.start), the older first.
      for (const script of [older, newer]) {
        const kept = readWidgetBuild(script)!;
        await versions.keep(kept.version, kept.files);
      }
      const [a, b] = [instance(older), instance(newer)];
      assert.equal(await (await b.request('/api/pix-checkout.later.js?v=0ld-vers')).text(), '/* later of the older */', 'the newer instance, an older page');
      assert.equal(await (await a.request('/api/pix-checkout.status.js?v=new_Vers')).text(), '/* status of the newer */', 'the older instance, a newer page');
      assert.equal(await (await a.request('/api/pix-checkout.en.js?v=0ld-vers')).text(), '/* en of the older */');
      const other = await b.request('/api/pix-checkout.later.js?v=neither1');
      assert.equal(other.status, 404);
      assert.equal(ErrorBody.parse(await other.json()).error.code, 'not_found');
    } finally {
      await store.close();
    }
  });

  test('other methods get 405', async () => {
    const res = await fetch(`${stack.apiUrl}/pix-checkout.js`, { method: 'POST' });
    assert.equal(res.status, 405);
    assert.equal(res.headers.get('allow'), 'GET');
  });
});
