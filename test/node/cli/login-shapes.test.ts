/**
 * `pix-checkout login` against a partner of our own making over real HTTPS, answering the login in
 * the shapes partners use: the token one level deeper (`{"data": {"token": {...}}}`) and
 * an OAuth answer at the top are read; an answer it cannot read is shown as its shape, values
 * replaced by their types (no secret shows), as doctor shows it.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { runCli } from '../../support/cli.ts';
import { PARTNER_PATHS } from '../../../server/partner/wire.ts';
import { generateLocalhostCertificate } from '../../../server/sandbox/tls.ts';

const TOKEN = 'tok-secret-0123456789abcdef';

describe('pix-checkout login and the shape of the login answer', () => {
  let server: Server;
  let dir: string;
  let env: Record<string, string>;
  let loginAnswer: unknown = null;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'pix-login-shapes-'));
    const tls = await generateLocalhostCertificate();
    await writeFile(join(dir, 'ca.pem'), tls.cert);
    server = createServer({ key: tls.key, cert: tls.cert }, (req, res) => {
      req.resume();
      req.on('end', () => {
        if (req.url === PARTNER_PATHS.login) return void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(loginAnswer));
        if (req.url === PARTNER_PATHS.getTenant && req.headers.authorization === `Bearer ${TOKEN}`)
          return void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ data: { id: 't-1', name: 'Loja' } }));
        res.writeHead(401, { 'content-type': 'application/json' }).end('{"message":"Unauthenticated."}');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    env = {
      PIX_BASE_URL: `https://127.0.0.1:${(server.address() as AddressInfo).port}`,
      PIX_EMAIL: 'loja@shop.example',
      PIX_ACCESS_KEY: 'key-secret-9876543210',
      PIX_USER_AGENT: 'Loja Teste (dev@loja.example)',
      PIX_CA_FILE: join(dir, 'ca.pem'),
    };
  });
  after(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await rm(dir, { recursive: true, force: true });
  });

  const login = async (answer: unknown, name: string) => {
    loginAnswer = answer;
    return runCli(['login', '--json'], { ...env, PIX_TOKEN_FILE: join(dir, `${name}.json`) });
  };

  test('the token one level deeper, or an OAuth answer at the top, is read', async () => {
    for (const [name, answer] of [
      ['deeper', { message: 'ok', data: { token: { access_token: TOKEN, expires_in: 3600 } } }],
      ['oauth', { access_token: TOKEN, token_type: 'Bearer', expires_in: 3600 }],
      ['typed', { data: { token: `Bearer ${TOKEN}` } }],
    ] as const) {
      const { code, out, err } = await login(answer, name);
      assert.equal(code, 0, `${name}: ${err}`);
      assert.equal((JSON.parse(out) as { tenant: { id: string } }).tenant.id, 't-1');
    }
  });

  test('an answer it cannot read: the error shows its shape, the secret masked', async () => {
    const { code, err } = await login({ data: { session: { bearer_jwt: TOKEN, ttl: 3600 } } }, 'unread');
    assert.equal(code, 1);
    assert.match(err, /login: the partner service's answer \(HTTP 200\) has no access token we can read/);
    assert.ok(err.includes('answer: {"data":{"session":{"bearer_jwt":"string","ttl":"number"}}}'), err);
    assert.ok(!err.includes(TOKEN), 'the token never shows');
  });
});
