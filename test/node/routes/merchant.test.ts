/**
 * The merchant's extra routes on the app itself (Request in, Response out): the outcome events'
 * stream (API key, resume with Last-Event-ID, ended by a shutdown) and the export's refusals and
 * headers. Real SQLite store file; listen and report end to end are test/node/cli/listen-report.test.ts.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { createApp, type PixApp } from '../../../server/app.ts';
import { paymentOutcome } from '../../../server/domain/outcomes.ts';
import { createLogger } from '../../../server/log.ts';
import { openSqliteStore } from '../../../server/store/sqlite/sqlite-store.ts';
import type { Store } from '../../../server/store/store.ts';
import { memoryPartner } from '../../support/memory-partner.ts';
import { paymentRecord } from '../../support/records.ts';

const KEY = 'merchant-routes-key-0123456789abcdef';
const auth = { authorization: `Bearer ${KEY}` };

describe('GET /api/events and GET /api/reports', () => {
  let dir: string;
  let store: Store;
  let app: PixApp;
  const shutdown = new AbortController();

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'pix-merchant-routes-'));
    store = openSqliteStore({ dataDir: dir });
    app = createApp({ partner: memoryPartner(), store, apiKey: KEY, signal: shutdown.signal, logger: createLogger({ level: 'silent' }) });
    for (const reference of ['ev-1', 'ev-2']) {
      await store.payments.insert(paymentRecord(reference, 1_000));
      await store.payments.updateStatus(reference, 2, true, 2_000, paymentOutcome);
    }
  });
  after(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test('the stream needs the API key, and refuses a sequence that is not one', async () => {
    assert.equal((await app.request('/api/events')).status, 401);
    const bad = await app.request('/api/events?after=abc', { headers: auth });
    assert.equal(bad.status, 400);
    assert.equal(((await bad.json()) as { error: { code: string } }).error.code, 'invalid_request');
    assert.equal((await app.request('/api/events', { headers: { ...auth, 'last-event-id': 'x' } })).status, 400);
  });

  test('Last-Event-ID resumes after it: the events recorded since, body as the webhook sends it; a shutdown ends the stream', { timeout: 20_000 }, async () => {
    const [first, second] = await store.outbox.list();
    const res = await app.request('/api/events', { headers: { ...auth, 'last-event-id': String(first!.id) } });
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^text\/event-stream/);
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    let text = '';
    while (!text.includes(`id: ${second!.id}`)) text += decoder.decode((await reader.read()).value, { stream: true });
    assert.ok(text.includes(`event: outcome\ndata: ${second!.body}\nid: ${second!.id}\n`), text);
    assert.ok(!text.includes(first!.eventId), 'nothing before Last-Event-ID');
    // A shutdown ends it (the client reconnects elsewhere), rather than holding the drain.
    shutdown.abort();
    for (;;) if ((await reader.read()).done) break;
  });

  test('the export: refusals name the field; an answer is an attachment of its format', async () => {
    assert.equal((await app.request('/api/reports?from=2030-01-01&to=2030-01-02')).status, 401);
    for (const [query, field] of [
      ['from=2030-01-01', 'to'],
      ['from=2030-13-01&to=2030-12-31', 'from'],
      ['from=2030-01-02&to=2030-01-01', 'to'],
      ['from=2030-01-01&to=2030-01-02&format=pdf', 'format'],
      ['from=2030-01-01&to=2030-01-02&time_zone=Nowhere/Atlantis', 'time_zone'],
      ['from=2030-01-01&to=2030-01-02&extra=1', 'extra'],
    ] as const) {
      const res = await app.request(`/api/reports?${query}`, { headers: auth });
      assert.equal(res.status, 400, query);
      const body = (await res.json()) as { error: { code: string; fields?: Record<string, string> } };
      assert.equal(body.error.code, 'invalid_request');
      assert.ok(body.error.fields && field in body.error.fields, `${query}: ${JSON.stringify(body.error)}`);
    }
    const csv = await app.request('/api/reports?from=1970-01-01&to=1970-01-01&time_zone=UTC', { headers: auth });
    assert.equal(csv.status, 200);
    assert.equal(csv.headers.get('content-type'), 'text/csv; charset=utf-8');
    assert.equal(csv.headers.get('content-disposition'), 'attachment; filename="pix-checkout-1970-01-01-1970-01-01.csv"');
    const lines = (await csv.text()).trimEnd().split('\r\n');
    assert.deepEqual(
      lines.slice(1).map((l) => l.split(',').slice(0, 2).join(',')),
      ['payment,ev-1', 'payment,ev-2', 'total,payment'],
    );
    assert.equal(lines.at(-1), 'total,payment,,,,paid,19.80,,,2');
  });
});
