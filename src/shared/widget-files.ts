/**
 * The widget's files as the build writes them and the proxy serves them (server/routes/widget-script.ts):
 * the script, and beside it the files it loads on demand, each under a fixed name. The script asks for
 * a chunk with the build's version (`pix-checkout.later.js?v=<version>`): the names the script and its
 * chunks share are shortened alike only within one build (vite.config.ts), so a script must get its own
 * build's chunk, also when it was cached before a deploy or when instances of two versions serve one
 * page. The proxy keeps each version's chunks where every instance can serve them (the store).
 */
export const WIDGET_SCRIPT_FILE = 'pix-checkout.js';

/**
 * The chunks, by the name the bundler gives them (their module's): the languages (src/locales), the
 * "Salvar QR Code" drawing (src/save.ts), and what follows the first QR (src/later.ts,
 * src/controllers/status.ts). The build fails on a chunk not listed here.
 */
export const WIDGET_CHUNKS = ['en', 'es', 'save', 'later', 'status'] as const;

/** A chunk's file name, beside the script. */
export const widgetChunkFile = (chunk: string): string => `pix-checkout.${chunk}.js`;

/** The query parameter that carries the build's version in a chunk's URL. */
export const WIDGET_VERSION_PARAM = 'v';

/** A build's version: 8 characters of base64url, a hash of every file the build wrote. */
export const WIDGET_VERSION = /^[A-Za-z0-9_-]{8}$/;

/** The build's manifest beside the files (`{version, chunks}`, WidgetManifest): what the proxy reads. */
export const WIDGET_MANIFEST_FILE = 'pix-checkout.files.json';

/** One of a build's chunks: its file name beside the script (`pix-checkout.later.js`) and its bytes. */
export interface WidgetFile {
  name: string;
  body: Uint8Array;
}

export interface WidgetManifest {
  version: string;
  /** The chunks' file names (widgetChunkFile), in WIDGET_CHUNKS's order. */
  chunks: string[];
}
