/** `pix-checkout doctor` against the sandbox in each dialect: it reports what differs, and fails on what would break. */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { main } from '../../../server/cli/index.ts';
import { runCli } from '../../support/cli.ts';
import { DIALECT_NAMES, type DialectName } from '../../../server/sandbox/dialects.ts';
import { startSandbox, type RunningSandbox } from '../../../server/sandbox/server.ts';
import { DEFAULT_ACCOUNT } from '../../../server/sandbox/state.ts';
import { sandboxPartnerEnv } from '../../support/cluster-harness.ts';

interface Finding {
  spec: string;
  assumption: string;
  verdict: 'held' | 'different' | 'broken' | 'not_checked';
  observed: string;
}
interface Report {
  ok: boolean;
  findings: Finding[];
  settings: string[];
}

/** What doctor must say of each dialect: the assumptions (by their start) that differ, and whether something breaks. */
const EXPECTED: Record<DialectName, { different: string[]; broken: string[] }> = {
  default: { different: [], broken: [] },
  terse: {
    different: [
      'token at',
      'token lifetime',
      'id at',
      'PATCH answers 200',
      'create answers HTTP 201',
      'external_reference at',
      'pix_key at',
      'qr_code_url at',
      'checkout at',
      'created_at at',
      'value is a number',
      'created_at is ISO',
      'errors answer',
      'HEAD answers 202',
    ],
    broken: [],
  },
  numbered: {
    different: ['token at', 'token lifetime', 'id at', 'PATCH answers 200', 'created_at at', 'created_at is ISO', 'errors answer'],
    broken: ['a new payment has status 1'],
  },
  // Its pending code is ours, and approved and canceled cannot be seen without paying or waiting: all held.
  swapped: { different: [], broken: [] },
  expiring: { different: [], broken: [] },
};

describe('pix-checkout doctor', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'pix-doctor-'));
  });
  after(() => rm(dir, { recursive: true, force: true }));

  for (const dialect of DIALECT_NAMES) {
    describe(`against the ${dialect} dialect`, () => {
      let sandbox: RunningSandbox;
      let env: Record<string, string>;
      before(async () => {
        sandbox = await startSandbox({ dialect });
        await writeFile(join(dir, `${dialect}.pem`), sandbox.ca);
        env = {
          PIX_BASE_URL: sandbox.url,
          PIX_EMAIL: DEFAULT_ACCOUNT.email,
          PIX_ACCESS_KEY: DEFAULT_ACCOUNT.accessKey,
          PIX_USER_AGENT: 'Loja Teste (dev@loja.example)',
          PIX_CA_FILE: join(dir, `${dialect}.pem`),
          PIX_TOKEN_FILE: join(dir, `${dialect}-token.json`),
        };
      });
      after(() => sandbox.close());

      const doctor = (args: string[], overrides: Record<string, string> = {}) => runCli(['doctor', ...args], { ...env, ...overrides });

      test('reports each assumption as held, different or broken, with the exit code', async () => {
        const { code, out, err } = await doctor(['--create', '--webhook-url', 'https://shop.example/pix/webhooks', '--json']);
        const report = JSON.parse(out) as Report;
        const expected = EXPECTED[dialect];
        const named = (verdict: Finding['verdict']) => report.findings.filter((f) => f.verdict === verdict).map((f) => f.assumption);
        for (const start of expected.different)
          assert.ok(
            named('different').some((a) => a.startsWith(start)),
            `${dialect}: "${start}" reported different`,
          );
        for (const start of expected.broken)
          assert.ok(
            named('broken').some((a) => a.startsWith(start)),
            `${dialect}: "${start}" reported broken`,
          );
        assert.equal(named('different').length, expected.different.length, `${dialect}: ${named('different').join(' | ')}`);
        assert.equal(named('broken').length, expected.broken.length, `${dialect}: ${named('broken').join(' | ')}`);
        // Only what cannot be seen without paying: the approved and canceled codes.
        assert.deepEqual(named('not_checked'), ['approved is 2, canceled is 3']);
        assert.equal(report.ok, expected.broken.length === 0);
        assert.equal(code, expected.broken.length === 0 ? 0 : 4, err);
        // Values are redacted: no token, no tenant id, no reference in the report.
        assert.equal(out.includes(DEFAULT_ACCOUNT.tenant.id), false);
        for (const token of sandbox.state.tokens) assert.equal(out.includes(token), false);
      });

      if (dialect === 'numbered') {
        test('names the status setting to use, and holds once it is set', async () => {
          const wrong = await doctor(['--create']);
          assert.equal(wrong.code, 4);
          assert.match(wrong.out, /broken\s+3 a new payment has status 1 \(pending in PIX_STATUS_CODES\)\s+status 0/);
          assert.match(wrong.out, /PIX_STATUS_CODES=pending=0,approved=<ask>,canceled=<ask>/);
          const right = await doctor(['--create'], { PIX_STATUS_CODES: 'pending=0,approved=1,canceled=2' });
          assert.equal(right.code, 0, right.out);
          assert.match(right.out, /held\s+3 a new payment has status 0/);
        });
      }
    });
  }

  describe('--webhook-url and the configured secret path', () => {
    const SECRET = 'f00dfeedf00dfeedf00dfeed';
    let sandbox: RunningSandbox;
    let env: Record<string, string>;
    before(async () => {
      sandbox = await startSandbox();
      await writeFile(join(dir, 'secret.pem'), sandbox.ca);
      env = {
        ...sandboxPartnerEnv(sandbox.url, join(dir, 'secret.pem')),
        PIX_TOKEN_FILE: join(dir, 'secret-token.json'),
        PIX_WEBHOOK_SECRET_PATH: SECRET,
      };
    });
    after(() => sandbox.close());
    const run = (args: string[], overrides: Record<string, string | undefined> = {}) => runCli(args, { ...env, ...overrides });
    const registered = () => sandbox.state.webhooks.notification?.url ?? null;

    test('refuses a URL whose last segment is empty (a variable the shell did not expand), says why, sets nothing', async () => {
      const before = registered();
      const { code, out, err } = await run(['doctor', '--webhook-url', 'https://shop.example/api/webhooks/partner/']);
      assert.equal(code, 2, out);
      assert.match(err, /does not end with the configured secret path \(PIX_WEBHOOK_SECRET_PATH\)/);
      assert.match(err, /ends with "\/"/);
      assert.equal(registered(), before, 'nothing sent to the partner');
    });

    test('refuses another last segment, and never prints the secret (a segment equal to it is shown as …)', async () => {
      const wrong = await run(['doctor', '--webhook-url', 'https://shop.example/api/webhooks/partner/not-the-secret']);
      assert.equal(wrong.code, 2);
      // A wrong last segment may be an old secret: shown as … with its length only.
      assert.match(wrong.err, /partner\/… does not end with the configured secret path.*its last segment \(14 characters, not shown/);
      assert.equal(wrong.err.includes('not-the-secret'), false, 'the wrong segment printed');
      const slash = await run(['webhook', 'set', `https://shop.example/api/webhooks/partner/${SECRET}/`]);
      assert.equal(slash.code, 2, 'webhook set checks it too');
      assert.match(slash.err, /https:\/\/shop\.example\/api\/webhooks\/partner\/…\/ does not end with the configured secret path/);
      assert.equal(`${slash.out}${slash.err}${wrong.out}${wrong.err}`.includes(SECRET), false, 'the secret printed');
    });

    test('accepts the URL ending with the secret, and sets it', async () => {
      const url = `https://shop.example/api/webhooks/partner/${SECRET}`;
      const { code, out } = await run(['doctor', '--webhook-url', url, '--json']);
      assert.equal(code, 0, out);
      assert.equal(registered(), url);
    });

    test('webhook set prints the URL with its secret path as … (text and --json), and registers it whole', async () => {
      const url = `https://shop.example/api/webhooks/partner/${SECRET}`;
      const text = await run(['webhook', 'set', url, '--format', 'new']);
      assert.equal(text.code, 0, text.err);
      assert.match(text.out, /^notification url\s+https:\/\/shop\.example\/api\/webhooks\/partner\/…$/m);
      assert.equal(registered(), url, 'the URL registered is the one given');
      const json = await run(['webhook', 'set', url, '--json']);
      assert.equal(json.code, 0, json.err);
      assert.equal((JSON.parse(json.out) as { notification_url: string }).notification_url, 'https://shop.example/api/webhooks/partner/…');
      // Without PIX_WEBHOOK_SECRET_PATH in this environment (only in the proxy's), what follows the webhook path is masked all the same.
      const unset = await run(['webhook', 'set', url], { PIX_WEBHOOK_SECRET_PATH: undefined });
      assert.equal(unset.code, 0, unset.err);
      assert.match(unset.out, /partner\/…$/m);
      assert.equal(`${text.out}${text.err}${json.out}${json.err}${unset.out}${unset.err}`.includes(SECRET), false, 'the secret printed');
    });

    test('without a secret path configured, refuses only an empty last segment', async () => {
      const empty = await run(['doctor', '--webhook-url', 'https://shop.example/api/webhooks/partner/'], { PIX_WEBHOOK_SECRET_PATH: undefined });
      assert.equal(empty.code, 2);
      assert.match(empty.err, /ends with "\/"/);
      const plain = await run(['doctor', '--webhook-url', 'https://shop.example/api/webhooks/partner', '--json'], { PIX_WEBHOOK_SECRET_PATH: undefined });
      assert.equal(plain.code, 0, plain.err);
      assert.equal(registered(), 'https://shop.example/api/webhooks/partner');
    });
  });

  test('wrong credentials: login is broken, exit 4, and the access key never printed', async () => {
    const sandbox = await startSandbox();
    try {
      await writeFile(join(dir, 'wrong.pem'), sandbox.ca);
      const out: string[] = [];
      const code = await main(['doctor'], {
        out: (t) => out.push(t),
        err: (t) => out.push(t),
        env: {
          PIX_BASE_URL: sandbox.url,
          PIX_EMAIL: DEFAULT_ACCOUNT.email,
          PIX_ACCESS_KEY: 'not-the-key-123',
          PIX_USER_AGENT: 'Loja Teste (dev@loja.example)',
          PIX_CA_FILE: join(dir, 'wrong.pem'),
          PIX_TOKEN_FILE: join(dir, 'wrong-token.json'),
        },
      });
      assert.equal(code, 4);
      assert.match(out.join('\n'), /broken\s+5 login answers a token/);
      assert.equal(out.join('\n').includes('not-the-key-123'), false);
    } finally {
      await sandbox.close();
    }
  });
});
