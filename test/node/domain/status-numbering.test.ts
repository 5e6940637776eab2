/**
 * The open status model: PIX_STATUS_CODES names every code by meaning, and a code decides
 * only once an observation no other plausible code explains proved it. A fake clock: times are
 * minutes from a payment's send time.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { StatusNumbering, proofWindows, type Observation } from '../../../server/domain/numbering/status-numbering.ts';
import { createLogger } from '../../../server/log.ts';
import { readNotification } from '../../../server/partner/notification.ts';
import { DEFAULT_STATUS_CODES, formatStatusCodes, parseStatusCodes, statusCodes, statusMeaning, wordMeaning } from '../../../server/partner/status-codes.ts';
import { memoryTokenStore } from '../../../server/partner/token-store.ts';

const silent = createLogger({ level: 'silent' });
const code = (n: number) => ({ code: n, word: null });
const MINUTE = 60_000;
const SENT = Date.UTC(2030, 0, 1, 12, 0, 0);

/** A payment sent at SENT asking `expiresMin` minutes, read `minutes` after SENT (the request sent `askedEarlier` min before). */
function at(reference: string, minutes: number, expiresMin = 60, extra: Partial<Observation> = {}): Observation {
  return { reference, createdAt: SENT, expiresAt: SENT + expiresMin * MINUTE, now: SENT + minutes * MINUTE, ...extra };
}

function logged(level: 'info' | 'warn' | 'error' = 'error') {
  const lines: string[] = [];
  return { lines, log: createLogger({ level, destination: { write: (line: string) => void lines.push(line) } }) };
}

/** A guard whose pending code a new payment's create answer verified. */
async function guardWith(setting: string, memory = memoryTokenStore(), log = silent, freshCode?: number): Promise<StatusNumbering> {
  const codes = parseStatusCodes(setting);
  assert.ok(codes, setting);
  const guard = new StatusNumbering(codes, log, memory);
  await guard.observeFresh(code(freshCode ?? codes.pending[0]!), 'fresh');
  return guard;
}

describe('PIX_STATUS_CODES: every code by meaning', () => {
  test('named, several codes per meaning, optional meanings; the older three-slot forms read as before', () => {
    const open = parseStatusCodes('pending=1, approved=2, expired=3, canceled=4|5, returned=6, failed=7')!;
    assert.deepEqual(
      [open.pending, open.approved, open.canceled, open.expired, open.returned, open.failed, open.expiredPayable],
      [[1], [2], [4, 5], [3], [6], [7], true],
    );
    assert.equal(formatStatusCodes(open), 'pending=1,approved=2,canceled=4|5,expired=3,returned=6,failed=7');
    assert.deepEqual(parseStatusCodes(formatStatusCodes(open)), open, 'formatted, it reads back the same');
    assert.equal(parseStatusCodes('pending=1,approved=2,canceled=4,expired_unpayable=3')!.expiredPayable, false);
    // The older forms, and their aliases.
    assert.deepEqual(parseStatusCodes('pending=0,approved=1,canceled=2'), statusCodes({ pending: 0, approved: 1, canceled: 2 }));
    assert.deepEqual(parseStatusCodes('0, 1, 2'), statusCodes({ pending: 0, approved: 1, canceled: 2 }));
    assert.deepEqual(parseStatusCodes('canceled=9,pending=7,paid=8'), statusCodes({ pending: 7, approved: 8, canceled: 9 }));
    assert.deepEqual(parseStatusCodes('canceled=4,canceled=5,pending=1,approved=2')!.canceled, [4, 5], 'a meaning named twice adds its codes');
    assert.equal(
      formatStatusCodes(DEFAULT_STATUS_CODES),
      'pending=1,approved=2,canceled=3',
      'a three-code setting is written as before (its kept verdicts still apply)',
    );
    for (const bad of [
      '1,2',
      '1,1,2',
      'pending=1,approved=2',
      'a,b,c',
      'pending=1,approved=2,canceled=2',
      'pending=1,approved=2,canceled=3,expired=3',
      'pending=1,approved=2,canceled=3,bogus=4',
      'pending=1,approved=2,canceled=3,expired=4,expired_unpayable=5',
      '1,2,canceled=3',
      'pending=1,approved=x,canceled=3',
    ])
      assert.equal(parseStatusCodes(bad), null, bad);
  });

  test('words mean what they say; failure words mean failed (never final), expired means expired; unknown codes mean nothing', () => {
    assert.equal(statusMeaning(DEFAULT_STATUS_CODES, { code: null, word: 'cancelled' }), 'canceled');
    for (const word of ['failed', 'Rejected', 'refused', 'recusado', 'rejeitada']) assert.equal(wordMeaning(word), 'failed', word);
    assert.equal(wordMeaning('expired'), 'expired');
    assert.equal(wordMeaning('estornado'), 'returned');
    assert.equal(statusMeaning(DEFAULT_STATUS_CODES, { code: 7, word: null }), null);
    // A notification's failure word is no outcome: it never cancels a payment.
    for (const event of ['payment.failed', 'payment.rejected', 'payment.refused'])
      assert.equal(readNotification({ event, data: { external_reference: 'r1', status: 3 } })?.outcome ?? null, null, event);
    assert.equal(readNotification({ event: 'payment.approved', data: { external_reference: 'r1' } })?.outcome, 'approved');
  });
});

describe('verification that no unlisted code can fool', () => {
  test('the windows: approved strictly before the shorter of the expiration asked and the default, less a margin; canceled well past the longer one plus the hour', () => {
    const twoDays = proofWindows({ createdAt: SENT, expiresAt: SENT + 2 * 24 * 60 * MINUTE });
    assert.equal(twoDays.approvedBefore, SENT + 55 * MINUTE, 'a partner may ignore the two days asked and expire at its default hour');
    assert.equal(twoDays.canceledFrom, SENT + (2 * 24 * 60 + 60 + 15) * MINUTE);
    const tenMinutes = proofWindows({ createdAt: SENT, expiresAt: SENT + 10 * MINUTE });
    assert.equal(tenMinutes.approvedBefore, SENT + 8 * MINUTE, 'a fifth of a short expiration as the margin');
    assert.equal(tenMinutes.canceledFrom, SENT + (60 + 60 + 15) * MINUTE, 'a partner may ignore the ten minutes and keep its default hour');
  });

  test('an expired code never decides money: with the default setting and a partner numbering 1 pending, 2 expired, 3 approved, 4 canceled', async () => {
    // The defect: "the first final code read before expires_at + 1 h - 5 min is approved" verified the expired 2 as approved.
    const guard = await guardWith('pending=1,approved=2,canceled=3');
    await guard.observe(code(2), at('unpaid', 61));
    await guard.observe(code(2), at('unpaid', 100));
    assert.equal(guard.meaning(code(2)), null, 'an expired code read past expiry proves nothing');
    assert.equal(guard.report().codes.approved, 'unverified');
    // A payment paid in time reads 3, which the default calls canceled: impossible before expiry, so 3 is a mismatch; 2 still proves nothing.
    await guard.observe(code(3), at('paid', 20));
    assert.equal(guard.meaning(code(3)), null);
    assert.equal(guard.report().state, 'mismatch');
    assert.equal(guard.report().code_states.find((c) => c.code === 3)?.state, 'mismatch');
    assert.equal(guard.meaning(code(2)), null);
  });

  test('the fourth code does not stop the proxy: with the right setting, expired is seen, and a payment paid on time is approved', async () => {
    const guard = await guardWith('pending=1,expired=2,approved=3,canceled=4');
    await guard.observe(code(2), at('expired', 65));
    assert.notEqual(guard.report().state, 'mismatch');
    await guard.observe(code(3), at('paid', 30));
    assert.equal(guard.meaning(code(3)), 'approved');
    // Well past the cancellation hour: 4 verifies canceled, and the payment that read 2 past its expiry, then 4, verifies expired.
    await guard.observe(code(4), at('expired', 60 + 60 + 16, 60, { askedAt: SENT + (60 + 60 + 15) * MINUTE }));
    assert.equal(guard.meaning(code(4)), 'canceled');
    assert.equal(guard.meaning(code(2)), 'expired');
    assert.equal(guard.report().state, 'verified');
  });

  test('an unlisted code first seen after expiry is unknown, not paid: it decides nothing and is no mismatch, and /ready names it', async () => {
    const guard = await guardWith('pending=1,approved=2,canceled=3');
    await guard.observe(code(2), at('paid', 10));
    await guard.observe(code(9), at('other', 70));
    await guard.observe(code(9), at('other', 200));
    assert.equal(guard.meaning(code(9)), null);
    assert.notEqual(guard.report().state, 'mismatch');
    assert.equal(guard.report().code_states.find((c) => c.code === 9)?.state, 'unknown');
    assert.match(guard.report().problems.join('\n'), /status code 9 is not listed and decides nothing/);
    // Before expiry too (a failed attempt, or a second approved code): unknown, not a mismatch.
    await guard.observe(code(8), at('attempt', 10));
    assert.equal(guard.meaning(code(8)), null);
    assert.notEqual(guard.report().state, 'mismatch');
  });

  test('an expired code is never verified canceled from a read just after the hour: the hour counts from our send time, with a margin, from when the read was sent', async () => {
    // Default setting; the partner numbers 3 expired, 4 canceled and is slow to cancel (or its clock is behind).
    const guard = await guardWith('pending=1,approved=2,canceled=3');
    await guard.observe(code(2), at('paid', 10));
    await guard.observe(code(3), at('outage', 60 + 60 + 1));
    assert.equal(guard.meaning(code(3)), null, 'just after the hour: nothing');
    // A read sent before the margin ended and answered after it: the partner's state may be older.
    await guard.observe(code(3), at('outage', 60 + 60 + 20, 60, { askedAt: SENT + (60 + 60 + 14) * MINUTE }));
    assert.equal(guard.meaning(code(3)), null, 'the read was sent inside the margin');
    await guard.observe(code(3), at('outage', 60 + 60 + 15));
    assert.equal(guard.meaning(code(3)), 'canceled', 'well past the hour (the partner says unpaid codes are canceled by then)');
  });

  test('a partner that ignores the requested expiration, with swapped codes: its canceled code read before our expiry is never approved', async () => {
    // We ask two days; the partner expires at its default hour and cancels an hour later with 2, which the default setting calls approved.
    const guard = await guardWith('pending=1,approved=2,canceled=3');
    const twoDays = 2 * 24 * 60;
    await guard.observe(code(2), at('unpaid', 2 * 60 + 1, twoDays));
    assert.equal(guard.meaning(code(2)), null);
    assert.equal(guard.report().codes.approved, 'unverified');
    // Paid within the partner's default hour, 3 (which the setting calls canceled) is a mismatch of 3 only.
    await guard.observe(code(3), at('paid', 20, twoDays));
    assert.equal(guard.meaning(code(3)), null);
    assert.equal(guard.report().code_states.find((c) => c.code === 3)?.state, 'mismatch');
  });

  test('a mismatch stops only the codes involved: the verified approved code keeps deciding', async () => {
    const { lines, log } = logged('error');
    const guard = await guardWith('pending=1,approved=2,canceled=3,expired=4', memoryTokenStore(), log);
    await guard.observe(code(2), at('paid', 10));
    await guard.observe(code(4), at('odd', 20));
    assert.equal(guard.report().state, 'mismatch');
    assert.equal(guard.meaning(code(2)), 'approved', 'another code keeps deciding');
    assert.equal(guard.meaning(code(4)), null);
    assert.match(lines.join(''), /payment status code 4 does not match PIX_STATUS_CODES/);
    assert.match(guard.report().problems.join('\n'), /status code 4 \(listed expired\) is a mismatch/);
  });

  test('a new payment with a code listed otherwise, or not listed, is a mismatch of that code; the configured approved code on a new payment never decides', async () => {
    const guard = new StatusNumbering(DEFAULT_STATUS_CODES, silent, memoryTokenStore());
    await guard.observeFresh(code(2), 'r1');
    assert.equal(guard.report().code_states.find((c) => c.code === 2)?.state, 'mismatch');
    assert.equal(guard.meaning(code(2)), null);
    // Not listed at all: the setting misses the partner's pending code (a mismatch of 0; the configured pending 1 never verifies).
    await guard.observeFresh(code(0), 'r2');
    assert.equal(guard.report().code_states.find((c) => c.code === 0)?.state, 'mismatch');
    assert.equal(guard.decides('pending'), false, 'the configured pending code is not verified by it');
  });

  test('a race of our own is never a mismatch: a background read of a new payment that answers after the customer paid', async () => {
    const guard = await guardWith('pending=1,approved=2,canceled=3');
    // The create answered without a status; the read after it saw the payment already paid.
    await guard.observeFresh(code(2), 'raced', 'payment', { createdAt: SENT, expiresAt: SENT + 60 * MINUTE, now: SENT + 2000, askedAt: SENT + 1000 });
    assert.notEqual(guard.report().state, 'mismatch');
    assert.equal(guard.meaning(code(2)), 'approved', 'judged as any read: a change before expiry');
  });

  test('returned: a code listed returned, read on a payment recorded paid, verifies; canceled read there is a mismatch', async () => {
    const guard = await guardWith('pending=1,approved=2,canceled=3,returned=6');
    await guard.observe(code(2), at('paid', 10));
    assert.equal(guard.meaning(code(6)), null);
    await guard.observe(code(6), at('paid', 3 * 24 * 60, 60, { paid: true }));
    assert.equal(guard.meaning(code(6)), 'returned');
    await guard.observe(code(3), at('paid2', 300, 60, { paid: true }));
    assert.equal(guard.report().code_states.find((c) => c.code === 3)?.state, 'mismatch');
  });

  test("transfers have their own numbering: the payments' verified codes never settle one; its own create and authenticated words verify it", async () => {
    const transferCodes = parseStatusCodes('pending=1,canceled=2,approved=3')!;
    const guard = new StatusNumbering(DEFAULT_STATUS_CODES, silent, memoryTokenStore(), '', { transferCodes });
    await guard.observeFresh(code(1), 'p1');
    await guard.observe(code(2), at('paid', 10));
    assert.equal(guard.meaning(code(2)), 'approved');
    assert.equal(guard.meaning(code(2), 'transfer'), null, "the payments' approved 2 settles no transfer");
    assert.equal(guard.meaning(code(3), 'transfer'), null);
    // Before its own pending code is known, words decide nothing.
    assert.equal(guard.confirmExplicit('approved', code(3), 't1', 'transfer'), false);
    await guard.observeFresh(code(1), 't1', 'transfer');
    assert.equal(guard.confirmExplicit('approved', code(3), 't1', 'transfer'), true, 'words agreeing with the transfer setting verify it');
    assert.equal(guard.meaning(code(3), 'transfer'), 'approved');
    // Words contradicting the transfer setting: neither applied, that code a mismatch.
    assert.equal(guard.confirmExplicit('canceled', code(3), 't2', 'transfer'), false);
    assert.equal(guard.report().transfers.state, 'mismatch');
    assert.equal(guard.meaning(code(2)), 'approved', "the payments' book is untouched");
  });

  test('words: a read that has not caught up (pending, expired, failed) waits; agreeing words verify; words where no code can decide apply', async () => {
    const guard = await guardWith('pending=1,approved=2,canceled=3,expired=4,failed=5');
    assert.equal(guard.confirmExplicit('approved', code(1), 'r', 'payment'), false, 'still pending: wait');
    assert.equal(guard.confirmExplicit('approved', code(4), 'r', 'payment'), false, 'expired: wait');
    assert.equal(guard.confirmExplicit('approved', code(5), 'r', 'payment'), false, 'a failed attempt: wait');
    assert.notEqual(guard.report().state, 'mismatch');
    assert.equal(guard.confirmExplicit('approved', code(2), 'r', 'payment'), true);
    assert.equal(guard.meaning(code(2)), 'approved');
    assert.equal(guard.confirmExplicit('approved', code(9), 'r9', 'payment'), true, 'an unlisted code: the words decide');
    assert.equal(guard.confirmExplicit('canceled', code(8), 'r8', 'payment'), true, 'canceled for a code known to be no approved one');
    assert.equal(guard.confirmExplicit('canceled', code(9), 'r9b', 'payment'), false, 'a code words settled approved is never canceled by words');
    assert.equal(guard.confirmExplicit('canceled', code(2), 'r2', 'payment'), false, 'canceled words on the verified approved code: neither');
    assert.equal(guard.meaning(code(2)), null, 'which is now a mismatch (this run)');
  });
});

describe('kept verdicts, and ending a mismatch', () => {
  test('a restart keeps each code; a changed setting starts unverified; reset forgets, in every instance sharing the store', async () => {
    const memory = memoryTokenStore();
    const guard = await guardWith('pending=1,approved=2,canceled=3,expired=4', memory);
    await guard.observe(code(2), at('paid', 10));
    await guard.observe(code(4), at('odd', 20));
    const next = new StatusNumbering(parseStatusCodes('pending=1,approved=2,canceled=3,expired=4')!, silent, memory);
    await next.load();
    assert.equal(next.meaning(code(2)), 'approved');
    assert.equal(next.report().code_states.find((c) => c.code === 4)?.state, 'mismatch');
    assert.match(
      next
        .report()
        .code_states.find((c) => c.code === 4)!
        .evidence.join('\n'),
      /payment odd/,
    );
    const other = new StatusNumbering(parseStatusCodes('pending=1,approved=2,canceled=3,expired=5')!, silent, memory);
    await other.load();
    assert.equal(other.report().state, 'unverified');
    await next.reset();
    assert.equal(next.report().state, 'unverified');
    assert.equal(next.meaning(code(2)), null);
    await guard.reload();
    assert.equal(guard.report().state, 'unverified', 'the instance that found it forgets it at its next read');
  });

  test("an earlier release's kept mismatch stops every code until reset, and says so", async () => {
    const memory = memoryTokenStore();
    await memory.save('status-codes-mismatch|', JSON.stringify({ configured: 'pending=1,approved=2,canceled=3', problem: 'a new payment has status 4' }));
    await memory.save('status-codes-verified|', JSON.stringify({ configured: 'pending=1,approved=2,canceled=3', verified: ['pending', 'approved'] }));
    const guard = new StatusNumbering(DEFAULT_STATUS_CODES, silent, memory);
    await guard.load();
    assert.equal(guard.report().state, 'mismatch');
    assert.equal(guard.meaning(code(2)), null);
    assert.match(guard.report().problems.join('\n'), /earlier release.*numbering reset/);
    await guard.reset();
    assert.equal(await memory.load('status-codes-mismatch|'), null);
    const after = new StatusNumbering(DEFAULT_STATUS_CODES, silent, memory);
    await after.load();
    assert.equal(after.report().state, 'unverified');
  });
});
