/** The partner-service client against the sandbox over real HTTPS. */
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { parseBrCode } from '../../../src/shared/brcode.ts';
import { PARTNER_STATUS } from '../../../server/partner/wire.ts';
import { startSandbox, type RunningSandbox } from '../../../server/sandbox/server.ts';
import { DEFAULT_ACCOUNT } from '../../../server/sandbox/state.ts';
import { createPartnerClient, tokenStoreKey, type PartnerClientOptions, type PartnerLogEntry } from '../../../server/partner/client.ts';
import { redact } from '../../../server/partner/errors.ts';
import { fileTokenStore, memoryTokenStore } from '../../../server/partner/token-store.ts';
import { rejection } from '../../support/checks.ts';
import { CRYPTO_RANDOM, REAL_CLOCK } from '../../../server/runtime/runtime.ts';

let sandbox: RunningSandbox;
let dir: string;

before(async () => {
  sandbox = await startSandbox();
  dir = await mkdtemp(join(tmpdir(), 'pix-client-'));
});
after(async () => {
  await sandbox.close();
  await rm(dir, { recursive: true, force: true });
});

function client(extra: Partial<PartnerClientOptions> = {}) {
  const log: PartnerLogEntry[] = [];
  const partner = createPartnerClient({
    baseUrl: sandbox.url,
    ca: sandbox.ca,
    userAgent: 'Loja Teste (dev@loja.example)',
    credentials: { email: DEFAULT_ACCOUNT.email, accessKey: DEFAULT_ACCOUNT.accessKey },
    backoffMs: 10,
    log: (entry) => log.push(entry),
    ...extra,
  });
  return { partner, log, logins: () => log.filter((e) => e.operation === 'login').length };
}

describe('client: auth', () => {
  test('logs in once and fetches the tenant once', async () => {
    const { partner, log, logins } = client();
    const tenant = await partner.getTenant();
    assert.deepEqual(tenant, DEFAULT_ACCOUNT.tenant);
    await partner.getTenant();
    assert.equal(logins(), 1);
    assert.equal(log.filter((e) => e.operation === 'getTenant').length, 1);
  });

  test('concurrent calls while logging in share one login', async () => {
    const { partner, logins } = client();
    const reference = (await client().partner.createPayment({ value: 1 })).externalReference;
    await Promise.all(Array.from({ length: 10 }, () => partner.getPayment(reference)));
    assert.equal(logins(), 1);
  });

  test('a refused token: logs in again once and retries the call once', async () => {
    const { partner, logins } = client();
    const created = await partner.createPayment({ value: 2 });
    sandbox.state.tokens.clear();
    const record = await partner.getPayment(created.externalReference);
    assert.equal(record.externalReference, created.externalReference);
    assert.equal(logins(), 2);
  });

  test('a token still refused after a new login is discarded, not kept for the next start', async () => {
    const tokens = memoryTokenStore();
    const { partner, logins } = client({ tokenStore: tokens });
    await partner.getTenant();
    const key = tokenStoreKey(sandbox.url, DEFAULT_ACCOUNT.email);
    assert.ok(await tokens.load(key), 'the first login was kept');
    // The service now refuses every token (a revoked access, say): a fault of the service.
    const valid = sandbox.state.isTokenValid.bind(sandbox.state);
    sandbox.state.isTokenValid = () => false;
    try {
      const error = await rejection(partner.getPayment('any-reference'));
      assert.equal(error.kind, 'unauthorized');
      assert.equal(logins(), 2, 'one new login, no more');
      assert.equal(await tokens.load(key), null, 'the refused token is gone from the store');
    } finally {
      sandbox.state.isTokenValid = valid;
    }
    // Next time it logs in afresh and works.
    await partner.getPayment((await partner.createPayment({ value: 1 })).externalReference);
    assert.equal(logins(), 3);
  });

  test('a token saved with its lifetime is renewed before it runs out', async () => {
    const tokens = memoryTokenStore();
    let now = Date.now();
    const { partner, logins } = client({ tokenStore: tokens, now: () => now });
    await partner.getTenant();
    assert.equal(logins(), 1);
    const saved = JSON.parse((await tokens.load(tokenStoreKey(sandbox.url, DEFAULT_ACCOUNT.email)))!) as { expires_at: number };
    now = saved.expires_at + 1;
    await partner.getPayment((await partner.createPayment({ value: 1 })).externalReference);
    assert.equal(logins(), 2, 'a new login once the saved lifetime passed, before any refusal');
  });

  test('wrong credentials: unauthorized, and the access key is not in the message', async () => {
    const { partner } = client({ credentials: { email: DEFAULT_ACCOUNT.email, accessKey: 'wrong-key-123' } });
    const error = await rejection(partner.getTenant());
    assert.equal(error.kind, 'unauthorized');
    assert.equal(error.details.status, 401);
    assert.equal(error.message.includes('wrong-key-123'), false);
  });

  test('a configured token is used without logging in', async () => {
    const token = sandbox.state.issueToken();
    const { partner, logins } = client({ token, credentials: null });
    assert.equal((await partner.getTenant()).id, DEFAULT_ACCOUNT.tenant.id);
    assert.equal(logins(), 0);
  });

  test('the token from a login is kept in a 0600 file, and the next client reuses it', async () => {
    const file = join(dir, 'token.json');
    const first = client({ tokenStore: fileTokenStore(file) });
    await first.partner.getTenant();
    assert.equal(first.logins(), 1);
    assert.equal((await stat(file)).mode & 0o777, 0o600);
    const second = client({ tokenStore: fileTokenStore(file) });
    await second.partner.getTenant();
    assert.equal(second.logins(), 0, 'a restart does not log in again');
    assert.match(await readFile(file, 'utf8'), /saved_at/);
  });

  test('an unreadable saved token means a login, not a failure; concurrent first calls read it once', async () => {
    let loads = 0;
    const broken = {
      load: async () => {
        loads++;
        throw new Error('disk gone');
      },
      save: async () => {},
      clear: async () => {},
    };
    const { partner, logins } = client({ tokenStore: broken });
    const reference = (await client().partner.createPayment({ value: 1 })).externalReference;
    await Promise.all(Array.from({ length: 5 }, () => partner.getPayment(reference)));
    assert.equal(loads, 1);
    assert.equal(logins(), 1);
  });

  test('refuses a base URL that is not https', () => {
    assert.throws(() => createPartnerClient({ baseUrl: 'http://127.0.0.1:1', userAgent: 'A (a@b.c)' }), /https/);
  });
});

describe('client: payments', () => {
  test('createPayment carries a transaction_id and returns a valid BR Code', async () => {
    const { partner } = client();
    const created = await partner.createPayment({ value: 10.5, description: 'Pedido 7', name: 'Maria Silva', document: '529.982.247-25' });
    assert.match(created.transactionId, /^[0-9a-f-]{36}$/);
    assert.ok(parseBrCode(created.pixKey).ok);
    const stored = sandbox.state.payments.get(created.externalReference);
    assert.equal(stored?.transactionId, created.transactionId);
  });

  test('checkPayment (HEAD) and getPayment follow the payment to paid', async () => {
    const { partner } = client();
    const { externalReference } = await partner.createPayment({ value: 3 });
    assert.deepEqual(await partner.checkPayment(externalReference), { httpStatus: 202, hint: 'pending' });
    assert.deepEqual((await partner.getPayment(externalReference)).status, { code: PARTNER_STATUS.pending, word: null });
    const payment = sandbox.state.payments.get(externalReference)!;
    sandbox.state.pay(payment);
    assert.deepEqual(await partner.checkPayment(externalReference), { httpStatus: 200, hint: 'paid' });
    assert.deepEqual((await partner.getPayment(externalReference)).status, { code: PARTNER_STATUS.approved, word: null });
  });

  test('an unknown reference: not_found', async () => {
    const { partner } = client();
    assert.equal((await rejection(partner.getPayment('nope'))).kind, 'not_found');
    // HEAD answers with its status only: 404 is an answer, a hint under the assumed mapping.
    assert.deepEqual(await partner.checkPayment('nope'), { httpStatus: 404, hint: 'not_found' });
  });

  const invalid: [string, Record<string, unknown>, string][] = [
    ['value 0.19', { value: 0.19 }, 'value'],
    ['value 10,000.01', { value: 10_000.01 }, 'value'],
    ['description of 51', { value: 1, description: 'd'.repeat(51) }, 'description'],
    ['name without document', { value: 1, name: 'Maria' }, 'document'],
    ['document without name', { value: 1, document: '52998224725' }, 'name'],
    ['CPF with a wrong digit', { value: 1, name: 'Maria', document: '529.982.247-26' }, 'document'],
    ['CNPJ with a wrong digit', { value: 1, name: 'Loja', document: '11.222.333/0001-82' }, 'document'],
    ['expiration 0', { value: 1, expiration: 0 }, 'expiration'],
  ];
  for (const [label, input, field] of invalid) {
    test(`refuses ${label} before sending anything`, async () => {
      const { partner, log } = client();
      const error = await rejection(partner.createPayment(input as { value: number }));
      assert.equal(error.kind, 'invalid_input');
      assert.ok(error.details.fields?.[field], `names ${field}: ${JSON.stringify(error.details.fields)}`);
      assert.equal(log.length, 0, 'no request at all');
      assert.equal(error.message.includes('52998224725') || error.message.includes('529.982.247-26'), false);
    });
  }
  for (const [label, input] of [
    ['value 0.20', { value: 0.2 }],
    ['value 10,000.00', { value: 10_000 }],
    ['description of 50', { value: 1, description: 'd'.repeat(50) }],
    ['a CNPJ', { value: 1, name: 'Loja', document: '11.222.333/0001-81' }],
  ] as const) {
    test(`accepts ${label}`, async () => {
      const created = await client().partner.createPayment(input);
      assert.ok(created.externalReference);
    });
  }
});

describe('client: secrets', () => {
  test('log entries carry no token, key or document', async () => {
    const { partner, log } = client();
    await partner.createPayment({ value: 5, name: 'Maria Silva', document: '529.982.247-25' });
    const text = JSON.stringify(log);
    for (const secret of [...sandbox.state.tokens, DEFAULT_ACCOUNT.accessKey, '529.982.247-25', '52998224725']) {
      assert.equal(text.includes(secret), false);
    }
    assert.deepEqual(Object.keys(log[0]!).sort(), ['attempt', 'durationMs', 'method', 'operation', 'outcome', 'path', 'status']);
  });

  test('redact masks documents and bearer tokens in text', () => {
    assert.equal(redact('doc 529.982.247-25 and 11.222.333/0001-81 and 52998224725'), 'doc [document] and [document] and [document]');
    assert.equal(redact('Authorization: Bearer abc.def'), 'Authorization: Bearer [redacted]');
  });

  test('redact masks alphanumeric CNPJs, punctuated or not, in either case, and leaves words alone', () => {
    assert.equal(
      redact('cnpj 12.ABC.345/01DE-35, 12ABC34501DE35, 12.abc.345/01de-35 and 12 ABC 345 01DE 35 refused'),
      'cnpj [document], [document], [document] and [document] refused',
    );
    assert.equal(redact('{"document":"12345678901B35"}'), '{"document":"[document]"}');
    for (const text of ['the value is not the same 10', 'pix_deposit_1234ABCDEFGH12345', 'ABCDEFGHIJKLMNOPQRSTUVWXYZ12']) assert.equal(redact(text), text);
  });
});

describe('client: transfers and the notification URL', () => {
  const ana = { document: '123.456.789-09', email: 'ana@cliente.example', phone: '+55 (11) 98765-4321', random: '16dc6117-204d-4fbf-8573-ffe03328f598' };

  test('solicitTransferForCustomer with each key type, then checkTransfer follows it to approved', async () => {
    const { partner } = client();
    for (const [pix_key, pix_key_type] of [
      [ana.document, 'CPF'],
      [ana.email, 'EMAIL'],
      [ana.phone, 'TELEFONE'],
      [ana.random, 'CHAVE_ALEATORIA'],
    ] as const) {
      const transfer = await partner.solicitTransferForCustomer({ customer_document: ana.document, value: 10, pix_key, pix_key_type });
      assert.deepEqual(transfer.status, { code: PARTNER_STATUS.pending, word: null }, pix_key_type);
      assert.equal(transfer.pixKeyType, pix_key_type);
      assert.ok(transfer.transactionId, 'a transaction_id was sent');
    }
    const transfer = await partner.transferToKey({ value: 49_000, pix_key: ana.email });
    sandbox.state.clock.advance(10 * 60 * 1000);
    const settled = await partner.checkTransfer(transfer.externalReference);
    assert.equal(settled.status?.code, PARTNER_STATUS.approved);
  });

  const refusals: [string, Parameters<ReturnType<typeof createPartnerClient>['solicitTransferForCustomer']>[0], string][] = [
    ['KYC pending', { customer_document: '234.567.891-73', value: 5, pix_key: 'bruno@cliente.example', pix_key_type: 'EMAIL' }, 'kyc_not_approved'],
    ['someone else’s key', { customer_document: ana.document, value: 5, pix_key: 'bruno@cliente.example', pix_key_type: 'EMAIL' }, 'key_owner_mismatch'],
    ['the bank refuses', { customer_document: '456.789.123-64', value: 5, pix_key: 'diego@cliente.example', pix_key_type: 'EMAIL' }, 'bank_refused'],
  ];
  for (const [label, input, reason] of refusals) {
    test(`refused: ${label} (reason ${reason}), without the document in the message`, async () => {
      const error = await rejection(client().partner.solicitTransferForCustomer(input));
      assert.equal(error.kind, 'refused');
      assert.equal(error.details.reason, reason);
      assert.equal(error.message.includes(input.customer_document), false);
    });
  }

  const invalidTransfers: [string, Record<string, unknown>, string][] = [
    ['value 0.19', { value: 0.19 }, 'value'],
    ['value 49,000.01', { value: 49_000.01 }, 'value'],
    ['a CPF key with a wrong digit', { pix_key: '123.456.789-08', pix_key_type: 'CPF' }, 'pix_key'],
    ['an e-mail key without a dot', { pix_key: 'ana@cliente', pix_key_type: 'EMAIL' }, 'pix_key'],
    ['a phone key without +55', { pix_key: '11987654321', pix_key_type: 'TELEFONE' }, 'pix_key'],
    ['a phone key with 10 digits', { pix_key: '+55 11 8765-4321', pix_key_type: 'TELEFONE' }, 'pix_key'],
    ['a random key that is not a UUID', { pix_key: '16dc6117-204d-4fbf-8573', pix_key_type: 'CHAVE_ALEATORIA' }, 'pix_key'],
    ['an unknown key type', { pix_key_type: 'PHONE' }, 'pix_key_type'],
    ['a document with a wrong digit', { customer_document: '123.456.789-00' }, 'customer_document'],
  ];
  for (const [label, change, field] of invalidTransfers) {
    test(`refuses ${label} before sending anything`, async () => {
      const { partner, log } = client();
      const input = { customer_document: ana.document, value: 5, pix_key: ana.email, pix_key_type: 'EMAIL', ...change };
      const error = await rejection(partner.solicitTransferForCustomer(input as never));
      assert.equal(error.kind, 'invalid_input');
      assert.ok(error.details.fields?.[field], `names ${field}: ${JSON.stringify(error.details.fields)}`);
      assert.equal(log.length, 0);
    });
  }
  test('accepts the bounds 0.20 and 49,000.00', async () => {
    const { partner } = client();
    for (const value of [0.2, 49_000]) {
      const transfer = await partner.solicitTransferForCustomer({ customer_document: ana.document, value, pix_key: ana.email, pix_key_type: 'EMAIL' });
      assert.equal(transfer.value, value);
    }
  });
  test('transferToKey refuses a key of no known form', async () => {
    const error = await rejection(client().partner.transferToKey({ value: 5, pix_key: 'not a key' }));
    assert.equal(error.kind, 'invalid_input');
    assert.ok(error.details.fields?.pix_key);
  });

  test('setNotificationUrl in both formats', async () => {
    const { partner } = client();
    assert.deepEqual(await partner.setNotificationUrl({ notification_url: 'https://shop.example/pix/hook' }), {
      notificationUrl: 'https://shop.example/pix/hook',
      notifyType: 1,
      confirmed: true,
    });
    // notify_type is sent only when chosen: the service's default applies otherwise.
    assert.equal(sandbox.state.webhooks.notification?.notifyTypeGiven, false);
    assert.deepEqual(await partner.setNotificationUrl({ notification_url: 'https://shop.example/pix/hook', notify_type: 2 }), {
      notificationUrl: 'https://shop.example/pix/hook',
      notifyType: 2,
      confirmed: true,
    });
    const error = await rejection(partner.setNotificationUrl({ notification_url: 'ftp://x' }));
    assert.equal(error.kind, 'invalid_input');
  });
});

describe('client: faults', () => {
  const PAYMENTS = '/api/v2/wallet/partner/transactions';
  const fault = (input: Partial<Parameters<RunningSandbox['state']['faults']['add']>[0]>) =>
    sandbox.state.faults.add({ kind: 'server_error', rate: 1, path_prefix: null, latency_ms: null, status: 503, ...input });

  test('a transfer create answered a 4xx that names no refusal (409, 423, an HTML 400, 404): outcome unknown, with the transaction_id sent; never retried', async () => {
    const TRANSFER = '/api/v3.1/wallet/partner/pix-key/transfer';
    for (const [status, body] of [
      [409, null],
      [423, null],
      [400, '<html><body><h1>400 Bad Request</h1></body></html>'],
      [404, null],
    ] as const) {
      fault({ path_prefix: TRANSFER, status, body, times: 1 });
      const { partner, log } = client();
      const error = await rejection(partner.transferToKey({ value: 5, pix_key: 'ana@cliente.example', transaction_id: `tx-4xx-${status}` }));
      assert.deepEqual(
        [error.kind, error.details.status, error.details.outcomeUnknown, error.details.transactionId],
        ['outcome_unknown', status, true, `tx-4xx-${status}`],
      );
      assert.equal(log.filter((e) => e.operation === 'transferToKey').length, 1, 'sent once');
    }
    // One the caller gave no transaction_id for names the one the client sent.
    fault({ path_prefix: TRANSFER, status: 409, times: 1 });
    const error = await rejection(client().partner.transferToKey({ value: 5, pix_key: 'ana@cliente.example' }));
    assert.match(error.details.transactionId ?? '', /^[0-9a-f-]{36}$/);
  });

  test('a read is retried after a 5xx and then succeeds', async () => {
    const { partner: setup } = client();
    const { externalReference } = await setup.createPayment({ value: 1 });
    const f = fault({ path_prefix: `${PAYMENTS}/${externalReference}` });
    const { partner, log } = client({
      log: (entry) => {
        log.push(entry);
        if (entry.operation === 'getPayment' && entry.status === 503) sandbox.state.faults.remove(f.id);
      },
    });
    try {
      const record = await partner.getPayment(externalReference);
      assert.equal(record.externalReference, externalReference);
      assert.deepEqual(
        log.filter((e) => e.operation === 'getPayment').map((e) => e.status),
        [503, 200],
      );
    } finally {
      sandbox.state.faults.reset();
    }
  });

  test('a read that keeps failing gives up after 3 attempts', async () => {
    const { partner, log } = client();
    await partner.getTenant();
    fault({ path_prefix: PAYMENTS, status: 502 });
    try {
      const error = await rejection(partner.getPayment('whatever'));
      assert.equal(error.kind, 'unavailable');
      assert.equal(error.details.status, 502);
      assert.equal(log.filter((e) => e.operation === 'getPayment').length, 3);
    } finally {
      sandbox.state.faults.reset();
    }
  });

  test("the backoff, its jitter, the attempts' durations and the transaction ids come from the client's runtime", async () => {
    const slept: number[] = [];
    let ticks = 0;
    let ids = 0;
    const runtime = {
      clock: { ...REAL_CLOCK, monotonic: () => (ticks += 1000), sleep: async (ms: number) => void slept.push(ms) },
      random: { ...CRYPTO_RANDOM, fraction: () => 0.5, uuid: () => `00000000-0000-4000-8000-${String(++ids).padStart(12, '0')}` },
    };
    const { partner, log } = client({ runtime });
    await partner.getTenant();
    fault({ path_prefix: PAYMENTS, status: 502 });
    try {
      await rejection(partner.getPayment('whatever'));
    } finally {
      sandbox.state.faults.reset();
    }
    // backoffMs 10, doubled each time, half of it jittered: 5 + 0.5 * 5, then 10 + 0.5 * 10.
    assert.deepEqual(slept, [7.5, 15]);
    assert.deepEqual(
      log.filter((e) => e.operation === 'getPayment').map((e) => e.durationMs),
      [1000, 1000, 1000],
    );
    await partner.createPayment({ value: 1 });
    assert.equal([...sandbox.state.payments.values()].filter((p) => p.transactionId === '00000000-0000-4000-8000-000000000001').length, 1);
  });

  test('a read that times out is retried', async () => {
    const { partner: setup } = client();
    const { externalReference } = await setup.createPayment({ value: 1 });
    const f = fault({ kind: 'latency', latency_ms: 2000, status: null, path_prefix: `${PAYMENTS}/${externalReference}` });
    const { partner, log } = client({
      timeoutMs: 300,
      log: (entry) => {
        log.push(entry);
        if (entry.operation === 'getPayment' && entry.status === 0) sandbox.state.faults.remove(f.id);
      },
    });
    try {
      await partner.getTenant();
      const record = await partner.getPayment(externalReference);
      assert.equal(record.externalReference, externalReference);
      assert.deepEqual(
        log.filter((e) => e.operation === 'getPayment').map((e) => e.status),
        [0, 200],
      );
    } finally {
      sandbox.state.faults.reset();
    }
  });

  test('the login is retried after a 5xx', async () => {
    const f = fault({ path_prefix: '/api/v2/identity/partner/login' });
    const { partner, log } = client({
      log: (entry) => {
        log.push(entry);
        if (entry.operation === 'login' && entry.status === 503) sandbox.state.faults.remove(f.id);
      },
    });
    try {
      await partner.getTenant();
      assert.deepEqual(
        log.filter((e) => e.operation === 'login').map((e) => e.status),
        [503, 200],
      );
    } finally {
      sandbox.state.faults.reset();
    }
  });

  test('a create that fails with a 5xx is never repeated, and says its outcome is unknown', async () => {
    const { partner, log } = client();
    await partner.getTenant();
    fault({ path_prefix: `${PAYMENTS}/generate-anonymous-pix` });
    try {
      const error = await rejection(partner.createPayment({ value: 4, transaction_id: 'order-4711' }));
      assert.equal(error.kind, 'unavailable');
      assert.equal(error.details.outcomeUnknown, true);
      assert.equal(error.details.transactionId, 'order-4711');
      assert.equal(log.filter((e) => e.operation === 'createPayment').length, 1, 'one attempt only');
    } finally {
      sandbox.state.faults.reset();
    }
  });

  test('a create that times out is never repeated, and can be reconciled by its transaction_id', async () => {
    const { partner, log } = client({ timeoutMs: 300 });
    await partner.getTenant();
    fault({ kind: 'late_answer', latency_ms: 1000, status: null, path_prefix: `${PAYMENTS}/generate-anonymous-pix` });
    try {
      const error = await rejection(partner.createPayment({ value: 4 }));
      assert.equal(error.kind, 'timeout');
      assert.equal(error.details.outcomeUnknown, true);
      assert.equal(log.filter((e) => e.operation === 'createPayment').length, 1, 'one attempt only');
      // The service did act, but answered too late: the transaction_id finds that one payment.
      const transactionId = error.details.transactionId;
      assert.equal([...sandbox.state.payments.values()].filter((p) => p.transactionId === transactionId).length, 1);
    } finally {
      sandbox.state.faults.reset();
    }
  });

  test('an answer that is not JSON is an error naming the problem, not a crash', async () => {
    const { partner } = client();
    const { externalReference } = await partner.createPayment({ value: 1 });
    fault({ kind: 'malformed_json', status: null, path_prefix: PAYMENTS });
    try {
      const error = await rejection(partner.getPayment(externalReference));
      assert.equal(error.kind, 'unavailable');
    } finally {
      sandbox.state.faults.reset();
    }
  });
});
