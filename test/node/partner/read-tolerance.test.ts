/**
 * Reading what a real partner service may send (partner/read.ts, partner/notification.ts), the status
 * numbering guard (domain/status-numbering.ts), and references the proxy's old pattern refused.
 * The dialect suites (stack/partner-dialects.test.ts) run the same code against the sandbox over HTTPS.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { fillPath, API_PATHS } from '../../../src/shared/wire.ts';
import { Reference } from '../../../src/shared/contract.ts';
import { startDevStack, type DevStack } from '../../../server/dev-stack.ts';
import { StatusNumbering } from '../../../server/domain/status-numbering.ts';
import { PaymentService } from '../../../server/domain/payments.ts';
import { DEFAULTS } from '../../../server/config.ts';
import { Outcomes } from '../../../server/domain/outcomes.ts';
import { openSqliteStore } from '../../../server/store/sqlite/sqlite-store.ts';
import type { PartnerClient } from '../../../server/partner/client.ts';
import { createLogger } from '../../../server/log.ts';
import { notificationBody, readNotification } from '../../../server/partner/notification.ts';
import { parsePartnerTime, readError, readLogin, readPayment, readTenant, readTransfer, redactBody, shape } from '../../../server/partner/read.ts';
import { DEFAULT_STATUS_CODES, parseStatusCodes, statusMeaning } from '../../../server/partner/status-codes.ts';
import { memoryTokenStore } from '../../../server/partner/token-store.ts';
import { PARTNER_PATHS, PARTNER_STATUS } from '../../../server/partner/wire.ts';
import { createPartnerClient } from '../../../server/partner/client.ts';
import type { PartnerError } from '../../../server/partner/errors.ts';
import { generateLocalhostCertificate } from '../../../server/sandbox/tls.ts';

const NOW = Date.UTC(2026, 10, 23, 12);

describe('timestamps in every plausible form', () => {
  const instant = Date.UTC(2026, 10, 23, 17, 5, 9, 123);
  for (const text of [
    '2026-11-23T17:05:09.123456Z',
    '2026-11-23T17:05:09.123Z',
    '2026-11-23T14:05:09.123-03:00',
    '2026-11-23T14:05:09.123-0300',
    '2026-11-23 17:05:09.123',
    '2026-11-23T17:05:09.123456789+00:00',
  ]) {
    test(text, () => assert.equal(parsePartnerTime(text), instant));
  }
  test('whole seconds, epoch seconds and milliseconds', () => {
    assert.equal(parsePartnerTime('2026-11-23T14:05:09-03:00'), Date.UTC(2026, 10, 23, 17, 5, 9));
    assert.equal(parsePartnerTime(1_795_000_000), 1_795_000_000_000);
    assert.equal(parsePartnerTime(1_795_000_000_123), 1_795_000_000_123);
  });
  test('a duration, nanoseconds or a date outside 2000..2100 is no time (it would break a view)', () => {
    for (const bad of [3600, '1718000000000000000', 1_718_000_000_000_000_000, '1999-12-31T23:59:59Z', '2100-01-01T00:00:00Z']) {
      assert.equal(parsePartnerTime(bad), null, JSON.stringify(bad));
    }
  });
  test('unreadable is null, never a crash', () => {
    for (const bad of ['yesterday', '2026-13-01T00:00:00Z', '', null, {}, '2026-11-23T25:00:00Z'])
      assert.equal(parsePartnerTime(bad), null, JSON.stringify(bad));
  });
});

describe('the login answer', () => {
  test('the token under each name, at data or the top, with each lifetime', () => {
    const cases: [unknown, string, string | null, number][] = [
      [
        { message: 'ok', data: { access_token: 'a1', expires_at: '2031-11-23T12:00:00.000000Z' } },
        'data.access_token',
        'data.expires_at',
        Date.UTC(2031, 10, 23, 12),
      ],
      [{ data: { token: 'a1', expires_in: 3600 } }, 'data.token', 'data.expires_in', NOW + 3_600_000],
      [{ accessToken: 'a1' }, 'accessToken', null, NOW + 5 * 365 * 24 * 3600 * 1000],
      [{ token: 'a1', expires_in: '60' }, 'token', 'expires_in', NOW + 60_000],
    ];
    for (const [body, tokenAt, lifetimeAt, expiresAt] of cases) {
      const read = readLogin(body, NOW);
      assert.equal(read?.token, 'a1');
      assert.deepEqual(read?.found, { token: tokenAt, lifetime: lifetimeAt });
      assert.equal(read?.expiresAt, expiresAt);
    }
  });
  test('a small number where a time was expected is a lifetime in seconds, not a date in 1970', () => {
    assert.equal(readLogin({ token: 'a1', expiration: 3600 }, NOW)?.expiresAt, NOW + 3_600_000);
  });
  test('no token anywhere is null; a token with a space is not a token', () => {
    assert.equal(readLogin({ message: 'Login successful.' }, NOW), null);
    assert.equal(readLogin({ data: { token: 'a b' } }, NOW), null);
    assert.equal(readLogin(undefined, NOW), null);
  });
});

describe('the tenant', () => {
  test('as id, tenant_id or under tenant, at data or the top', () => {
    for (const [body, at] of [
      [{ message: 'x', data: { id: 't-1', name: 'Loja' } }, 'data.id'],
      [{ data: { tenant_id: 't-1' } }, 'data.tenant_id'],
      [{ tenant: { id: 't-1', name: 'Loja' } }, 'tenant.id'],
      [{ data: { tenant: { id: 't-1' } } }, 'data.tenant.id'],
      [{ data: [{ id: 't-1' }] }, 'data.0.id'],
    ] as const) {
      const read = readTenant(body);
      assert.equal(read?.id, 't-1', at);
      assert.equal(read?.found.id, at);
    }
    assert.equal(readTenant({ data: {} }), null);
  });
});

describe('a payment answer', () => {
  const code = '00020101021226...6304ABCD';
  test('fields at data or under pix_deposit; value as a number or a numeric string; created_at optional', () => {
    const flat = readPayment({
      message: 'ok',
      data: {
        external_reference: 'r1',
        pix_key: code,
        qr_code_url: 'https://x/q.svg',
        checkout: 'https://x/c',
        status: 1,
        value: 10.5,
        created_at: '2026-11-23T12:00:00.000000Z',
      },
    });
    assert.equal(flat.externalReference, 'r1');
    assert.equal(flat.pixKey, code);
    assert.equal(flat.createdAt, NOW);
    assert.deepEqual(flat.status, { code: 1, word: null });
    const nested = readPayment({
      data: {
        id: 3,
        status: '1',
        value: '10.50',
        pix_deposit: { external_reference: 'r1', pix_key: code, qr_code_url: 'https://x/q.svg', checkout: 'https://x/c' },
      },
    });
    assert.equal(nested.externalReference, 'r1');
    assert.equal(nested.found.pix_key, 'data.pix_deposit.pix_key');
    assert.equal(nested.value, 10.5);
    assert.deepEqual(nested.status, { code: 1, word: null });
    assert.equal(nested.createdAt, null);
  });
  test('the record\'s status, never an envelope\'s (`{status: "success", data: {...}}`)', () => {
    const payment = readPayment({ status: 'success', data: { external_reference: 'r1', status: 1, pix_key: code } });
    assert.deepEqual(payment.status, { code: 1, word: null });
    const nested = readPayment({ status: 'ok', data: { status: 1, pix_deposit: { external_reference: 'r1', pix_key: code } } });
    assert.deepEqual(nested.status, { code: 1, word: null });
    const transfer = readTransfer({ status: 'success', data: { withdrawal: { external_reference: 't1', status: 1 } } });
    assert.deepEqual(transfer.status, { code: 1, word: null });
    // An envelope word alone is no state: it means nothing.
    assert.equal(statusMeaning(DEFAULT_STATUS_CODES, { code: null, word: 'success' }), null);
  });
  test("without a reference, an envelope's top-level status is never the record's", () => {
    assert.equal(readTransfer({ status: 1, message: 'not found', data: null }).status, null);
    assert.equal(readPayment({ status: 1, data: { id: 3, status: null } }).status, null);
    assert.deepEqual(readTransfer({ data: { status: 2 } }).status, { code: 2, word: null });
  });
  test("the spec's external_reference wins over a bare reference (which may echo our own id)", () => {
    const read = readPayment({ data: { reference: 'our-transaction-id', pix_deposit: { external_reference: 'E123', pix_key: code } } });
    assert.equal(read.externalReference, 'E123');
    assert.equal(readNotification({ reference: 'our-id', data: { external_reference: 'E123' } })?.reference, 'E123');
  });
  test('a status nested deeper than one object is no status (no stack overflow on a hostile answer)', () => {
    let nested: unknown = 2;
    for (let i = 0; i < 20_000; i++) nested = { code: nested };
    assert.equal(readPayment({ data: { external_reference: 'r1', status: nested } }).status, null);
    assert.deepEqual(readPayment({ data: { external_reference: 'r1', status: { code: 2, name: 'paid' } } }).status, { code: 2, word: null });
  });
  test("a transfer check that answers a payment's record says so", () => {
    assert.equal(readTransfer({ data: { external_reference: 't1', type: 'payment', status: 2 } }).isPayment, true);
    assert.equal(readTransfer({ data: { external_reference: 't1', status: 2, pix_deposit: { pix_key: code } } }).isPayment, true);
    assert.equal(readTransfer({ data: { external_reference: 't1', type: 'transfer', status: 2 } }).isPayment, false);
  });
  test('a status word is kept as a word; a copy-and-paste code must look like one', () => {
    const read = readPayment({ data: { external_reference: 'r1', status: 'PAID', pix_key: 'not a brcode' } });
    assert.deepEqual(read.status, { code: null, word: 'paid' });
    assert.equal(read.pixKey, null);
  });
});

describe('a transfer answer', () => {
  test('under data, data.transfer or the top; camelCase too', () => {
    for (const body of [
      { data: { external_reference: 't1', status: 2, value: '12.00', pix_key_type: 'EMAIL' } },
      { transfer: { externalReference: 't1', status: 2, value: 12, pixKeyType: 'EMAIL' } },
      { data: { transfer: { reference: 't1', status: '2', amount: 12, pix_key_type: 'EMAIL' } } },
    ]) {
      const read = readTransfer(body);
      assert.equal(read.externalReference, 't1');
      assert.deepEqual(read.status, { code: 2, word: null });
      assert.equal(read.value, 12);
      assert.equal(read.pixKeyType, 'EMAIL');
    }
  });
});

describe('error bodies of any shape', () => {
  const cases: [string, string | null, Record<string, string> | undefined, string | null][] = [
    [
      '{"message":"The given data was invalid.","errors":{"value":["value must be at least 0.20"]}}',
      'The given data was invalid.',
      { value: 'value must be at least 0.20' },
      null,
    ],
    [
      '{"error":"Refused.","fields":{"value":"must be at least 0.20"},"code":"kyc_not_approved"}',
      'Refused.',
      { value: 'must be at least 0.20' },
      'kyc_not_approved',
    ],
    [
      '{"errors":[{"field":"value","message":"must be at least 0.20"}],"reason":"invalid_data"}',
      'must be at least 0.20',
      { value: 'must be at least 0.20' },
      'invalid_data',
    ],
    ['{"detail":"KYC pending","reason":"kyc_not_approved"}', 'KYC pending', undefined, 'kyc_not_approved'],
    ['{"error":{"code":"unauthenticated","message":"Token expired"}}', 'Token expired', undefined, 'unauthenticated'],
    ['Service Unavailable', 'Service Unavailable', undefined, null],
    ['<html><body>502</body></html>', null, undefined, null],
    ['', null, undefined, null],
  ];
  for (const [body, message, fields, reason] of cases) {
    test(body || '(empty)', () => {
      const read = readError(body);
      assert.equal(read.message, message);
      assert.deepEqual(read.fields, fields);
      assert.equal(read.reason, reason);
    });
  }
  test('the words are redacted: a document echoed back never reaches a message', () => {
    const read = readError('{"message":"document 529.982.247-25 is blocked","errors":{"document":["529.982.247-25 invalid"]}}');
    assert.equal(read.message?.includes('529.982'), false);
    assert.equal(read.fields?.document?.includes('529.982'), false);
  });
});

describe('what doctor and the operator see', () => {
  test('shape() keeps the structure and replaces every value by its type', () => {
    assert.deepEqual(
      shape({ data: { token: 'secret-token', expires_in: 3600, created_at: '2026-11-23T14:05:09-03:00', value: '10.50', list: [{ a: null }] } }),
      {
        data: { token: 'string', expires_in: 'number', created_at: 'timestamp (no fraction, -03:00)', value: 'numeric string', list: [{ a: 'null' }] },
      },
    );
  });
  test('redactBody masks tokens and documents and cuts at 2 KiB', () => {
    const body = `{"data":{"access_token":"eyJhbGciOi","document":"529.982.247-25","note":"${'x'.repeat(3000)}"`;
    const kept = redactBody(body);
    assert.equal(kept.includes('eyJhbGciOi'), false);
    assert.equal(kept.includes('529.982'), false);
    assert.ok(kept.length <= 2048);
  });
});

describe('notifications in any plausible form', () => {
  const cases: [string, string, unknown, Partial<NonNullable<ReturnType<typeof readNotification>>>][] = [
    [
      'old format',
      'application/json',
      { type: 'payment', id: 7, external_reference: 'r1', status: 2 },
      { reference: 'r1', kind: 'payment', outcome: null, eventId: null },
    ],
    [
      'new format',
      'application/json',
      { id: 'evt_1', event: 'payment.approved', occurred_at: 'x', data: { external_reference: 'r1', status: 2 } },
      { reference: 'r1', kind: 'payment', outcome: 'approved', eventId: 'evt_1' },
    ],
    [
      'upper-case words',
      'application/json',
      { id: 'evt_2', event: 'TRANSFER_CANCELLED', data: { reference: 'r1', status: 3 } },
      { reference: 'r1', kind: 'transfer', outcome: 'canceled', eventId: 'evt_2' },
    ],
    [
      'deposit words, camelCase',
      'application/json',
      { event_id: 'e3', event_type: 'deposit.paid', transaction: { externalReference: 'r1', status: 1 } },
      { reference: 'r1', kind: 'payment', outcome: 'approved', eventId: 'e3' },
    ],
    ['status word, no kind', 'application/json', { reference: 'r1', status: 'cancelled' }, { reference: 'r1', kind: null, outcome: 'canceled' }],
  ];
  for (const [name, type, body, expected] of cases) {
    test(name, () => {
      const read = readNotification(notificationBody(JSON.stringify(body), type));
      for (const [key, value] of Object.entries(expected)) assert.deepEqual(read?.[key as keyof typeof read], value, key);
    });
  }
  test('an event that is not its last word (negated, a refund, a chargeback) states no outcome', () => {
    for (const event of ['PAYMENT_NOT_PAID', 'payment.not_approved', 'payment.expired_not_paid', 'payment.refund_completed', 'payment.chargeback_approved']) {
      const read = readNotification({ event, data: { external_reference: 'r1' } });
      assert.equal(read?.reference, 'r1', event);
      assert.equal(read?.outcome, null, event);
    }
    assert.equal(readNotification({ event: 'pix_deposit.approved', data: { external_reference: 'r1' } })?.kind, 'payment');
    // Only `<kind words>.<outcome>` states an outcome.
    assert.equal(readNotification({ event: 'payment.settlement.failed', data: { external_reference: 'r1' } })?.outcome, null);
  });
  test('a Pix transfer is a transfer: two-word kinds before single words, `pix` alone names neither', () => {
    for (const event of ['pix_out.approved', 'PIX_WITHDRAWAL_APPROVED', 'pix.transfer.completed']) {
      const read = readNotification({ event, data: { external_reference: 't1' } });
      assert.equal(read?.kind, 'transfer', event);
      assert.equal(read?.outcome, 'approved', event);
    }
    assert.equal(readNotification({ type: 'pix', event: 'transfer.approved', data: { external_reference: 't1' } })?.kind, 'transfer');
  });
  test('form-encoded, plain or with a JSON field', () => {
    // A stored body is read again without its Content-Type: the form is recognized by its shape.
    assert.equal(readNotification(notificationBody('event[type]=payment.paid&external_reference=abc', undefined))?.reference, 'abc');
    assert.equal(readNotification(notificationBody('external_reference=r1&status=2&type=payment', 'application/x-www-form-urlencoded'))?.reference, 'r1');
    const wrapped = `payload=${encodeURIComponent(JSON.stringify({ event: 'payment.approved', data: { external_reference: 'r2' } }))}`;
    assert.deepEqual(readNotification(notificationBody(wrapped, 'application/x-www-form-urlencoded'))?.outcome, 'approved');
  });
  test('nothing to read: null', () => {
    for (const raw of ['', '{"type":"payment",', '{"hello":"world"}', '[1,2]', 'just text'])
      assert.equal(readNotification(notificationBody(raw, 'application/json')), null, raw);
  });
});

describe('PIX_STATUS_CODES', () => {
  test('named or in order; refused when malformed or ambiguous', () => {
    assert.deepEqual(parseStatusCodes('pending=0,approved=1,canceled=2'), { pending: 0, approved: 1, canceled: 2 });
    assert.deepEqual(parseStatusCodes('0, 1, 2'), { pending: 0, approved: 1, canceled: 2 });
    assert.deepEqual(parseStatusCodes('canceled=9,pending=7,paid=8'), { pending: 7, approved: 8, canceled: 9 });
    for (const bad of ['1,2', '1,1,2', 'pending=1,approved=2', 'a,b,c', 'pending=1,approved=2,refunded=3']) assert.equal(parseStatusCodes(bad), null, bad);
  });
  test('words mean what they say; unknown codes mean nothing', () => {
    assert.equal(statusMeaning(DEFAULT_STATUS_CODES, { code: null, word: 'cancelled' }), 'canceled');
    assert.equal(statusMeaning(DEFAULT_STATUS_CODES, { code: null, word: 'expired' }), null);
    assert.equal(statusMeaning(DEFAULT_STATUS_CODES, { code: 7, word: null }), null);
  });
});

describe('the numbering guard', () => {
  const silent = createLogger({ level: 'silent' });
  const code = (n: number) => ({ code: n, word: null });
  const MINUTE = 60_000;
  /** A payment that expired at NOW, observed at `now` (a fake clock: minutes from NOW). */
  const at = (reference: string, minutes: number) => ({ reference, expiresAt: NOW, now: NOW + minutes * MINUTE });
  /** Log lines at `level` and above, kept. */
  function logged(level: 'info' | 'warn' | 'error' = 'error') {
    const lines: string[] = [];
    return { lines, log: createLogger({ level, destination: { write: (line: string) => void lines.push(line) } }) };
  }
  /** A guard whose pending code a new payment verified. */
  async function pendingVerified(memory = memoryTokenStore(), log = silent, codes = DEFAULT_STATUS_CODES) {
    const guard = new StatusNumbering(codes, log, memory);
    await guard.observeFresh(code(codes.pending), 'fresh');
    return guard;
  }

  test('unverified: no code decides anything; a fresh pending code verifies pending only, and is remembered', async () => {
    const memory = memoryTokenStore();
    const guard = new StatusNumbering(DEFAULT_STATUS_CODES, silent, memory);
    assert.equal(guard.meaning(code(PARTNER_STATUS.approved)), null);
    await guard.observeFresh(code(PARTNER_STATUS.pending), 'r1');
    assert.equal(guard.report().state, 'unverified');
    assert.deepEqual(guard.report().codes, { pending: 'verified', approved: 'unverified', canceled: 'unverified' });
    assert.equal(guard.meaning(code(PARTNER_STATUS.pending)), 'pending');
    assert.equal(guard.meaning(code(PARTNER_STATUS.approved)), null, 'the pending check alone verifies nothing else');
    assert.equal(guard.meaning(code(PARTNER_STATUS.canceled)), null);
    const next = new StatusNumbering(DEFAULT_STATUS_CODES, silent, memory);
    await next.load();
    assert.deepEqual(next.report().codes, { pending: 'verified', approved: 'unverified', canceled: 'unverified' });
    // Another setting is not verified by it.
    const other = new StatusNumbering({ pending: 0, approved: 1, canceled: 2 }, silent, memory);
    await other.load();
    assert.deepEqual(other.report().codes, { pending: 'unverified', approved: 'unverified', canceled: 'unverified' });
  });

  test('approved: a final code before expires_at + 1 h - 5 min verifies it; canceled: another final code at or after the hour, once approved is', async () => {
    const { lines, log } = logged('info');
    const guard = await pendingVerified(memoryTokenStore(), log);
    // A canceled code after the hour proves nothing while approved is unknown (it may be a payment paid in time, read late).
    await guard.observe(code(3), at('late', 61));
    assert.deepEqual(guard.report().codes, { pending: 'verified', approved: 'unverified', canceled: 'unverified' });
    // A final code well before the hour can only be approved.
    await guard.observe(code(2), at('paid', 30));
    assert.equal(guard.meaning(code(2)), 'approved');
    assert.equal(guard.meaning(code(3)), null, 'canceled not yet');
    assert.match(lines.join(''), /partner status code 2 verified as approved/);
    // Within the 5 minutes before the hour (the partner's clock may run ahead): nothing.
    await guard.observe(code(3), at('edge', 56));
    assert.equal(guard.meaning(code(3)), null);
    assert.equal(guard.report().state, 'unverified');
    // An approved code read after the hour: a payment made in time, read late; it says nothing of canceled.
    await guard.observe(code(2), at('paid-late', 90));
    assert.equal(guard.meaning(code(3)), null);
    // Another final code at the hour: canceled.
    await guard.observe(code(3), at('canceled', 60));
    assert.equal(guard.meaning(code(3)), 'canceled');
    assert.equal(guard.report().state, 'verified');
    assert.deepEqual(guard.report().codes, { pending: 'verified', approved: 'verified', canceled: 'verified' });
  });

  test('a late final code before the hour (a payment made in time, read late) decides nothing about canceled, even once approved is known', async () => {
    const guard = await pendingVerified();
    await guard.observe(code(2), at('paid', -10));
    // 3 read 58 min past expiry: within the margin it is not "too early to be canceled", and not yet the hour.
    await guard.observe(code(3), at('late', 58));
    assert.equal(guard.meaning(code(3)), null);
    assert.equal(guard.report().codes.canceled, 'unverified');
    assert.equal(guard.report().state, 'unverified');
  });

  test('approved and canceled swapped (a paid 3 before the hour): a mismatch, logged at error; no code decides any more', async () => {
    const { lines, log } = logged();
    const memory = memoryTokenStore();
    const guard = await pendingVerified(memory, log);
    await guard.observe(code(3), at('paid', -30));
    assert.equal(guard.report().state, 'mismatch');
    assert.match(guard.report().problem ?? '', /status 3 .*can only be approved, but PIX_STATUS_CODES says approved is 2/);
    assert.match(lines.join(''), /"level":50.*partner status codes do not match the setting/);
    for (const n of [1, 2, 3]) assert.equal(guard.meaning(code(n)), null, `code ${n} decides nothing`);
    // Kept: a restart with the same setting knows it at once.
    const restarted = new StatusNumbering(DEFAULT_STATUS_CODES, silent, memory);
    await restarted.load();
    assert.equal(restarted.report().state, 'mismatch');
  });

  test('a code contradicting a verified one is a mismatch: another final code before the hour, another than canceled after it', async () => {
    const early = await pendingVerified();
    await early.observe(code(2), at('paid', 0));
    await early.observe(code(3), at('canceled-early', 10));
    assert.equal(early.report().state, 'mismatch');
    assert.equal(early.meaning(code(2)), null);

    const late = await pendingVerified();
    await late.observe(code(2), at('paid', 0));
    await late.observe(code(3), at('canceled', 61));
    await late.observe(code(7), at('other', 120));
    assert.equal(late.report().state, 'mismatch');
    assert.match(late.report().problem ?? '', /status 7 .*can only be canceled|status 7/);

    // Canceled unverified, approved verified: a final code after the hour that is not the configured canceled one.
    const wrongCanceled = await pendingVerified(memoryTokenStore(), silent, { pending: 1, approved: 2, canceled: 4 });
    await wrongCanceled.observe(code(2), at('paid', 0));
    await wrongCanceled.observe(code(3), at('canceled', 61));
    assert.equal(wrongCanceled.report().state, 'mismatch');
    assert.match(wrongCanceled.report().problem ?? '', /so 3 can only be canceled, but PIX_STATUS_CODES says canceled is 4/);
  });

  test("until pending is verified, a read decides nothing: a final-looking code may be the partner's pending", async () => {
    const guard = new StatusNumbering(DEFAULT_STATUS_CODES, silent, memoryTokenStore());
    await guard.observe(code(2), at('r1', -30));
    await guard.observe(code(0), at('r2', -30));
    assert.equal(guard.report().state, 'unverified');
    assert.deepEqual(guard.report().codes, { pending: 'unverified', approved: 'unverified', canceled: 'unverified' });
  });

  test('a new payment with any other code than pending is a mismatch, the configured approved code included', async () => {
    for (const fresh of [0, PARTNER_STATUS.approved, PARTNER_STATUS.canceled]) {
      const guard = new StatusNumbering(DEFAULT_STATUS_CODES, silent, memoryTokenStore());
      await guard.observeFresh(code(fresh), 'r1');
      assert.equal(guard.report().state, 'mismatch', `a new payment with ${fresh}`);
      assert.match(guard.report().problem ?? '', new RegExp(`status ${fresh}, but PIX_STATUS_CODES says pending is 1`));
    }
    const word = new StatusNumbering(DEFAULT_STATUS_CODES, silent, memoryTokenStore());
    await word.observeFresh({ code: null, word: 'paid' }, 'r1');
    assert.equal(word.report().state, 'mismatch');
  });

  test("transfers verify nothing: a new transfer's code, pending or not, neither verifies nor contradicts", async () => {
    const guard = new StatusNumbering(DEFAULT_STATUS_CODES, silent, memoryTokenStore());
    await guard.observeFresh(code(1), 't1', 'transfer');
    assert.deepEqual(guard.report().codes, { pending: 'unverified', approved: 'unverified', canceled: 'unverified' });
    await guard.observeFresh(code(0), 't2', 'transfer');
    await guard.observeFresh({ code: null, word: 'paid' }, 't3', 'transfer');
    assert.equal(guard.report().state, 'unverified');
    // Transfers read only what payments verified.
    assert.equal(guard.meaning(code(2), 'transfer'), null);
    await guard.observeFresh(code(1), 'p1');
    await guard.observe(code(2), at('p2', 0));
    assert.equal(guard.meaning(code(2), 'transfer'), 'approved');
    assert.equal(guard.meaning(code(3), 'transfer'), null);
  });

  test('another numbering: a fresh 0 is a mismatch; then a canceled payment (2) is never read as approved', async () => {
    const { lines, log } = logged('warn');
    const memory = memoryTokenStore();
    const guard = new StatusNumbering(DEFAULT_STATUS_CODES, log, memory);
    await guard.observeFresh(code(0), 'r1');
    assert.equal(guard.report().state, 'mismatch');
    assert.match(guard.report().problem ?? '', /status 0, but PIX_STATUS_CODES says pending is 1/);
    assert.match(lines.join(''), /status 0/);
    assert.equal(guard.meaning(code(2)), null);
    assert.equal(guard.meaning(code(1)), null);
    // Words still pending at the partner decide nothing; canceled is not believed before approved is known.
    assert.equal(guard.confirmExplicit('approved', code(0), 'r3'), false);
    assert.equal(guard.confirmExplicit('canceled', code(2), 'r4'), false);
    // The first approval (an authenticated notification, no longer pending) teaches the approved code...
    assert.equal(guard.confirmExplicit('approved', code(1), 'r2'), true);
    assert.equal(guard.meaning(code(1)), 'approved');
    // ...after which no other code is made approved by words, and canceled is believed for the third code.
    assert.equal(guard.confirmExplicit('approved', code(2), 'r5'), false);
    assert.equal(guard.confirmExplicit('canceled', code(2), 'r4'), true);
    assert.equal(guard.confirmExplicit('canceled', code(1), 'r6'), false);
    // The verdict, the pending code seen and the approved code learned outlive a restart.
    const next = new StatusNumbering(DEFAULT_STATUS_CODES, log, memory);
    await next.load();
    assert.equal(next.report().state, 'mismatch');
    assert.equal(next.confirmExplicit('approved', code(0), 'r7'), false, 'pending 0 is still known as pending');
    assert.equal(next.meaning(code(1)), 'approved');
  });

  test('unverified (no new payment yet): words decide nothing, since the pending code is not known', async () => {
    const guard = new StatusNumbering(DEFAULT_STATUS_CODES, silent, memoryTokenStore());
    await guard.load();
    assert.equal(guard.report().state, 'unverified');
    assert.equal(guard.confirmExplicit('approved', code(0), 'r1'), false);
    assert.equal(guard.confirmExplicit('approved', code(2), 'r1'), false);
  });

  test('words corroborate a code the setting names (approved once pending is verified; canceled once approved is), and contradicting the setting is a mismatch', async () => {
    const guard = await pendingVerified();
    assert.equal(guard.confirmExplicit('approved', code(1), 'still-pending'), false);
    assert.equal(guard.confirmExplicit('canceled', code(3), 'r1'), false, 'canceled words before approved is known: nothing');
    assert.equal(guard.report().codes.canceled, 'unverified');
    assert.equal(guard.confirmExplicit('approved', code(2), 'r2'), true);
    assert.equal(guard.report().codes.approved, 'verified');
    assert.equal(guard.confirmExplicit('canceled', code(3), 'r3'), true);
    assert.equal(guard.report().state, 'verified');

    // Swapped at the partner: "canceled" said of the setting's (unverified) approved code.
    const { lines, log } = logged();
    const swapped = await pendingVerified(memoryTokenStore(), log);
    assert.equal(swapped.confirmExplicit('canceled', code(2), 'r4'), false);
    assert.equal(swapped.report().state, 'mismatch');
    assert.match(lines.join(''), /said canceled for r4, but the partner reports status 2, which PIX_STATUS_CODES calls approved/);
  });

  test('verified: words agreeing with the code confirm it; words contradicting it make a mismatch, neither overriding the other', async () => {
    const { lines, log } = logged();
    const guard = await pendingVerified(memoryTokenStore(), log);
    await guard.observe(code(2), at('paid', 0));
    await guard.observe(code(3), at('canceled', 61));
    assert.equal(guard.confirmExplicit('approved', code(2), 'r3'), true);
    assert.equal(guard.meaning(code(3)), 'canceled');
    assert.equal(guard.confirmExplicit('approved', code(3), 'r2'), false);
    assert.equal(guard.report().state, 'mismatch');
    assert.match(lines.join(''), /said approved for payment r2, but the partner reports status 3, verified as canceled/);
    // No code decides now; pending (1) is still known as pending, so words may settle again.
    assert.equal(guard.meaning(code(2)), null);
    assert.equal(guard.meaning(code(3)), null);
    assert.equal(guard.confirmExplicit('approved', code(1), 'r4'), false);
    // The same notification again (the partner resends it): the verified canceled code is never
    // taught "approved" by words, so no canceled payment is ever read as paid.
    assert.equal(guard.confirmExplicit('approved', code(3), 'r2'), false);
    assert.equal(guard.meaning(code(3)), null);
    assert.equal(guard.confirmExplicit('canceled', code(2), 'r5'), false, 'nor the verified approved code "canceled"');
    assert.equal(guard.meaning(code(2)), null);
  });

  test('verdicts are kept per partner service and account, and a changed setting starts unverified', async () => {
    const memory = memoryTokenStore();
    const sandbox = new StatusNumbering(DEFAULT_STATUS_CODES, silent, memory, 'https://127.0.0.1:8443|sandbox@pix-checkout.test');
    await sandbox.observeFresh(code(1), 'r1');
    await sandbox.observe(code(2), at('r2', 0));
    const real = new StatusNumbering(DEFAULT_STATUS_CODES, silent, memory, 'https://api.partner.example|loja@shop.example');
    await real.load();
    assert.equal(real.report().codes.pending, 'unverified');
    const same = new StatusNumbering(DEFAULT_STATUS_CODES, silent, memory, 'https://127.0.0.1:8443|sandbox@pix-checkout.test');
    await same.load();
    assert.deepEqual(same.report().codes, { pending: 'verified', approved: 'verified', canceled: 'unverified' });
    const changed = new StatusNumbering({ pending: 1, approved: 3, canceled: 2 }, silent, memory, 'https://127.0.0.1:8443|sandbox@pix-checkout.test');
    await changed.load();
    assert.deepEqual(changed.report().codes, { pending: 'unverified', approved: 'unverified', canceled: 'unverified' });
  });

  test('a restart keeps every verdict; another instance sharing the store learns them on its next reload', async () => {
    const memory = memoryTokenStore();
    const guard = await pendingVerified(memory);
    const other = new StatusNumbering(DEFAULT_STATUS_CODES, silent, memory);
    await other.load();
    await guard.observe(code(2), at('paid', 0));
    await guard.observe(code(3), at('canceled', 60));
    const restarted = new StatusNumbering(DEFAULT_STATUS_CODES, silent, memory);
    await restarted.load();
    assert.equal(restarted.report().state, 'verified');
    assert.equal(restarted.meaning(code(3)), 'canceled');
    // An older release kept the setting itself once a new payment verified pending: read as pending only.
    const legacy = memoryTokenStore();
    await legacy.save('status-codes-verified|', 'pending=1,approved=2,canceled=3');
    const upgraded = new StatusNumbering(DEFAULT_STATUS_CODES, silent, legacy);
    await upgraded.load();
    assert.deepEqual(upgraded.report().codes, { pending: 'verified', approved: 'unverified', canceled: 'unverified' });
  });

  test('transfers teach no code, and a transfer check contradicting its notification is a transfers mismatch (error, report), not a choice', async () => {
    const guard = new StatusNumbering(DEFAULT_STATUS_CODES, silent, memoryTokenStore());
    await guard.observeFresh(code(0), 'r1');
    assert.equal(guard.confirmExplicit('approved', code(1), 't1', false), false);
    assert.equal(guard.meaning(code(1)), null);

    const { lines, log } = logged();
    const memory = memoryTokenStore();
    const verified = await pendingVerified(memory, log);
    assert.equal(verified.confirmExplicit('approved', code(2), 't0', false), false, 'an unverified code: a transfer teaches nothing');
    assert.equal(verified.report().codes.approved, 'unverified');
    await verified.observe(code(2), at('p1', 0));
    await verified.observe(code(3), at('p2', 61));
    assert.equal(verified.confirmExplicit('approved', code(2), 't1', false), true);
    assert.equal(verified.confirmExplicit('approved', code(3), 't2', false), false);
    assert.equal(verified.report().state, 'verified', "the payments' numbering stands");
    assert.match(verified.report().transfers_problem ?? '', /said approved for transfer t2, but the partner reports status 3, verified as canceled/);
    assert.match(lines.join(''), /"level":50.*transfer status codes contradict/);
    assert.equal(verified.meaning(code(2), 'transfer'), null, 'no transfer code decides alone any more');
    assert.equal(verified.meaning(code(2)), 'approved', 'payment codes still do');
    assert.equal(verified.confirmExplicit('approved', code(2), 't3', false), true, 'words the check agrees with still settle');
    assert.equal(verified.confirmExplicit('canceled', code(2), 't4', false), false);
    const restarted = new StatusNumbering(DEFAULT_STATUS_CODES, silent, memory);
    await restarted.load();
    assert.ok(restarted.report().transfers_problem);
  });

  test("a mismatch from contradicting words lasts this run only; one from a code's proof is kept", async () => {
    const memory = memoryTokenStore();
    const guard = await pendingVerified(memory);
    await guard.observe(code(2), at('paid', 0));
    await guard.observe(code(3), at('canceled', 61));
    guard.confirmExplicit('approved', code(3), 'r2');
    assert.equal(guard.report().state, 'mismatch');
    const restarted = new StatusNumbering(DEFAULT_STATUS_CODES, silent, memory);
    await restarted.load();
    assert.equal(restarted.report().state, 'verified');
  });
});

describe('references the partner may give', () => {
  let stack: DevStack;
  before(async () => {
    stack = await startDevStack({ background: false, logger: createLogger({ level: 'silent' }) });
  });
  after(() => stack.close());

  test('one with / . : and spaces is encoded in the path and read back by the browser', async () => {
    const reference = 'PIX/2026-11:abc.def 01';
    assert.equal(Reference.safeParse(reference).success, true);
    const now = Date.now();
    await stack.store.insertPayment({
      reference,
      checkoutId: null,
      valueCents: 1000,
      description: null,
      partnerStatus: PARTNER_STATUS.pending,
      brcode: '000201',
      qrCodeUrl: '',
      checkoutUrl: '',
      createdAt: now,
      expiresAt: now + 3_600_000,
      transactionId: 'tx-encoded',
      updatedAt: now,
      final: false,
    });
    const res = await fetch(`${stack.url}/api${fillPath(API_PATHS.payment, { reference })}`);
    assert.equal(res.status, 200);
    assert.equal(((await res.json()) as { reference: string }).reference, reference);
  });

  test('control characters and ends of spaces are still refused', () => {
    for (const bad of ['a\nb', ' a', 'a ', '', 'x'.repeat(201)]) assert.equal(Reference.safeParse(bad).success, false, JSON.stringify(bad));
  });
});

describe('a partner that echoes secrets or floods', () => {
  /** A partner of our own making over real HTTPS: it echoes what it was sent, or answers 2 MiB. */
  let server: Server;
  let url: string;
  let ca: string;
  before(async () => {
    const tls = await generateLocalhostCertificate();
    ca = tls.cert;
    server = createServer({ key: tls.key, cert: tls.cert }, (req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString()));
      req.on('end', () => {
        if (req.url === PARTNER_PATHS.login) {
          res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ token: 'tok-0123456789abcdef' }));
        } else if (req.url === PARTNER_PATHS.getTenant) {
          res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ tenant_id: 't-1' }));
        } else if (req.url?.startsWith('/api/v2/wallet/partner/transactions/huge')) {
          res.writeHead(200, { 'content-type': 'application/json' }).end(`{"data":"${'x'.repeat(2 * 1024 * 1024)}"}`);
        } else {
          // An error that quotes the request and its headers back.
          res.writeHead(422, { 'content-type': 'application/json' }).end(JSON.stringify({ message: `bad request ${req.headers.authorization} ${body}` }));
        }
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const partner = () =>
    createPartnerClient({
      baseUrl: url,
      ca,
      userAgent: 'Loja Teste (dev@loja.example)',
      credentials: { email: 'loja@shop.example', accessKey: 'key-secret-9876543210' },
      attempts: 1,
    });

  test('the token never reaches an error message or its fields, even when the partner quotes it', async () => {
    const error = await partner()
      .setNotificationUrl({ notification_url: 'https://shop.example/hook' })
      .then(
        () => assert.fail('refused'),
        (e: unknown) => e as PartnerError,
      );
    assert.equal(error.kind, 'refused');
    const said = `${error.message} ${JSON.stringify(error.details)}`;
    assert.ok(said.includes('bad request'), said);
    assert.equal(said.includes('tok-0123456789abcdef'), false, said);
  });

  test('an answer over 1 MiB is cut off, not buffered: an error, no crash', async () => {
    const error = await partner()
      .getPayment('huge')
      .then(
        () => assert.fail('refused'),
        (e: unknown) => e as PartnerError,
      );
    assert.equal(error.kind, 'unavailable');
    assert.match(error.message, /ANSWER_TOO_LARGE/);
  });
});

describe("the partner's clock", () => {
  const silent = createLogger({ level: 'silent' });
  test("a created_at ahead of the proxy's clock never pushes the expiry, nor the hour that proves codes, past the partner's", async () => {
    const now = Date.UTC(2030, 0, 1, 12, 0, 0);
    const store = openSqliteStore({ dataDir: ':memory:' });
    const numbering = new StatusNumbering(DEFAULT_STATUS_CODES, silent, memoryTokenStore());
    for (const [label, aheadMs, expected] of [
      ['30 min ahead (or a created_at in the wrong zone)', 30 * 60_000, now],
      ['2 s behind', -2000, now - 2000],
    ] as const) {
      const partner = {
        createPayment: async () => ({
          externalReference: `ref-${aheadMs}`,
          pixKey: '00020101021226',
          qrCodeUrl: null,
          checkoutUrl: null,
          createdAt: now + aheadMs,
          status: { code: DEFAULT_STATUS_CODES.pending, word: null },
          favoured: 'Loja',
        }),
      } as unknown as PartnerClient;
      const service = new PaymentService(partner, {
        store,
        expirationSeconds: 600,
        staleAfterMs: DEFAULTS.staleAfterMs,
        watchIntervalMs: DEFAULTS.watchIntervalMs,
        now: () => now,
        log: silent,
        outcomes: new Outcomes(silent),
        numbering,
      });
      const record = await service.issue({ value: 1 }, null);
      assert.equal(record.createdAt, expected, label);
      assert.equal(record.expiresAt, expected + 600_000, label);
    }
    await store.close();
  });
});
