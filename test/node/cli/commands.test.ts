/**
 * The command line, run in-process against the sandbox over HTTPS, and as real processes where
 * signals and other processes matter (sandbox, serve).
 */
import { DIALECT_NAMES } from '../../../server/sandbox/dialects.ts';
import assert from 'node:assert/strict';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { request } from 'node:https';
import { connect, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { parseBrCode } from '../../../src/shared/brcode.ts';
import { LIMITS } from '../../../src/shared/limits.ts';
import { TransferView } from '../../../src/shared/payouts.ts';
import { runCli } from '../../support/cli.ts';
import { SANDBOX_DEFAULTS } from '../../../server/config/index.ts';
import { disputeOutcome, paymentOutcome } from '../../../server/domain/outcomes.ts';
import { openSqliteStore } from '../../../server/store/sqlite/sqlite-store.ts';
import { startSandbox, type RunningSandbox } from '../../../server/sandbox/server.ts';
import { DEFAULT_ACCOUNT } from '../../../server/sandbox/state.ts';
import { sandboxPartnerEnv } from '../../support/cluster-harness.ts';
import { waitFor } from '../../support/checks.ts';
import { checkoutRecord, paymentRecord } from '../../support/records.ts';

const BIN = fileURLToPath(new URL('../../../bin/pix-checkout.mjs', import.meta.url));

let sandbox: RunningSandbox;
let dir: string;
let env: Record<string, string>;

before(async () => {
  sandbox = await startSandbox();
  dir = await mkdtemp(join(tmpdir(), 'pix-cli-'));
  await writeFile(join(dir, 'ca.pem'), sandbox.ca);
  env = {
    ...sandboxPartnerEnv(sandbox.url, join(dir, 'ca.pem')),
    PIX_TOKEN_FILE: join(dir, 'token.json'),
    PIX_DATA_DIR: join(dir, 'data'),
  };
});
after(async () => {
  await sandbox.close();
  await rm(dir, { recursive: true, force: true });
});

function cli(args: string[], overrides: Record<string, string | undefined> = {}) {
  return runCli(args, { ...env, ...overrides });
}

describe('cli: help', () => {
  test('--help lists every command, and the exit codes', async () => {
    const { code, out } = await cli(['--help']);
    assert.equal(code, 0);
    for (const command of [
      'sandbox',
      'serve',
      'login',
      'doctor',
      'webhook set',
      'webhook received',
      'payment create',
      'payment status',
      'payment show',
      'transfer create',
      'transfer status',
      'deliveries list',
      'deliveries replay',
      'disputes [list]',
      'disputes resolve',
    ]) {
      assert.ok(out.includes(`  ${command} `), command);
    }
    assert.match(out, /Exit codes: 0 done; 1 the service refused or failed; 2 bad arguments or configuration/);
    assert.match(out, /local\s+sandbox \(pix-checkout sandbox/);
  });
  for (const command of ['sandbox', 'serve', 'login', 'doctor', 'webhook', 'payment', 'transfer', 'deliveries', 'disputes']) {
    test(`${command} --help`, async () => {
      const { code, out } = await cli([command, '--help']);
      assert.equal(code, 0);
      assert.match(out, new RegExp(`^Usage:[\\s\\S]*pix-checkout ${command}`));
    });
  }
});

describe('cli: usage errors exit 2 with a clear message', () => {
  const cases: [string[], RegExp][] = [
    [['frobnicate'], /unknown command frobnicate/],
    [['payment'], /unknown payment command \(none\)/],
    [['payment', 'create'], /--value is required/],
    [['payment', 'create', '--value', '10,50'], /--value must be an amount in reais like 10\.50/],
    [['payment', 'create', '--value', '1', '--expiration', '1.5'], /--expiration must be whole seconds/],
    [['payment', 'show'], /payment show needs the reference/],
    [['payment', 'create', '--value', '1', '--bogus'], /Unknown option '--bogus'/],
    [['webhook', 'set'], /webhook set needs the URL/],
    [['webhook', 'set', 'https://x.example/h', '--format', 'newest'], /--format must be old or new/],
    [['transfer', 'create', '--value', '1'], /--key is required/],
    [['transfer', 'create', '--value', '1', '--key', 'a@b.co', '--key-type', 'PHONE'], /--key-type must be one of CPF, EMAIL, TELEFONE, CHAVE_ALEATORIA/],
    [['sandbox', '--bogus'], /Unknown option '--bogus'/],
    [['serve', '--port', '70000'], /--port must be a whole number from 0 to 65535/],
  ];
  for (const [args, message] of cases) {
    test(args.join(' '), async () => {
      const { code, err } = await cli(args);
      assert.equal(code, 2);
      assert.match(err, message);
    });
  }
  test('configuration problems are listed all at once', async () => {
    const { code, err } = await cli(['login'], { PIX_BASE_URL: 'http://plain.example', PIX_USER_AGENT: 'nope', PIX_ACCESS_KEY: undefined });
    assert.equal(code, 2);
    assert.match(err, /PIX_BASE_URL must be an https:\/\/ URL/);
    assert.match(err, /PIX_USER_AGENT must be "Company \(contact@example\.com\)"/);
    assert.match(err, /PIX_EMAIL and PIX_ACCESS_KEY go together/);
  });
});

describe('cli: commands against the sandbox', () => {
  test('login prints the tenant and never the token unless asked', async () => {
    const plain = await cli(['login']);
    assert.equal(plain.code, 0, plain.err);
    assert.match(plain.out, new RegExp(`tenant id\\s+${DEFAULT_ACCOUNT.tenant.id}`));
    for (const token of sandbox.state.tokens) assert.equal(plain.out.includes(token), false);
    const shown = await cli(['login', '--show-token', '--json']);
    const data = JSON.parse(shown.out) as { token: string; tenant: { id: string } };
    assert.ok(sandbox.state.tokens.has(data.token), 'the printed token is a real one');
  });

  test('payment create, status and show', async () => {
    const created = await cli(['payment', 'create', '--value', '12.30', '--description', 'Pedido 9', '--expiration', '600', '--json']);
    assert.equal(created.code, 0, created.err);
    const payment = JSON.parse(created.out) as {
      reference: string;
      brcode: string;
      value: number;
      status: { meaning: string };
      created_at: string;
      expires_at: string;
    };
    assert.ok(parseBrCode(payment.brcode).ok, 'parseBrCode(payment.brcode).ok');
    assert.equal(payment.value, 12.3);
    assert.equal(payment.status.meaning, 'pending');
    assert.equal(Date.parse(payment.expires_at) - Date.parse(payment.created_at), 600_000);
    const status = await cli(['payment', 'status', payment.reference]);
    assert.match(status.out, /status\s+pending \(1\) \(from the details/);
    assert.match(status.out, /quick check\s+HTTP 202 \(pending under the assumed mapping: a hint only\)/);
    sandbox.state.pay(sandbox.state.payments.get(payment.reference)!);
    assert.match((await cli(['payment', 'status', payment.reference])).out, /status\s+approved \(2\)/);
    const shown = await cli(['payment', 'show', payment.reference]);
    assert.match(shown.out, /value\s+12\.30/);
    assert.match(shown.out, /status\s+approved \(2\)/);
  });

  test('an unknown reference exits 1', async () => {
    const { code, err } = await cli(['payment', 'show', 'nope']);
    assert.equal(code, 1);
    assert.match(err, /not found/);
  });
});

describe('cli: transfers and the webhook URL', () => {
  test('transfer create to a key, stored in the proxy; then status from the partner and from the store', async () => {
    const created = await cli(['transfer', 'create', '--value', '25', '--key', 'ana@cliente.example', '--reference', 'seller-7', '--json']);
    assert.equal(created.code, 0, created.err);
    const transfer = TransferView.parse(JSON.parse(created.out));
    assert.equal(transfer.status, 'pending');
    assert.equal(transfer.reference, 'seller-7');
    assert.equal(transfer.pix_key, 'a***@cliente.example');
    assert.match((JSON.parse(created.out) as { idempotency_key: string }).idempotency_key, /^[0-9a-f-]{36}$/);
    sandbox.state.clock.advance(10 * 60 * 1000);
    const status = await cli(['transfer', 'status', transfer.partner_reference!]);
    assert.match(status.out, /status\s+approved \(2\)/);
    const stored = await cli(['transfer', 'status', transfer.transfer_id, '--json']);
    assert.equal(TransferView.parse(JSON.parse(stored.out)).transfer_id, transfer.transfer_id);
    const listed = await cli(['transfer', 'list', '--json']);
    assert.ok(
      (JSON.parse(listed.out) as TransferView[]).some((t) => t.transfer_id === transfer.transfer_id),
      '(JSON.parse(listed.out) as TransferView[]).some((t) => t.transfer_id =',
    );
  });
  test('the same --idempotency-key and options: the same transfer, sent once; other options: exit 1 naming the key', async () => {
    const before = sandbox.state.transfers.size;
    const args = ['transfer', 'create', '--value', '3', '--key', 'ana@cliente.example', '--idempotency-key', 'cli-once-1', '--json'];
    const first = await cli(args);
    const again = await cli(args);
    assert.equal(first.code, 0, first.err);
    assert.equal(TransferView.parse(JSON.parse(again.out)).transfer_id, TransferView.parse(JSON.parse(first.out)).transfer_id);
    assert.equal(sandbox.state.transfers.size, before + 1);
    const other = await cli(['transfer', 'create', '--value', '4', '--key', 'ana@cliente.example', '--idempotency-key', 'cli-once-1']);
    assert.equal(other.code, 1);
    assert.match(other.err, /Idempotency-Key was used for another request/);
  });
  test('refund a paid checkout: part, then the rest, then nothing is left (exit 1)', async () => {
    const store = openSqliteStore({ dataDir: env.PIX_DATA_DIR!, cacheSize: 0 });
    const at = Date.now();
    const id = 'co_CLIrefundCLIrefundCLIref';
    await store.checkouts.create(
      checkoutRecord({ id, orderId: 'cli-refund-1', valueCents: 1500, description: null, name: null, document: null, createdAt: at }),
    );
    const payment = paymentRecord('cli-refund-pay', at, { checkoutId: id, valueCents: 1500 });
    await store.checkouts.attachPayment(id, payment, 0, null);
    await store.payments.updateStatus(payment.reference, 2, true, at, paymentOutcome);
    await store.close();
    const part = await cli(['refund', id, '--value', '5', '--key', 'ana@cliente.example', '--json']);
    assert.equal(part.code, 0, part.err);
    assert.equal(TransferView.parse(JSON.parse(part.out)).checkout_id, id);
    const rest = await cli(['refund', id, '--key', 'ana@cliente.example', '--json']);
    assert.equal(TransferView.parse(JSON.parse(rest.out)).value, 10);
    const none = await cli(['refund', id, '--key', 'ana@cliente.example']);
    assert.equal(none.code, 1);
    assert.match(none.err, /refunded in full/);
  });
  test('refund: a checkout not paid exits 1; a bad checkout id exits 2', async () => {
    const bad = await cli(['refund', 'nope', '--key', 'ana@cliente.example']);
    assert.equal(bad.code, 2);
    assert.match(bad.err, /refund needs the checkout id/);
    const missing = await cli(['refund', 'co_AAAAAAAAAAAAAAAAAAAAAAAA', '--key', 'ana@cliente.example']);
    assert.equal(missing.code, 1);
    assert.match(missing.err, /No such checkout/);
  });
  test('transfer create for a customer masks the CPF key', async () => {
    const { code, out } = await cli(['transfer', 'create', '--value', '25', '--key', '123.456.789-09', '--key-type', 'CPF', '--document', '123.456.789-09']);
    assert.equal(code, 0);
    assert.match(out, /key\s+123\.\*\*\*\.\*\*\*-09 \(CPF\)/);
    assert.equal(out.includes('456.789'), false);
  });
  test('a KYC refusal exits 1 with the reason', async () => {
    const { code, err } = await cli(['transfer', 'create', '--value', '25', '--key', 'bruno@cliente.example', '--document', '234.567.891-73']);
    assert.equal(code, 1);
    assert.match(err, /reason: kyc_not_approved/);
    assert.equal(err.includes('234.567.891-73'), false);
  });
  test('webhook set --format new', async () => {
    const { code, out } = await cli(['webhook', 'set', 'https://shop.example/hook', '--format', 'new']);
    assert.equal(code, 0);
    assert.match(out, /format\s+new/);
  });
});

describe('cli: webhook received', () => {
  test('lists the notifications the proxy kept but could not act on, with their bodies, from its store', async () => {
    const dataDir = join(dir, 'received');
    const store = openSqliteStore({ dataDir, cacheSize: 0 });
    await store.webhookEvents.addRejected('{"type": "payment", ', Date.UTC(2030, 0, 1), 'unreadable');
    const id = await store.webhookEvents.add('{"external_reference":"not-ours"}', Date.UTC(2030, 0, 2));
    await store.webhookEvents.markProcessed(id, Date.UTC(2030, 0, 2), 'unknown_reference');
    await store.webhookEvents.add('{"external_reference":"waiting"}', Date.UTC(2030, 0, 3));
    await store.webhookEvents.addRejected('[{"external_reference":"a"},{"external_reference":"b"}]', Date.UTC(2030, 0, 4), 'ambiguous');
    await store.close();
    const all = await cli(['webhook', 'received', '--json'], { PIX_DATA_DIR: dataDir });
    assert.equal(all.code, 0, all.err);
    const rows = JSON.parse(all.out) as { result: string; body: string }[];
    assert.deepEqual(
      rows.map((r) => [r.result, r.body]),
      [
        ['ambiguous', '[{"external_reference":"a"},{"external_reference":"b"}]'],
        ['unknown_reference', '{"external_reference":"not-ours"}'],
        ['unreadable', '{"type": "payment", '],
      ],
    );
    const unreadable = await cli(['webhook', 'received', '--unreadable'], { PIX_DATA_DIR: dataDir });
    assert.match(unreadable.out, /#1 {2}2030-01-01T00:00:00.000Z {2}unreadable\n {2}\{"type": "payment", /);
    assert.match(unreadable.out, /ambiguous\n {2}\[\{"external_reference":"a"\}/);
    assert.equal(unreadable.out.includes('not-ours'), false);
  });
});

describe('cli: disputes', () => {
  test('lists the open disputes from the store, resolves one with a note (then it is gone), and says when none is open', async () => {
    const dataDir = join(dir, 'disputes');
    const store = openSqliteStore({ dataDir, cacheSize: 0 });
    const at = Date.UTC(2030, 0, 1);
    await store.payments.insert(paymentRecord('disputed-ref', at));
    await store.payments.updateStatus('disputed-ref', 2, true, at, paymentOutcome);
    await store.disputes.open({ reference: 'disputed-ref', notified: 'canceled', webhookEventId: 3, at: at + 1000 }, disputeOutcome);
    await store.close();
    const env = { PIX_DATA_DIR: dataDir };

    const listed = await cli(['disputes'], env);
    assert.equal(listed.code, 0, listed.err);
    assert.match(listed.out, /^disputed-ref {2}recorded paid {6}notified canceled {2}checkout - {2}since 2030-01-01T00:00:01.000Z$/);
    const json = await cli(['disputes', 'list', '--json'], env);
    assert.deepEqual(JSON.parse(json.out), [
      {
        reference: 'disputed-ref',
        checkout_id: null,
        recorded_status: 'paid',
        notified_status: 'canceled',
        webhook_event: 3,
        opened_at: '2030-01-01T00:00:01.000Z',
      },
    ]);

    const resolved = await cli(['disputes', 'resolve', 'disputed-ref', '--note', 'checked with the partner: paid'], env);
    assert.equal(resolved.code, 0, resolved.err);
    assert.match(resolved.out, /Dispute of disputed-ref resolved; refunds of its checkout are accepted again\./);
    assert.equal((await cli(['disputes'], env)).out, 'No open disputes.');
    const again = await cli(['disputes', 'resolve', 'disputed-ref', '--note', 'twice'], env);
    assert.deepEqual([again.code, again.err], [1, 'pix-checkout: no open dispute of disputed-ref']);

    const check = openSqliteStore({ dataDir, cacheSize: 0 });
    try {
      assert.deepEqual(await check.disputes.listOpen(10), []);
      assert.equal((await check.payments.get('disputed-ref'))?.partnerStatus, 2, 'the final status stands');
    } finally {
      await check.close();
    }
  });
});

describe('cli: as a real process', () => {
  test('bin/pix-checkout.mjs --help exits 0', async () => {
    const { stdout } = await promisify(execFile)(process.execPath, ['bin/pix-checkout.mjs', '--help']);
    assert.match(stdout, /^Usage: pix-checkout <command>/);
  });
  test('a usage error exits 2', async () => {
    await assert.rejects(promisify(execFile)(process.execPath, ['bin/pix-checkout.mjs', 'nope']), (error: { code: number; stderr: string }) => {
      assert.equal(error.code, 2);
      assert.match(error.stderr, /unknown command nope/);
      return true;
    });
  });
});

/** A TCP server that counts connections: pointed at, it proves a command sent nothing. */
async function countingServer() {
  let connections = 0;
  const server = createServer((socket) => {
    connections++;
    socket.destroy();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `https://127.0.0.1:${port}`,
    connections: () => connections,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

describe('cli: arguments outside the shared limits exit 2, naming the option, and nothing is sent', () => {
  const { min, max } = LIMITS.paymentValue;
  const cases: [string[], RegExp][] = [
    [['payment', 'create', '--value', '0.01'], /--value must be at least 0\.20/],
    [['payment', 'create', '--value', '20000'], /--value must be at most 10,000\.00/],
    [['payment', 'create', '--value', String(min - 0.01)], /--value must be at least/],
    [['payment', 'create', '--value', String(max + 0.01)], /--value must be at most/],
    [['payment', 'create', '--value', '5', '--description', 'x'.repeat(LIMITS.descriptionMaxLength + 1)], /--description must be at most 50 characters/],
    [['payment', 'create', '--value', '5', '--description', 'linha\nquebrada'], /--description must not contain control characters/],
    [['payment', 'create', '--value', '5', '--name', 'Maria'], /--name and --document go together \(--document is missing\)/],
    [['payment', 'create', '--value', '5', '--name', 'Maria', '--document', '529.982.247-26'], /--document must be a valid CPF or CNPJ/],
    [['payment', 'create', '--value', '5', '--transaction-id', 't'.repeat(101)], /--transaction-id must be at most 100 characters/],
    [['payment', 'show', 'r'.repeat(LIMITS.referenceMaxLength + 1)], /<reference> must be at most 200 characters/],
    [['payment', 'status', ' padded'], /<reference> must be text without control characters or spaces at its ends/],
    [['webhook', 'set', 'not a url'], /<url> must be an http\(s\) URL/],
    [['doctor', '--webhook-url', 'ftp://shop.example/hook'], /--webhook-url must be an http\(s\) URL/],
    [['webhook', 'received', '--limit', '0'], /--limit must be a positive whole number/],
    [['deliveries', 'list', '--limit', 'abc'], /--limit must be a positive whole number/],
    [['disputes', 'close'], /unknown disputes command close; use list or resolve/],
    [['disputes', 'resolve'], /disputes resolve needs the reference/],
    [['disputes', 'resolve', 'ref-1'], /disputes resolve needs --note/],
    [['disputes', 'resolve', 'ref-1', '--note', '  '], /disputes resolve needs --note/],
  ];
  let partner: Awaited<ReturnType<typeof countingServer>>;
  before(async () => (partner = await countingServer()));
  after(() => partner.close());
  for (const [args, message] of cases) {
    test(args.map((a) => (a.length > 30 ? `${a.slice(0, 10)}…` : JSON.stringify(a).slice(1, -1))).join(' '), async () => {
      const { code, err } = await cli(args, { PIX_BASE_URL: partner.url, PIX_DATA_DIR: join(dir, 'never') });
      assert.equal(code, 2, err);
      assert.match(err, message);
      assert.equal(err.includes('529.982.247-26'), false, 'a document is never echoed');
      assert.equal(partner.connections(), 0, 'nothing was sent');
      assert.equal(existsSync(join(dir, 'never')), false, 'no store was opened');
    });
  }

  test("the partner client's own input check (PartnerError invalid_input) exits 2 too, as a backstop", async () => {
    // transfer create does not check its value itself: the client refuses it before sending.
    const { code, err } = await cli(['transfer', 'create', '--value', '0.01', '--key', 'ana@cliente.example'], { PIX_BASE_URL: partner.url });
    assert.equal(code, 2, err);
    assert.match(err, /value: must be at least 0\.20|--value must be at least 0\.20/);
    assert.equal(partner.connections(), 0, 'nothing was sent');
  });

  test('the service refusing exits 1', async () => {
    const { code, err } = await cli(['transfer', 'create', '--value', '25', '--key', 'carla@cliente.example', '--document', '345.678.912-28']);
    assert.equal(code, 1, err);
    assert.match(err, /reason: kyc_not_approved/);
  });
});

const SNAKE_CASE = /^[a-z][a-z0-9]*(?:_[a-z0-9]+)*$/;

/** Every key of a parsed JSON value, at every depth, that is not snake_case, with its path. */
function notSnakeCase(value: unknown, path = '$'): string[] {
  if (Array.isArray(value)) return value.flatMap((item, i) => notSnakeCase(item, `${path}[${i}]`));
  if (value === null || typeof value !== 'object') return [];
  return Object.entries(value).flatMap(([key, inner]) => [...(SNAKE_CASE.test(key) ? [] : [`${path}.${key}`]), ...notSnakeCase(inner, `${path}.${key}`)]);
}

/** How many keys a parsed JSON value has, at every depth: a check of a keyless output proves nothing. */
function keyCount(value: unknown): number {
  if (Array.isArray(value)) return value.reduce((n: number, item) => n + keyCount(item), 0);
  if (value === null || typeof value !== 'object') return 0;
  return Object.values(value).reduce((n: number, inner) => n + 1 + keyCount(inner), 0);
}

describe('cli: one casing in every --json output', () => {
  test('snake_case keys at every depth (the proxy API field names), for every command against the sandbox', async () => {
    assert.deepEqual(notSnakeCase({ ok_key: [{ fine: 1, badKey: { Worse: 2 } }] }), ['$.ok_key[0].badKey', '$.ok_key[0].badKey.Worse'], 'the check itself');

    // A store with what the store's commands list: a notification kept unread, a delivery.
    const dataDir = join(dir, 'json-store');
    const store = openSqliteStore({ dataDir, cacheSize: 0 });
    await store.webhookEvents.addRejected('{"type": "payment", ', Date.UTC(2030, 0, 1), 'unreadable');
    const at = Date.UTC(2030, 0, 1);
    await store.payments.insert(paymentRecord('json-ref', at));
    await store.payments.updateStatus('json-ref', 2, true, at, paymentOutcome);
    const [delivery] = await store.outbox.list();
    await store.disputes.open({ reference: 'json-ref', notified: 'canceled', webhookEventId: null, at }, disputeOutcome);
    await store.close();

    const created = await cli(['payment', 'create', '--value', '7.50', '--name', 'Maria Silva', '--document', '529.982.247-25', '--json']);
    assert.equal(created.code, 0, created.err);
    const reference = (JSON.parse(created.out) as { reference: string }).reference;
    sandbox.state.pay(sandbox.state.payments.get(reference)!);

    const commands: [string[], Record<string, string>?][] = [
      [['login']],
      [['login', '--show-token']],
      [['doctor', '--create', '--webhook-url', 'https://shop.example/hook']],
      [['webhook', 'set', 'https://shop.example/hook', '--format', 'new']],
      [['payment', 'create', '--value', '7.50', '--description', 'Pedido 10']],
      [['payment', 'status', reference]],
      [['payment', 'show', reference]],
      [['webhook', 'received'], { PIX_DATA_DIR: dataDir }],
      [['deliveries', 'list'], { PIX_DATA_DIR: dataDir }],
      [['deliveries', 'replay', String(delivery!.id)], { PIX_DATA_DIR: dataDir }],
      [['disputes', 'list'], { PIX_DATA_DIR: dataDir }],
      [['transfer', 'create', '--value', '2', '--key', 'ana@cliente.example', '--reference', 'json-1']],
      [['transfer', 'list']],
    ];
    for (const [args, overrides] of commands) {
      const { code, out, err } = await cli([...args, '--json'], overrides);
      assert.equal(code, 0, `${args.join(' ')}: ${err}`);
      const parsed = JSON.parse(out) as unknown;
      assert.ok(keyCount(parsed) > 0, `${args.join(' ')} printed keys`);
      assert.deepEqual(notSnakeCase(parsed), [], `${args.join(' ')}: every key snake_case`);
    }
  });
});

/** A command as a real process (bin/pix-checkout.mjs), its output collected as it comes. */
function spawnCli(args: string[], options: { cwd: string; env?: NodeJS.ProcessEnv }) {
  const child: ChildProcess = spawn(process.execPath, [BIN, ...args], { cwd: options.cwd, env: options.env ?? process.env, stdio: ['ignore', 'pipe', 'pipe'] });
  const out = { stdout: '', stderr: '' };
  child.stdout!.on('data', (chunk: Buffer) => (out.stdout += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (out.stderr += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  return {
    child,
    out,
    exited,
    /** The stream's text once it matches; fails when the process ends first. */
    until: (stream: 'stdout' | 'stderr', pattern: RegExp) =>
      waitFor(`${pattern} on ${stream}`, () => {
        if (pattern.test(out[stream])) return out[stream];
        if (child.exitCode !== null) assert.fail(`exited ${child.exitCode} first: ${out.stdout}${out.stderr}`);
        return undefined;
      }),
    kill: () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    },
  };
}

/** GET over HTTPS trusting `ca`, with no connection kept. */
function httpsGet(url: string, ca: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    request(url, { ca, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    })
      .on('error', reject)
      .end();
  });
}

/** True once nothing listens on the port any more. */
function refused(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', () => resolve(true));
  });
}

/** `NAME=value NAME='a value'` as the sandbox prints what to set. */
function settingsFrom(line: string): Record<string, string> {
  return Object.fromEntries([...line.matchAll(/([A-Z_]+)=(?:'([^']*)'|(\S+))/g)].map((m) => [m[1]!, m[2] ?? m[3]!]));
}

describe('cli: pix-checkout sandbox, as a real process', () => {
  let cwd: string;
  // Its own settings come from the flags here, never from the environment the tests run in.
  const env = { ...process.env };
  delete env.SANDBOX_PORT;
  delete env.PIX_SANDBOX_DIALECT;
  before(async () => (cwd = await mkdtemp(join(tmpdir(), 'pix-cli-sandbox-'))));
  after(() => rm(cwd, { recursive: true, force: true }));

  test('prints the base URL, the control API, the certificate and the credentials, which work; SIGTERM stops it, exit 0', async () => {
    const run = spawnCli(['sandbox', '--port', '0'], { cwd, env });
    try {
      const text = await run.until('stdout', /Ctrl-C to stop\./);
      const base = /^Partner-service sandbox on (https:\/\/127\.0\.0\.1:(\d+))$/m.exec(text);
      assert.ok(base, text);
      const caFile = join(cwd, '.sandbox', 'cert.pem');
      assert.match(text, new RegExp(`^ {2}control API: ${base[1]}/_sandbox/`, 'm'));
      assert.ok(text.includes(`  certificate: ${caFile} (PIX_CA_FILE`), text);
      assert.match(text, new RegExp(`^ {2}email: +${DEFAULT_ACCOUNT.email} `, 'm'));
      assert.match(text, new RegExp(`^ {2}access_key: +${DEFAULT_ACCOUNT.accessKey} `, 'm'));
      assert.match(text, new RegExp(`^ {2}tenant id: +${DEFAULT_ACCOUNT.tenant.id}$`, 'm'));

      // What it says to set is all another command needs.
      const settings = settingsFrom(/^ {2}(PIX_BASE_URL=.*)$/m.exec(text)![1]!);
      assert.deepEqual(Object.keys(settings).sort(), ['PIX_ACCESS_KEY', 'PIX_BASE_URL', 'PIX_CA_FILE', 'PIX_EMAIL', 'PIX_USER_AGENT']);
      const { code, out, err } = await runCli(['login', '--json'], { ...settings, PIX_TOKEN_FILE: join(cwd, 'token.json') });
      assert.equal(code, 0, err);
      assert.equal((JSON.parse(out) as { tenant: { id: string } }).tenant.id, DEFAULT_ACCOUNT.tenant.id);
      const clock = await httpsGet(`${base[1]}/_sandbox/clock`, await readFile(caFile, 'utf8'));
      assert.equal(clock.status, 200, clock.body);

      run.child.kill('SIGTERM');
      assert.equal(await run.exited, 0, run.out.stderr);
      assert.equal(await refused(Number(base[2])), true, 'the sandbox stopped with it');
    } finally {
      run.kill();
    }
  });

  test('--json prints the same as one snake_case object; SIGINT stops it, exit 0', async () => {
    const run = spawnCli(['sandbox', '--port', '0', '--dialect', 'numbered', '--json'], { cwd, env });
    try {
      const line = await run.until('stdout', /\}\n/);
      const printed = JSON.parse(line) as { base_url: string; control_url: string; ca_file: string; dialect: string; settings: Record<string, string> };
      assert.deepEqual(notSnakeCase({ ...printed, settings: {} }), []);
      assert.equal(printed.control_url, `${printed.base_url}/_sandbox`);
      assert.equal(printed.ca_file, join(cwd, '.sandbox', 'cert.pem'));
      assert.equal(printed.dialect, 'numbered');
      // Another numbering: reading it needs PIX_STATUS_CODES, so it is among the settings.
      assert.equal(printed.settings.PIX_STATUS_CODES, 'pending=0,approved=1,canceled=2');
      assert.equal(printed.settings.PIX_BASE_URL, printed.base_url);

      run.child.kill('SIGINT');
      assert.equal(await run.exited, 0, run.out.stderr);
      assert.equal(await refused(Number(new URL(printed.base_url).port)), true);
    } finally {
      run.kill();
    }
  });

  test('killed outright, the command takes the sandbox with it', async () => {
    const run = spawnCli(['sandbox', '--port', '0', '--json'], { cwd, env });
    try {
      const { base_url } = JSON.parse(await run.until('stdout', /\}\n/)) as { base_url: string };
      run.child.kill('SIGKILL');
      await run.exited;
      await waitFor('the sandbox to stop listening', () => refused(Number(new URL(base_url).port)));
    } finally {
      run.kill();
    }
  });

  test('a bad --port or --dialect exits 2 naming the option', async () => {
    const bad = await cli(['sandbox', '--dialect', 'klingon']);
    assert.equal(bad.code, 2);
    assert.ok(bad.err.includes(`--dialect must be one of: ${DIALECT_NAMES.join(', ')} (it is "klingon")`), bad.err);
    const port = await cli(['sandbox', '--port', '99999']);
    assert.equal(port.code, 2);
    assert.match(port.err, /--port must be a whole number from 0 to 65535/);
  });
});

describe('cli: serve, as a real process', () => {
  let cwd: string;
  before(async () => (cwd = await mkdtemp(join(tmpdir(), 'pix-cli-serve-'))));
  after(() => rm(cwd, { recursive: true, force: true }));

  test('in sandbox mode it prints the API key, the control API and the certificate; SIGINT exits 0 and removes the certificate', async () => {
    const run = spawnCli(['serve', '--port', '0'], { cwd, env: { PATH: process.env.PATH, HOME: process.env.HOME, PIX_LOG_LEVEL: 'warn' } });
    try {
      const text = await run.until('stderr', /Ctrl-C to stop\./);
      const url = /in sandbox mode on (http:\/\/127\.0\.0\.1:\d+)/.exec(text)![1]!;
      assert.match(text, new RegExp(`^ {2}api key: +${SANDBOX_DEFAULTS.apiKey} `, 'm'));
      assert.ok(text.includes(`  control API: ${url}/sandbox/_sandbox/`), text);
      const sandboxUrl = /^ {2}sandbox: +(https:\/\/127\.0\.0\.1:\d+) /m.exec(text)![1]!;
      const caFile = /^ {2}certificate: (\S+) /m.exec(text)![1]!;

      assert.equal((await fetch(`${url}/sandbox/_sandbox/clock`)).status, 200);
      assert.equal((await httpsGet(`${sandboxUrl}/_sandbox/clock`, await readFile(caFile, 'utf8'))).status, 200);
      const created = await fetch(`${url}/api/checkouts`, {
        method: 'POST',
        headers: { authorization: `Bearer ${SANDBOX_DEFAULTS.apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ value: 15, order_id: 'cli-serve-1' }),
      });
      assert.equal(created.status, 201, 'the printed key is the one it takes');

      run.child.kill('SIGINT');
      assert.equal(await run.exited, 0, run.out.stderr);
      assert.equal(existsSync(caFile), false, 'removed with the sandbox it belongs to');
    } finally {
      run.kill();
    }
  });

  test('outside sandbox mode it never prints the API key', async () => {
    const apiKey = 'cli-test-api-key-0123456789abcdef-0123';
    const run = spawnCli(['serve', '--port', '0'], {
      cwd,
      env: { PATH: process.env.PATH, HOME: process.env.HOME, PIX_LOG_LEVEL: 'debug', ...env, PIX_API_KEY: apiKey, PIX_DATA_DIR: join(cwd, 'data') },
    });
    try {
      await run.until('stdout', /pix-checkout proxy listening/);
      run.child.kill('SIGTERM');
      assert.equal(await run.exited, 0, run.out.stderr);
      assert.equal(`${run.out.stdout}${run.out.stderr}`.includes(apiKey), false);
      assert.doesNotMatch(run.out.stderr, /api key|sandbox mode/);
    } finally {
      run.kill();
    }
  });
});
