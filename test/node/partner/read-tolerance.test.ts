/**
 * Reading what a real partner service may send (partner/read.ts, partner/notification.ts), the status
 * numbering guard (domain/numbering/status-numbering.ts), and references the proxy's old pattern refused.
 * The dialect suites (stack/partner-dialects.test.ts) run the same code against the sandbox over HTTPS.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { fillPath, API_PATHS } from '../../../src/shared/wire.ts';
import { Reference } from '../../../src/shared/contract.ts';
import { startDevStack, type DevStack } from '../../../server/dev-stack.ts';
import { StatusNumbering } from '../../../server/domain/numbering/status-numbering.ts';
import { PaymentService } from '../../../server/domain/payments.ts';
import { DEFAULTS } from '../../../server/config/index.ts';
import { Outcomes } from '../../../server/domain/outcomes.ts';
import { openSqliteStore } from '../../../server/store/sqlite/sqlite-store.ts';
import type { PartnerClient } from '../../../server/partner/client.ts';
import { createLogger } from '../../../server/log.ts';
import { notificationBody, readNotification } from '../../../server/partner/notification.ts';
import { parsePartnerTime, readError, readLogin, readPayment, readTenant, readTransfer, redactBody, shape } from '../../../server/partner/read.ts';
import { DEFAULT_STATUS_CODES, statusMeaning } from '../../../server/partner/status-codes.ts';
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

// PIX_STATUS_CODES and the numbering guard: test/node/domain/status-numbering.test.ts.

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
    await stack.store.payments.insert({
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
  test("the partner's created_at, ahead or behind, never moves the expiry nor the hours that prove codes: our send time counts", async () => {
    const now = Date.UTC(2030, 0, 1, 12, 0, 0);
    const store = openSqliteStore({ dataDir: ':memory:' });
    const numbering = new StatusNumbering(DEFAULT_STATUS_CODES, silent, memoryTokenStore());
    for (const [label, aheadMs, expected] of [
      ['30 min ahead (or a created_at in the wrong zone)', 30 * 60_000, now],
      // Counted from our send time: a partner clock behind must not pull the hours that prove codes earlier.
      ['10 min behind', -10 * 60_000, now],
    ] as const) {
      const partner = {
        createPayment: async () => ({
          externalReference: `ref-${aheadMs}`,
          pixKey: '00020101021226',
          qrCodeUrl: null,
          checkoutUrl: null,
          createdAt: now + aheadMs,
          status: { code: DEFAULT_STATUS_CODES.pending[0]!, word: null },
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
      const record = await service.issuer.issue({ value: 1 }, null);
      assert.equal(record.createdAt, expected, label);
      assert.equal(record.expiresAt, expected + 600_000, label);
    }
    await store.close();
  });
});
