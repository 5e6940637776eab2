/**
 * The widget's chunks of each version the proxy ran (store/widget-files): a page asks for its own
 * build's chunks (src/shared/widget-files.ts), also when its script was cached before an upgrade or an
 * instance of another version answers it during a rolling deploy. Each instance keeps its version's
 * chunks as it starts; a version no instance started for WIDGET_FILES_KEPT_MS is forgotten then.
 * Here too: the build as this proxy has it (where its files are, its manifest), which
 * routes/widget-script.ts serves.
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  WIDGET_CHUNKS,
  WIDGET_MANIFEST_FILE,
  WIDGET_SCRIPT_FILE,
  WIDGET_VERSION,
  widgetChunkFile,
  type WidgetFile,
  type WidgetManifest,
} from '../../src/shared/widget-files.ts';
import type { WidgetFileStore } from '../store/store.ts';

/** How long a version no instance started stays kept: a page open across an upgrade asks for its chunks long before. */
export const WIDGET_FILES_KEPT_MS = 30 * 24 * 60 * 60 * 1000;

export class WidgetVersions {
  readonly #store: WidgetFileStore;
  readonly #now: () => number;

  constructor({ store, now }: { store: WidgetFileStore; now: () => number }) {
    this.#store = store;
    this.#now = now;
  }

  /** Keeps this version's chunks, and forgets the versions no instance kept within WIDGET_FILES_KEPT_MS. */
  async keep(version: string, files: readonly WidgetFile[]): Promise<void> {
    const at = this.#now();
    await this.#store.keep(version, files, at, at - WIDGET_FILES_KEPT_MS);
  }

  /** A kept version's chunk, or null: never another version's. */
  file(version: string, name: string): Promise<Uint8Array | null> {
    return this.#store.get(version, name);
  }
}

/** dist/ beside lib/ when compiled (the installed package), beside server/ in this repository. */
const DIST = fileURLToPath(new URL(/\/lib\/server\/domain\/[^/]+$/.test(import.meta.url) ? '../../../dist/' : '../../dist/', import.meta.url));
export const WIDGET_SCRIPT_CANDIDATES = [`${DIST}${WIDGET_SCRIPT_FILE}`];

/** A build's manifest (src/shared/widget-files.ts), or null when it is not one: read tolerantly, trusted only whole. */
export function parseManifest(text: string): WidgetManifest | null {
  try {
    const value = JSON.parse(text) as Partial<WidgetManifest>;
    const chunks = Array.isArray(value.chunks) ? value.chunks : [];
    const known = new Set(WIDGET_CHUNKS.map(widgetChunkFile));
    if (typeof value.version !== 'string' || !WIDGET_VERSION.test(value.version) || !chunks.every((name) => known.has(name))) return null;
    return { version: value.version, chunks };
  } catch {
    return null;
  }
}

/**
 * This build's version and chunks, as the proxy serves them (beside `script`), for WidgetVersions to
 * keep; null when the build has no manifest (nothing to keep: every chunk is answered as this build's).
 */
export function readWidgetBuild(script: string = WIDGET_SCRIPT_CANDIDATES[0]!): { version: string; files: WidgetFile[] } | null {
  const dir = dirname(script);
  let manifest: WidgetManifest | null;
  try {
    manifest = parseManifest(readFileSync(join(dir, WIDGET_MANIFEST_FILE), 'utf8'));
  } catch {
    return null;
  }
  if (!manifest) return null;
  return { version: manifest.version, files: manifest.chunks.map((name) => ({ name, body: readFileSync(join(dir, name)) })) };
}
