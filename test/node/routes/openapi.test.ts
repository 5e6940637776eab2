/**
 * The OpenAPI 3.1 document (server/routes/openapi.ts): served at /api/openapi.json, linted clean by
 * Redocly's recommended rules (a real linter, offline), and held to the app's routes both ways: a
 * route added to the app without it, or a path in it that no route serves, fails here. docs/openapi.json
 * (written by the build) is the same document.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { createConfig, lintFromString } from '@redocly/openapi-core';
import { createApp, type PixApp } from '../../../server/app.ts';
import { createLogger } from '../../../server/log.ts';
import { openApiDocument, openApiPath } from '../../../server/routes/openapi.ts';
import { openSqliteStore } from '../../../server/store/sqlite/sqlite-store.ts';
import type { Store } from '../../../server/store/store.ts';
import { memoryPartner } from '../../support/memory-partner.ts';

type Doc = { openapi: string; paths: Record<string, Record<string, { responses: Record<string, unknown>; parameters: { $ref?: string }[] }>> };

describe('the OpenAPI document', () => {
  let dir: string;
  let store: Store;
  let app: PixApp;

  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'pix-openapi-'));
    store = openSqliteStore({ dataDir: dir });
    // Every optional room on: the metrics route is mounted only with a token.
    app = createApp({ partner: memoryPartner(), store, apiKey: 'k'.repeat(32), metricsToken: 't'.repeat(32), logger: createLogger({ level: 'silent' }) });
  });
  after(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test('GET /api/openapi.json is OpenAPI 3.1, the same as docs/openapi.json', async () => {
    const res = await app.request('/api/openapi.json');
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
    const doc = (await res.json()) as Doc;
    assert.equal(doc.openapi, '3.1.0');
    assert.deepEqual(doc, openApiDocument('/api'));
    const written = JSON.parse(readFileSync(new URL('../../../docs/openapi.json', import.meta.url), 'utf8')) as Doc;
    assert.deepEqual(written, doc, 'docs/openapi.json is stale: run npm run build (or node --import tsx scripts/openapi.ts)');
  });

  test("lints clean with Redocly's recommended rules: no error, no warning", async () => {
    const config = await createConfig({ extends: ['recommended'] });
    const problems = await lintFromString({ source: JSON.stringify(openApiDocument('/api')), absoluteRef: 'openapi.json', config });
    assert.deepEqual(
      problems.map((p) => `${p.severity} ${p.ruleId}: ${p.message} at ${p.location[0]?.pointer ?? ''}`),
      [],
    );
  });

  test('every route of the app is in it, and every operation in it is a route of the app', () => {
    const served = new Set(
      app.routes
        // `use` and allowOnly's 405s register ALL; the real handlers name their method.
        .filter((r) => r.method !== 'ALL' && !r.path.endsWith('*'))
        .map((r) => `${r.method} ${openApiPath(r.path)}`),
    );
    const doc = openApiDocument('/api') as Doc;
    const documented = new Set(Object.entries(doc.paths).flatMap(([path, ops]) => Object.keys(ops).map((method) => `${method.toUpperCase()} ${path}`)));
    assert.deepEqual(
      [...served].filter((r) => !documented.has(r)),
      [],
      'routes missing from the document',
    );
    assert.deepEqual(
      [...documented].filter((r) => !served.has(r)),
      [],
      'operations no route serves',
    );
    assert.ok(served.size >= 20, `${served.size} routes`);
  });

  test('every operation says its error answers (with their codes), X-Request-Id, and the API key where one is needed', () => {
    const doc = openApiDocument('/api') as Doc & { paths: Record<string, Record<string, { security: unknown[] }>> };
    for (const [path, ops] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(ops)) {
        assert.ok(op.responses['500'] && op.responses['405'], `${method} ${path}: 405 and 500`);
        assert.ok(
          op.parameters.some((p) => p.$ref === '#/components/parameters/RequestId'),
          `${method} ${path}: X-Request-Id`,
        );
      }
    }
    const create = doc.paths['/api/checkouts']!.post!;
    assert.deepEqual(create.security, [{ apiKey: [] }]);
    assert.ok(create.responses['401'] && create.responses['409']);
    const transfer = doc.paths['/api/transfers']!.post!;
    assert.ok(transfer.parameters.some((p) => p.$ref === '#/components/parameters/IdempotencyKey'));
  });
});
