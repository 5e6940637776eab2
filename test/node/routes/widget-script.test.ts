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
import { chooseEncoding, widgetScript } from '../../../server/routes/widget-script.ts';

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
      assert.ok(!/\bimport\b|\bfrom\s*["']/.test(text.replace('import(`./pix-checkout.save.js`)', '')), `${file} imports nothing`);
    }
    assert.equal((await fetch(`${stack.apiUrl}/pix-checkout.fr.js`)).status, 404, 'no other file');
  });

  test('other methods get 405', async () => {
    const res = await fetch(`${stack.apiUrl}/pix-checkout.js`, { method: 'POST' });
    assert.equal(res.status, 405);
    assert.equal(res.headers.get('allow'), 'GET');
  });
});
