/** `pix-checkout numbering show | reset` against a real SQLite store (a mismatch an operator can end). */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { runCli } from '../../support/cli.ts';
import { partnerConfig } from '../../../server/config/index.ts';
import { StatusNumbering } from '../../../server/domain/numbering/status-numbering.ts';
import { createLogger } from '../../../server/log.ts';
import { parseStatusCodes } from '../../../server/partner/status-codes.ts';
import { tokenStoreKey } from '../../../server/partner/token-session.ts';
import { openSqliteStore } from '../../../server/store/sqlite/sqlite-store.ts';

let dir: string;
before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'pix-numbering-'));
});
after(async () => {
  await rm(dir, { recursive: true, force: true });
});

function cli(args: string[], env: Record<string, string>) {
  return runCli(args, env);
}

describe('cli: numbering', () => {
  test('show prints every code, its state and evidence; reset clears a mismatch with an audit line, and a running instance forgets it too', async () => {
    const setting = 'pending=1,approved=2,expired=3,canceled=4';
    const env = { PIX_DATA_DIR: join(dir, 'numbering'), PIX_STATUS_CODES: setting };
    const config = partnerConfig(env);
    const scope = tokenStoreKey(config.baseUrl, config.credentials?.email);
    const store = openSqliteStore({ dataDir: env.PIX_DATA_DIR, cacheSize: 0 });
    // A running proxy: pending verified by a create, 2 approved by a payment paid in time, 3 read before expiry (a mismatch), 9 unknown.
    const running = new StatusNumbering(parseStatusCodes(setting)!, createLogger({ level: 'silent' }), store.tokens, scope);
    const sent = Date.now();
    const at = (minutes: number) => ({ reference: `ref-${minutes}`, createdAt: sent, expiresAt: sent + 3_600_000, now: sent + minutes * 60_000 });
    await running.observeFresh({ code: 1, word: null }, 'fresh');
    await running.observe({ code: 2, word: null }, at(5));
    await running.observe({ code: 3, word: null }, at(10));
    await running.observe({ code: 9, word: null }, at(70));
    assert.equal(running.report().state, 'mismatch');

    const shown = await cli(['numbering', 'show'], env);
    assert.equal(shown.code, 0, shown.err);
    assert.match(shown.out, /^Payments \(PIX_STATUS_CODES\): pending=1,approved=2,canceled=4,expired=3 {2}\(mismatch\)$/m);
    assert.match(shown.out, /^ {5}2 {2}approved {4}verified$/m);
    assert.match(shown.out, /^ {5}3 {2}expired {5}mismatch$/m);
    assert.match(shown.out, /read .* on payment ref-10, before the partner can have expired it/);
    assert.match(shown.out, /^ {5}9 {2}not listed {2}unknown$/m);
    assert.match(shown.out, /^Transfers \(PIX_TRANSFER_STATUS_CODES\): pending=1,approved=2,canceled=3 {2}\(unverified\)$/m);
    const json = JSON.parse((await cli(['numbering', 'show', '--json'], env)).out) as { payments: { state: string; codes: { code: number; state: string }[] } };
    assert.equal(json.payments.state, 'mismatch');
    assert.deepEqual(
      json.payments.codes.map((c) => [c.code, c.state]),
      [
        [1, 'verified'],
        [2, 'verified'],
        [3, 'mismatch'],
        [4, 'unverified'],
        [9, 'unknown'],
      ],
    );

    const reset = await cli(['numbering', 'reset'], env);
    assert.equal(reset.code, 0, reset.err);
    assert.match(
      reset.out,
      /^pix-checkout numbering reset at \S+ by \S+: payments pending=1,approved=2,canceled=4,expired=3 \(mismatch\), .*forgot 1 verified, 2 verified, 3 mismatch/,
    );
    const after = await cli(['numbering', 'show'], env);
    assert.match(after.out, /\(unverified\)$/m);
    assert.doesNotMatch(after.out.split('Resets:')[0]!, /mismatch| verified$/m);
    assert.match(after.out, /^Resets:\n {2}\S+ {2}by \S+: payments /m);
    // The running instance reads the reset at its next load.
    await running.reload();
    assert.equal(running.report().state, 'unverified');
    await store.close();

    assert.equal((await cli(['numbering', 'frob'], env)).code, 2);
    assert.match((await cli(['numbering', '--help'], env)).out, /^Usage: pix-checkout numbering/);
  });
});
