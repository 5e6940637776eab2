/**
 * Postgres over TLS (server/store/postgres/tls.ts): each documented `sslmode` gives pg the TLS
 * options libpq would use, pg never sees the parameter (so it prints no security warning, which
 * pg 8.x does once per process for require), and an ambiguous setting is refused with a sentence
 * that never holds the URL. No TLS server is needed: what is checked is what pg is handed, and,
 * in a fresh process per setting (pg warns once a process), whether pg warns on it.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, test } from 'node:test';
import { promisify } from 'node:util';
import { postgresConnection, PostgresTlsError, SSL_MODES } from '../../../server/store/postgres/tls.ts';

const BASE = 'postgres://pix:s3cret-password@db.example:5432/pix';
const files: Record<string, string> = { '/etc/pix/ca.pem': 'CA PEM', '/etc/pix/client.pem': 'CLIENT PEM', '/etc/pix/client.key': 'CLIENT KEY' };
const readFile = (path: string) => {
  const text = files[path];
  if (text === undefined) throw Object.assign(new Error(`ENOENT: ${path}`), { code: 'ENOENT' });
  return text;
};
const connection = (query: string) => postgresConnection(`${BASE}${query}`, readFile);

/** What the TLS options check, in words: the tests compare these rather than function identities. */
function checks(ssl: ReturnType<typeof postgresConnection>['ssl']) {
  if (ssl === false) return 'plain';
  return {
    ca: ssl.ca ?? null,
    chain: ssl.rejectUnauthorized !== false,
    hostName: ssl.rejectUnauthorized !== false && ssl.checkServerIdentity === undefined,
    ...(ssl.cert !== undefined ? { cert: ssl.cert, key: ssl.key } : {}),
  };
}

/** Each documented setting, and what it must check. */
const DOCUMENTED: [string, ReturnType<typeof checks>][] = [
  ['', 'plain'],
  ['?sslmode=disable', 'plain'],
  ['?sslmode=require', { ca: null, chain: false, hostName: false }],
  ['?sslmode=require&sslrootcert=/etc/pix/ca.pem', { ca: 'CA PEM', chain: true, hostName: false }],
  ['?sslmode=verify-ca&sslrootcert=/etc/pix/ca.pem', { ca: 'CA PEM', chain: true, hostName: false }],
  ['?sslmode=verify-full', { ca: null, chain: true, hostName: true }],
  ['?sslmode=verify-full&sslrootcert=/etc/pix/ca.pem', { ca: 'CA PEM', chain: true, hostName: true }],
  [
    '?sslmode=verify-full&sslrootcert=/etc/pix/ca.pem&sslcert=/etc/pix/client.pem&sslkey=/etc/pix/client.key',
    { ca: 'CA PEM', chain: true, hostName: true, cert: 'CLIENT PEM', key: 'CLIENT KEY' },
  ],
];

describe('Postgres TLS settings', () => {
  test('each documented sslmode gives pg the TLS options libpq would use, and the URL without its TLS parameters', () => {
    assert.deepEqual(SSL_MODES, ['disable', 'require', 'verify-ca', 'verify-full']);
    for (const [query, expected] of DOCUMENTED) {
      const built = connection(query);
      assert.deepEqual(checks(built.ssl), expected, query || '(no sslmode)');
      assert.doesNotMatch(built.connectionString, /ssl/, 'pg never sees a TLS parameter');
      assert.equal(new URL(built.connectionString).password, 's3cret-password');
    }
    // Other parameters pass through untouched.
    assert.match(connection('?sslmode=require&application_name=pix').connectionString, /\?application_name=pix$/);
  });

  test('ambiguous or unusable settings are refused with what to use, never showing the URL', () => {
    const refused: [string, RegExp][] = [
      ['?sslmode=prefer', /sslmode=prefer is not supported \(TLS only when the server offers it/],
      ['?sslmode=allow', /sslmode=allow is not supported/],
      ['?sslmode=no-verify', /use require/],
      ['?sslmode=verify', /one of disable, require, verify-ca, verify-full/],
      ['?sslmode=verify-ca', /verify-ca needs sslrootcert=<path>/],
      ['?ssl=true', /ssl= is not supported; use sslmode=/],
      ['?uselibpqcompat=true&sslmode=require', /uselibpqcompat= is not supported/],
      ['?sslrootcert=/etc/pix/ca.pem', /a certificate is given but TLS is off; add sslmode=verify-full/],
      ['?sslmode=verify-full&sslrootcert=/etc/pix/missing.pem', /cannot read sslrootcert \/etc\/pix\/missing\.pem \(ENOENT\)/],
    ];
    for (const [query, message] of refused) {
      const error = (() => {
        try {
          connection(query);
        } catch (caught) {
          return caught;
        }
        return null;
      })();
      assert.ok(error instanceof PostgresTlsError, `${query} refused`);
      assert.match(error.message, message);
      assert.doesNotMatch(error.message, /s3cret-password|db\.example/, 'the URL is never in the message');
    }
  });

  test('pg prints no security warning for any documented setting (and does for the raw require: the check can fail)', async () => {
    const run = promisify(execFile);
    const tls = fileURLToPath(new URL('../../../server/store/postgres/tls.ts', import.meta.url));
    // A fresh process per setting: pg warns once a process. Builds a pool and a client as the store does.
    const script = (url: string, raw: boolean) => `
      const warnings = [];
      process.on('warning', (w) => warnings.push(w.message));
      const pg = (await import('pg')).default;
      const { postgresConnection } = await import(${JSON.stringify(tls)});
      const config = ${raw ? `{ connectionString: ${JSON.stringify(url)} }` : `postgresConnection(${JSON.stringify(url)}, () => 'PEM')`};
      new pg.Client(config);
      const pool = new pg.Pool(config);
      await pool.end();
      await new Promise((resolve) => setImmediate(resolve));
      console.log(JSON.stringify(warnings));`;
    const warnings = async (url: string, raw = false) => {
      const { stdout } = await run(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script(url, raw)], { cwd: process.cwd() });
      return JSON.parse(stdout.trim().split('\n').at(-1)!) as string[];
    };
    const results = await Promise.all([
      warnings(`${BASE}?sslmode=require`, true),
      ...DOCUMENTED.map(([query]) => warnings(`${BASE}${query.replace(/\/etc\/pix\/[a-z.]+/g, '/x.pem')}`)),
    ]);
    const [raw, ...documented] = results;
    assert.ok(
      raw.some((w) => /SECURITY WARNING/.test(w)),
      'pg warns when it reads sslmode=require itself',
    );
    documented.forEach((w, i) => assert.deepEqual(w, [], DOCUMENTED[i]![0] || '(no sslmode)'));
  });
});
