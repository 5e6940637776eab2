/**
 * Where the command line keeps the partner's token (server/cli/io.ts, cliTokenStore): with
 * PIX_DATABASE_URL in that database, under the key the proxy uses (one token for both, no file on the
 * machine the command runs on); without it in the 0600 file PIX_TOKEN_FILE. Real sandbox over HTTPS,
 * real Postgres, real files.
 */
import assert from 'node:assert/strict';
import { existsSync, statSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { runCli } from '../../support/cli.ts';
import { decodeSaved, tokenStoreKey } from '../../../server/partner/client.ts';
import { startSandbox, type RunningSandbox } from '../../../server/sandbox/server.ts';
import { DEFAULT_ACCOUNT } from '../../../server/sandbox/state.ts';
import { openStore } from '../../../server/store/open.ts';
import { sandboxPartnerEnv } from '../../support/cluster-harness.ts';
import { startPostgres, type RunningPostgres } from '../../support/postgres.ts';
import { databaseDeadlines } from '../../../server/config/database.ts';

describe('the command line keeps its partner token', () => {
  let dir: string;
  let sandbox: RunningSandbox;
  let postgres: RunningPostgres;
  let env: Record<string, string>;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'pix-cli-token-'));
    [sandbox, postgres] = await Promise.all([startSandbox(), startPostgres()]);
    await writeFile(join(dir, 'ca.pem'), sandbox.ca);
    env = sandboxPartnerEnv(sandbox.url, join(dir, 'ca.pem'));
  });
  after(async () => {
    await sandbox?.close();
    await postgres?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  const login = async (overrides: Record<string, string>, ...args: string[]) => {
    const { code, out, err } = await runCli(['login', ...args], { ...env, ...overrides });
    assert.equal(code, 0, err);
    return out;
  };
  const key = () => tokenStoreKey(sandbox.url, DEFAULT_ACCOUNT.email);

  test('with PIX_DATABASE_URL: in the database, under the proxy’s key; no token file; used again by the next command', async () => {
    const databaseUrl = await postgres.createDatabase();
    const tokenFile = join(dir, 'db', 'partner-token.json');
    const overrides = { PIX_DATABASE_URL: databaseUrl, PIX_TOKEN_FILE: tokenFile };
    sandbox.state.tokens.clear();
    await login(overrides);
    assert.equal(existsSync(tokenFile), false, 'no token file written');
    const store = await openStore({ dataDir: join(dir, 'unused'), databaseUrl, deadlines: databaseDeadlines(), cacheSize: 0 });
    let saved: string | null;
    try {
      saved = await store.tokens.load(key());
    } finally {
      await store.close();
    }
    assert.ok(saved, 'the token is in the database');
    assert.equal(sandbox.state.tokens.size, 1, 'one login');
    // The next command uses it: no second login, and --show-token shows the database's.
    const shown = await login(overrides, '--show-token', '--json');
    assert.equal(sandbox.state.tokens.size, 1, 'the saved token was used');
    assert.equal((JSON.parse(shown) as { token: string }).token, [...sandbox.state.tokens][0]);
    assert.equal(existsSync(tokenFile), false);
  });

  test('without a database: in the 0600 file PIX_TOKEN_FILE', async () => {
    const tokenFile = join(dir, 'file', 'partner-token.json');
    sandbox.state.tokens.clear();
    await login({ PIX_TOKEN_FILE: tokenFile });
    assert.equal(statSync(tokenFile).mode & 0o777, 0o600);
    const saved = JSON.parse(await readFile(tokenFile, 'utf8')) as Record<string, { token: string }>;
    assert.ok(saved[key()]?.token, 'under the same key');
    const shown = await login({ PIX_TOKEN_FILE: tokenFile }, '--show-token', '--json');
    assert.equal(sandbox.state.tokens.size, 1, 'the saved token was used');
    assert.equal((JSON.parse(shown) as { token: string }).token, decodeSaved(saved[key()]!.token).token);
  });
});
