/**
 * `GET {basePath}/pix-checkout.js`: the widget's script-tag build, served by the proxy itself, so a
 * merchant's page needs one tag and trusts one origin (the proxy's) for both the script and the API;
 * beside it `pix-checkout.en.js` and `pix-checkout.es.js`, the languages the script loads on demand,
 * `pix-checkout.save.js`, the drawing of "Salvar QR Code" (phones), and `pix-checkout.later.js` with
 * `pix-checkout.status.js`, what follows the first QR (the screens of a code's end, the buttons no
 * first QR needs; the status's following: loaded once that QR is on screen).
 * Public and the same for everyone: any origin may load it (a module script is a CORS request).
 *
 * The script asks for a chunk with its build's version (`?v=`, src/shared/widget-files.ts). This
 * proxy's own version is answered from its files; another version's (a script cached before an
 * upgrade, or served by an instance of another version during a rolling deploy) from the store, where
 * every instance keeps its version's chunks as it starts (domain/widget-versions.ts). A version kept nowhere
 * is a 404 that says so, never this version's chunk: the two would not fit.
 */
import { createHash } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import { Hono, type Context, type Handler } from 'hono';
import { errorBody } from '../../src/shared/errors.ts';
import {
  WIDGET_CHUNKS,
  WIDGET_MANIFEST_FILE,
  WIDGET_SCRIPT_FILE,
  WIDGET_VERSION,
  WIDGET_VERSION_PARAM,
  widgetChunkFile,
} from '../../src/shared/widget-files.ts';
import { allowOnly } from '../http/method-not-allowed.ts';
import { WIDGET_FILES_KEPT_MS, WIDGET_SCRIPT_CANDIDATES as CANDIDATES, parseManifest, type WidgetVersions } from '../domain/widget-versions.ts';

export const WIDGET_SCRIPT_PATH = `/${WIDGET_SCRIPT_FILE}`;
/**
 * The files the widget loads on demand, beside the script (vite.config.ts names them): its languages
 * the "Salvar QR Code" drawing and what follows the first QR. The script imports `./pix-checkout.en.js?v=…` relative to its own URL,
 * so they are served beside it.
 */
export const WIDGET_CHUNK_PATHS = WIDGET_CHUNKS.map((chunk) => `/${widgetChunkFile(chunk)}`);

/** A file's bytes as answered: its ETag and both codings, computed once. */
interface Encoded {
  body: Uint8Array;
  etag: string;
  /** The file compressed once (gzip -9, brotli 11): a phone downloads 18 KB, not 47. */
  gzip: Uint8Array;
  br: Uint8Array;
}

function encode(body: Uint8Array): Encoded {
  return {
    body,
    etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"`,
    gzip: gzipSync(body, { level: 9 }),
    br: brotliCompressSync(body, { params: { [constants.BROTLI_PARAM_QUALITY]: 11, [constants.BROTLI_PARAM_SIZE_HINT]: body.length } }),
  };
}

/** The first of `candidates` that exists, read again only when it changed (a rebuild during development); one stat per call. */
function fileLoader<T>(candidates: readonly string[], read: (body: Buffer) => T): () => (T & { path: string; mtimeMs: number }) | null {
  let loaded: (T & { path: string; mtimeMs: number }) | null = null;
  return () => {
    for (const path of candidates) {
      let mtimeMs: number;
      try {
        mtimeMs = statSync(path).mtimeMs;
      } catch {
        continue;
      }
      if (loaded?.path === path && loaded.mtimeMs === mtimeMs) return loaded;
      loaded = { ...read(readFileSync(path)), path, mtimeMs };
      return loaded;
    }
    return null;
  };
}

/** An unversioned URL: revalidated after five minutes, answered 304 while unchanged. */
const REVALIDATED = 'public, max-age=300';
/** A chunk's URL with its build's version: the same bytes for as long as anyone asks. */
const IMMUTABLE = 'public, max-age=31536000, immutable';

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

/** Answers a file: the coding the browser accepts, its ETag (one per coding), loadable from any page. */
function answer(c: Context, file: Encoded, cacheControl: string): Response {
  const encoding = chooseEncoding(c.req.header('accept-encoding'));
  const headers: Record<string, string> = {
    'content-type': 'text/javascript; charset=utf-8',
    'cache-control': cacheControl,
    // One ETag per coding: a cache keeps the gzip and the brotli answer apart.
    etag: encoding ? file.etag.replace(/"$/, `-${encoding}"`) : file.etag,
    vary: 'Accept-Encoding',
    'access-control-allow-origin': '*',
  };
  if (encoding) headers['content-encoding'] = encoding;
  // The proxy's strict headers say same-origin; these files are for every page to load.
  const bag = c.get('responseHeaders');
  if (bag) bag['cross-origin-resource-policy'] = 'cross-origin';
  if (c.req.header('if-none-match') === headers.etag) return c.body(null, 304, headers);
  return c.body((encoding ? file[encoding] : file.body) as Uint8Array<ArrayBuffer>, 200, headers);
}

const notBuilt = (c: Context) => c.json(errorBody('not_found', "The widget's script is not built: run `npm run build`."), 404);

export function widgetScript(candidates: readonly string[] = CANDIDATES): Handler {
  const load = fileLoader(candidates, encode);
  return (c) => {
    const script = load();
    return script ? answer(c, script, REVALIDATED) : notBuilt(c);
  };
}

/** Other versions' chunks answered lately, by version and name: a deploy's pages ask for the same few. */
const OLDER_REMEMBERED = 16;

/** The files beside the script, wherever it was found. */
const beside = (candidates: readonly string[], file: string) => candidates.map((path) => join(dirname(path), file));

/**
 * A chunk beside the script (`name`, e.g. `pix-checkout.later.js`). With `?v=` of this build's version
 * (`ownVersion`: its manifest's, undefined without one), or none (a page or a copy older than
 * versions): this build's file. Another version's: the store's copy (`kept`), or a 404 naming the version.
 */
function widgetChunk(name: string, candidates: readonly string[], ownVersion: () => string | undefined, kept?: Pick<WidgetVersions, 'file'>): Handler {
  const load = fileLoader(beside(candidates, name), encode);
  const older = new Map<string, Encoded>();
  return async (c) => {
    const version = c.req.query(WIDGET_VERSION_PARAM);
    if (version !== undefined && !WIDGET_VERSION.test(version))
      return c.json(
        errorBody('invalid_request', `${WIDGET_VERSION_PARAM} is not a build's version of the widget`, {
          [WIDGET_VERSION_PARAM]: "8 characters of A-Z, a-z, 0-9, '-' and '_', as the script writes it",
        }),
        400,
      );
    const own = ownVersion();
    if (version === undefined || own === undefined || version === own) {
      const file = load();
      if (!file) return notBuilt(c);
      return answer(c, file, version !== undefined && own !== undefined ? IMMUTABLE : REVALIDATED);
    }
    let file = older.get(version);
    if (!file) {
      const body = kept ? await kept.file(version, name) : null;
      if (!body)
        return c.json(
          errorBody(
            'not_found',
            `${name} of the widget's version ${version} is not kept here: no instance of that version started within ${WIDGET_FILES_KEPT_MS / 86_400_000} days (this one is ${own}); the page loads the script again on its next visit`,
          ),
          404,
        );
      file = encode(body);
      if (older.size >= OLDER_REMEMBERED) older.delete(older.keys().next().value!);
      older.set(version, file);
    }
    return answer(c, file, IMMUTABLE);
  };
}

/** The script's route and its chunks', under the API's base path; `kept`: other versions' chunks (the store's). */
export function widgetScriptRoutes({ candidates = CANDIDATES, kept }: { candidates?: readonly string[]; kept?: Pick<WidgetVersions, 'file'> } = {}): Hono {
  const routes = new Hono();
  routes.get(WIDGET_SCRIPT_PATH, widgetScript(candidates));
  allowOnly(routes, WIDGET_SCRIPT_PATH, 'GET');
  // One manifest for every chunk, read again when it changes (a rebuild during development).
  const manifest = fileLoader(beside(candidates, WIDGET_MANIFEST_FILE), (body) => ({ manifest: parseManifest(body.toString('utf8')) }));
  const ownVersion = () => manifest()?.manifest?.version;
  for (const path of WIDGET_CHUNK_PATHS) {
    routes.get(path, widgetChunk(path.slice(1), candidates, ownVersion, kept));
    allowOnly(routes, path, 'GET');
  }
  return routes;
}
