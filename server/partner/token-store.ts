/**
 * Where the partner's access token is kept between runs: it lives five years, so a restart should
 * not log in again. The proxy keeps it in its store; the command line in a 0600 file.
 */
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';

export interface TokenStore {
  load(key: string): Promise<string | null>;
  save(key: string, token: string): Promise<void>;
  clear(key: string): Promise<void>;
}

export function memoryTokenStore(): TokenStore {
  const tokens = new Map<string, string>();
  return {
    load: async (key) => tokens.get(key) ?? null,
    save: async (key, token) => void tokens.set(key, token),
    clear: async (key) => void tokens.delete(key),
  };
}

/** A JSON file readable by its owner only, replaced atomically on every change. */
export function fileTokenStore(path: string): TokenStore {
  async function read(): Promise<Record<string, { token: string; saved_at: string }>> {
    try {
      return JSON.parse(await readFile(path, 'utf8')) as Record<string, { token: string; saved_at: string }>;
    } catch {
      return {};
    }
  }
  async function write(data: Record<string, { token: string; saved_at: string }>): Promise<void> {
    await mkdir(dirname(path), { recursive: true });
    const tmp = `${path}.${process.pid}.tmp`;
    await writeFile(tmp, JSON.stringify(data, null, 2), { mode: 0o600 });
    await rename(tmp, path);
  }
  return {
    async load(key) {
      return (await read())[key]?.token ?? null;
    },
    async save(key, token) {
      const data = await read();
      // When a token was saved is a note for the operator, on the wall clock: it decides nothing.
      // eslint-disable-next-line no-restricted-syntax
      data[key] = { token, saved_at: new Date().toISOString() };
      await write(data);
    },
    async clear(key) {
      const data = await read();
      if (!(key in data)) return;
      delete data[key];
      await write(data);
    },
  };
}
