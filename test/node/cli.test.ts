/** The command line, run in-process against the sandbox over HTTPS (and once as a real process). */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { promisify } from 'node:util';
import { parseBrCode } from '../../src/shared/brcode.ts';
import { main } from '../../server/cli/index.ts';
import { openSqliteStore } from '../../server/store/sqlite/sqlite-store.ts';
import { startSandbox, type RunningSandbox } from '../../server/sandbox/server.ts';
import { DEFAULT_ACCOUNT } from '../../server/sandbox/state.ts';

let sandbox: RunningSandbox;
let dir: string;
let env: Record<string, string>;

before(async () => {
  sandbox = await startSandbox();
  dir = await mkdtemp(join(tmpdir(), 'pix-cli-'));
  await writeFile(join(dir, 'ca.pem'), sandbox.ca);
  env = {
    PIX_BASE_URL: sandbox.url,
    PIX_EMAIL: DEFAULT_ACCOUNT.email,
    PIX_ACCESS_KEY: DEFAULT_ACCOUNT.accessKey,
    PIX_USER_AGENT: 'Loja Teste (dev@loja.example)',
    PIX_CA_FILE: join(dir, 'ca.pem'),
    PIX_TOKEN_FILE: join(dir, 'token.json'),
  };
});
after(async () => {
  await sandbox.close();
  await rm(dir, { recursive: true, force: true });
});

async function cli(args: string[], overrides: Record<string, string | undefined> = {}) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(args, { out: (t) => out.push(t), err: (t) => err.push(t), env: { ...env, ...overrides } });
  return { code, out: out.join('\n'), err: err.join('\n') };
}

describe('cli: help', () => {
  test('--help lists every command', async () => {
    const { code, out } = await cli(['--help']);
    assert.equal(code, 0);
    for (const command of ['login', 'webhook set', 'payment create', 'payment status', 'payment show', 'transfer create', 'transfer status']) {
      assert.ok(out.includes(command), command);
    }
  });
  for (const command of ['login', 'webhook', 'payment', 'transfer']) {
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
    const created = await cli(['payment', 'create', '--value', '12.30', '--description', 'Pedido 9', '--json']);
    assert.equal(created.code, 0, created.err);
    const payment = JSON.parse(created.out) as { reference: string; pix_key: string };
    assert.ok(parseBrCode(payment.pix_key).ok);
    const status = await cli(['payment', 'status', payment.reference]);
    assert.match(status.out, /status\s+pending \(1\) \(from the details/);
    assert.match(status.out, /quick check\s+HTTP 202 \(pending under the assumed mapping: a hint only\)/);
    sandbox.state.pay(sandbox.state.payments.get(payment.reference)!);
    assert.match((await cli(['payment', 'status', payment.reference])).out, /status\s+approved \(2\)/);
    const shown = await cli(['payment', 'show', payment.reference]);
    assert.match(shown.out, /value\s+12\.30/);
    assert.match(shown.out, /status\s+approved \(2\)/);
  });

  test('a refused input exits 1 naming the field, without the document', async () => {
    const { code, err } = await cli(['payment', 'create', '--value', '5', '--name', 'Maria', '--document', '529.982.247-26']);
    assert.equal(code, 1);
    assert.match(err, /document: must be a valid CPF or CNPJ/);
    assert.equal(err.includes('529.982.247-26'), false);
  });

  test('an unknown reference exits 1', async () => {
    const { code, err } = await cli(['payment', 'show', 'nope']);
    assert.equal(code, 1);
    assert.match(err, /not found/);
  });
});

describe('cli: transfers and the webhook URL', () => {
  test('transfer create to a key, then status after the bank answers', async () => {
    const created = await cli(['transfer', 'create', '--value', '25', '--key', 'ana@cliente.example', '--json']);
    assert.equal(created.code, 0, created.err);
    const transfer = JSON.parse(created.out) as { reference: string };
    sandbox.state.clock.advance(10 * 60 * 1000);
    const status = await cli(['transfer', 'status', transfer.reference]);
    assert.match(status.out, /status\s+approved \(2\)/);
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
    await store.close();
    const all = await cli(['webhook', 'received', '--json'], { PIX_DATA_DIR: dataDir });
    assert.equal(all.code, 0, all.err);
    const rows = JSON.parse(all.out) as { result: string; body: string }[];
    assert.deepEqual(
      rows.map((r) => [r.result, r.body]),
      [
        ['unknown_reference', '{"external_reference":"not-ours"}'],
        ['unreadable', '{"type": "payment", '],
      ],
    );
    const unreadable = await cli(['webhook', 'received', '--unreadable'], { PIX_DATA_DIR: dataDir });
    assert.match(unreadable.out, /#1 {2}2030-01-01T00:00:00.000Z {2}unreadable\n {2}\{"type": "payment", /);
    assert.equal(unreadable.out.includes('not-ours'), false);
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
