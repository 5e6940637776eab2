/**
 * `GET {basePath}/pix-checkout.js`: the widget's script-tag build, served by the proxy itself, so a
 * merchant's page needs one tag and trusts one origin (the proxy's) for both the script and the API;
 * beside it `pix-checkout.en.js` and `pix-checkout.es.js`, the languages the script loads on demand,
 * `pix-checkout.save.js`, the drawing of "Salvar QR Code" (phones), and `pix-checkout.later.js` with
 * `pix-checkout.status.js`, what follows the first QR (the screens of a code's end, the buttons no
 * first QR needs; the status's following: loaded once that QR is on screen).
 * Public and the same for everyone: any origin may load it (a module script is a CORS request).
 */
import { createHash } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import { fileURLToPath } from 'node:url';
import { Hono, type Handler } from 'hono';
import { errorBody } from '../../src/shared/errors.ts';
import { allowOnly } from '../http/method-not-allowed.ts';

export const WIDGET_SCRIPT_PATH = '/pix-checkout.js';
/**
 * The files the widget loads on demand, beside the script (vite.config.ts names them): its languages
 * the "Salvar QR Code" drawing and what follows the first QR. The script imports `./pix-checkout.en.js` relative to its own URL,
 * so they are served beside it.
 */
export const WIDGET_CHUNK_PATHS = [
  '/pix-checkout.en.js',
  '/pix-checkout.es.js',
  '/pix-checkout.save.js',
  '/pix-checkout.later.js',
  '/pix-checkout.status.js',
] as const;

/** dist/ beside lib/ when compiled (the installed package), beside server/ in this repository. */
const DIST = fileURLToPath(new URL(/\/lib\/server\/routes\/[^/]+$/.test(import.meta.url) ? '../../../dist/' : '../../dist/', import.meta.url));
const CANDIDATES = [`${DIST}pix-checkout.js`];

interface Loaded {
  path: string;
  mtimeMs: number;
  body: Uint8Array;
  etag: string;
  /** The file compressed once when read (gzip -9, brotli 11): a phone downloads 18 KB, not 47. */
  gzip: Uint8Array;
  br: Uint8Array;
}

/**
 * The coding to answer with, from Accept-Encoding: brotli, else gzip, else none. Tokens with `q=0`
 * are refused; other weights are not ranked (every browser that sends br prefers it).
 */
export function chooseEncoding(accept: string | undefined): 'br' | 'gzip' | null {
  const offered = new Set(
    (accept ?? '')
      .toLowerCase()
      .split(',')
      .map((token) => token.trim())
      .filter((token) => !/;\s*q=0(\.0*)?\s*$/.test(token))
      .map((token) => token.split(';')[0]!.trim()),
  );
  if (offered.has('br')) return 'br';
  if (offered.has('gzip')) return 'gzip';
  return null;
}

export function widgetScript(candidates: readonly string[] = CANDIDATES): Handler {
  let loaded: Loaded | null = null;
  // Re-read only when the file changed (a rebuild during development); one stat per request.
  const load = (): Loaded | null => {
    for (const path of candidates) {
      let mtimeMs: number;
      try {
        mtimeMs = statSync(path).mtimeMs;
      } catch {
        continue;
      }
      if (loaded?.path === path && loaded.mtimeMs === mtimeMs) return loaded;
      const body = readFileSync(path);
      loaded = {
        path,
        mtimeMs,
        body,
        etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"`,
        gzip: gzipSync(body, { level: 9 }),
        br: brotliCompressSync(body, { params: { [constants.BROTLI_PARAM_QUALITY]: 11, [constants.BROTLI_PARAM_SIZE_HINT]: body.length } }),
      };
      return loaded;
    }
    return null;
  };
  return (c) => {
    const script = load();
    if (!script) return c.json(errorBody('not_found', "The widget's script is not built: run `npm run build`."), 404);
    const encoding = chooseEncoding(c.req.header('accept-encoding'));
    const headers: Record<string, string> = {
      'content-type': 'text/javascript; charset=utf-8',
      // Unversioned URL: revalidated after five minutes, answered 304 while unchanged.
      'cache-control': 'public, max-age=300',
      // One ETag per coding: a cache keeps the gzip and the brotli answer apart.
      etag: encoding ? script.etag.replace(/"$/, `-${encoding}"`) : script.etag,
      vary: 'Accept-Encoding',
      'access-control-allow-origin': '*',
    };
    if (encoding) headers['content-encoding'] = encoding;
    // The proxy's strict headers say same-origin; this one file is for every page to load.
    const bag = c.get('responseHeaders');
    if (bag) bag['cross-origin-resource-policy'] = 'cross-origin';
    if (c.req.header('if-none-match') === headers.etag) return c.body(null, 304, headers);
    return c.body((encoding ? script[encoding] : script.body) as Uint8Array<ArrayBuffer>, 200, headers);
  };
}

/** The script's route and its chunks', under the API's base path. */
export function widgetScriptRoutes(candidates?: readonly string[]): Hono {
  const routes = new Hono();
  routes.get(WIDGET_SCRIPT_PATH, widgetScript(candidates));
  allowOnly(routes, WIDGET_SCRIPT_PATH, 'GET');
  for (const path of WIDGET_CHUNK_PATHS) {
    // Beside the script, wherever it was found.
    routes.get(path, widgetScript((candidates ?? CANDIDATES).map((file) => file.replace(/pix-checkout\.js$/, path.slice(1)))));
    allowOnly(routes, path, 'GET');
  }
  return routes;
}
