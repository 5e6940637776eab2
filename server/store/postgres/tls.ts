/**
 * TLS to Postgres, read from PIX_DATABASE_URL's libpq parameters by us rather than by `pg`: pg 8.x
 * treats `sslmode=require` (and `prefer`, `verify-ca`) as `verify-full` and prints a security
 * warning at every start. Here each documented `sslmode` means what it means in libpq
 * (https://www.postgresql.org/docs/current/libpq-ssl.html), pg never sees the parameter (so never
 * warns), and an ambiguous one is refused with a sentence saying what to use:
 *
 * | sslmode       | encrypted | server certificate checked against     | host name checked |
 * | ------------- | --------- | -------------------------------------- | ----------------- |
 * | (unset)       | no        |                                        |                   |
 * | `disable`     | no        |                                        |                   |
 * | `require`     | yes       | nothing (with `sslrootcert`: that CA)  | no                |
 * | `verify-ca`   | yes       | `sslrootcert` (required)               | no                |
 * | `verify-full` | yes       | `sslrootcert`, else Node's public CAs  | yes               |
 *
 * `sslcert`/`sslkey` (a client certificate) are read as libpq reads them. `prefer` and `allow` (TLS
 * when the server offers it: a man in the middle just does not offer it), pg's own `no-verify` and
 * `ssl=`/`uselibpqcompat=` are refused. PGSSLMODE and the other PG* variables are not read: the URL
 * says everything.
 */
import { readFileSync } from 'node:fs';
import type { ConnectionOptions } from 'node:tls';

/** The `sslmode` values the proxy accepts, in order of what they check. */
export const SSL_MODES = ['disable', 'require', 'verify-ca', 'verify-full'] as const;
export type SslMode = (typeof SSL_MODES)[number];

/** The URL's parameters read here and removed before pg sees the URL. */
const TLS_PARAMETERS = ['sslmode', 'sslrootcert', 'sslcert', 'sslkey'] as const;
/** Parameters pg reads its own way: refused, so one URL never means two things. */
const REFUSED_PARAMETERS = ['ssl', 'uselibpqcompat'] as const;

/** What to hand to `pg` for a connection: the URL without its TLS parameters, and the TLS options. */
export interface PostgresConnection {
  connectionString: string;
  /** false: no TLS; else Node's TLS options (certificates read from their files). */
  ssl: false | ConnectionOptions;
}

/** A PIX_DATABASE_URL whose TLS parameters cannot be used; the message never holds the URL (it may hold a password). */
export class PostgresTlsError extends Error {
  override readonly name = 'PostgresTlsError';
}

/**
 * The connection settings for `url`. `readFile` reads the certificate files (`sslrootcert`,
 * `sslcert`, `sslkey`); a test gives its own. Throws PostgresTlsError naming what to change.
 */
export function postgresConnection(url: string, readFile: (path: string) => string = (path) => readFileSync(path, 'utf8')): PostgresConnection {
  const parsed = new URL(url);
  const params = parsed.searchParams;
  for (const name of REFUSED_PARAMETERS) {
    if (params.has(name))
      throw new PostgresTlsError(`PIX_DATABASE_URL: ${name}= is not supported; use sslmode=${SSL_MODES.join('|')} (docs/postgres.md, "Postgres over TLS")`);
  }
  const mode = params.get('sslmode');
  const rootCert = params.get('sslrootcert');
  const cert = params.get('sslcert');
  const key = params.get('sslkey');
  for (const name of TLS_PARAMETERS) params.delete(name);
  const connectionString = parsed.toString();

  if (mode !== null && !(SSL_MODES as readonly string[]).includes(mode)) {
    const why =
      mode === 'prefer' || mode === 'allow'
        ? ` (TLS only when the server offers it: anyone in between can decline it); use require, or disable`
        : mode === 'no-verify'
          ? ' (a pg-only name); use require: encrypted, the certificate not checked'
          : '';
    throw new PostgresTlsError(`PIX_DATABASE_URL: sslmode=${mode} is not supported${why}; one of ${SSL_MODES.join(', ')}`);
  }
  if (mode === null || mode === 'disable') {
    if (rootCert !== null || cert !== null || key !== null)
      throw new PostgresTlsError(`PIX_DATABASE_URL: a certificate is given but TLS is off; add sslmode=${rootCert !== null ? 'verify-full' : 'require'}`);
    return { connectionString, ssl: false };
  }
  if (mode === 'verify-ca' && rootCert === null)
    throw new PostgresTlsError(
      'PIX_DATABASE_URL: sslmode=verify-ca needs sslrootcert=<path> (the CA that signed the server certificate); or use verify-full to check against the public CAs',
    );
  const read = (what: string, path: string) => {
    try {
      return readFile(path);
    } catch (error) {
      throw new PostgresTlsError(`PIX_DATABASE_URL: cannot read ${what} ${path} (${(error as NodeJS.ErrnoException).code ?? 'unreadable'})`);
    }
  };
  const ssl: ConnectionOptions = {};
  if (rootCert !== null) ssl.ca = read('sslrootcert', rootCert);
  if (cert !== null) ssl.cert = read('sslcert', cert);
  if (key !== null) ssl.key = read('sslkey', key);
  if (mode === 'require' && rootCert === null) {
    // Encrypted, the server not authenticated (libpq's require).
    ssl.rejectUnauthorized = false;
  } else if (mode === 'require' || mode === 'verify-ca') {
    // The chain checked against the given CA; any host name (libpq's verify-ca, and require with a root certificate).
    ssl.checkServerIdentity = () => undefined;
  }
  // verify-full: Node's defaults, the chain and the host name both checked.
  return { connectionString, ssl };
}
