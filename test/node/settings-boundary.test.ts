/**
 * Settings are resolved once, in server/config (resolveSettings, proxyConfig): no module below it
 * reads DEFAULTS or TUNABLES, so a default lives in one place and a service is handed its values.
 */
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** Where a mention is allowed: the configuration room and the package's public re-export. */
const ALLOWED = [/^server\/config\//, /^server\/index\.ts$/];

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sources(path);
    return entry.name.endsWith('.ts') ? [relative(ROOT, path).split('\\').join('/')] : [];
  });
}

test('nothing below server/config reads DEFAULTS or TUNABLES (nor names them)', () => {
  const found: string[] = [];
  for (const file of sources(join(ROOT, 'server'))) {
    if (ALLOWED.some((allowed) => allowed.test(file))) continue;
    readFileSync(join(ROOT, file), 'utf8')
      .split('\n')
      .forEach((line, i) => {
        if (/\b(DEFAULTS|TUNABLES)\b/.test(line)) found.push(`${file}:${i + 1}: ${line.trim()}`);
      });
  }
  assert.deepEqual(found, [], 'resolve the value in server/config and hand it to the module');
});
