/**
 * The partner-service sandbox as a process of its own, for the command line, the proxy and curl:
 * `pix-checkout sandbox` runs this file (from lib/ when installed), and so does `npm run sandbox`.
 * It writes its certificate where the command line and the proxy look for it by default
 * (`.sandbox/cert.pem` in the working directory), prints what a client needs (the base URL, the
 * control API, that certificate, the test account) and stops cleanly on SIGINT or SIGTERM, or when
 * the command that started it goes away.
 *
 * Options, each also read from the environment: --port (SANDBOX_PORT, default 8443; 0 picks a free
 * one), --dialect (PIX_SANDBOX_DIALECT, default `default`; dialects.ts), --json (what it prints, as
 * one JSON object). Exit 2 for a bad option, 1 when it cannot listen, 0 after a clean stop.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { SANDBOX_ACCOUNT } from '../partner/sandbox-account.ts';
import { TEST_CUSTOMERS } from './customers.ts';
import { DIALECT_NAMES, SANDBOX_DIALECTS, isDialectName } from './dialects.ts';
import { startSandbox, type RunningSandbox } from './server.ts';
import { DEFAULT_ACCOUNT } from './state.ts';

/** The port the command line and the proxy assume when nothing is configured (SANDBOX_ACCOUNT.baseUrl). */
const DEFAULT_PORT = Number(new URL(SANDBOX_ACCOUNT.baseUrl).port);

function usage(message: string): never {
  console.error(`pix-checkout sandbox: ${message}`);
  process.exit(2);
}

let options: { port?: string | undefined; dialect?: string | undefined; json?: boolean | undefined };
try {
  ({ values: options } = parseArgs({
    args: process.argv.slice(2),
    options: { port: { type: 'string' }, dialect: { type: 'string' }, json: { type: 'boolean' } },
    strict: true,
  }));
} catch (error) {
  usage((error as Error).message);
}

// Empty counts as unset, as an `export PIX_SANDBOX_DIALECT=` would leave it.
const portText = options.port ?? (process.env.SANDBOX_PORT || String(DEFAULT_PORT));
const port = Number(portText);
if (!/^\d+$/.test(portText.trim()) || port > 65535)
  usage(`${options.port !== undefined ? '--port' : 'SANDBOX_PORT'} must be a whole number from 0 to 65535 (0 picks a free port)`);
const dialect = options.dialect ?? (process.env.PIX_SANDBOX_DIALECT || 'default');
if (!isDialectName(dialect))
  usage(`${options.dialect !== undefined ? '--dialect' : 'PIX_SANDBOX_DIALECT'} must be one of: ${DIALECT_NAMES.join(', ')} (it is "${dialect}").`);

let sandbox: RunningSandbox;
try {
  sandbox = await startSandbox({ port, dialect });
} catch (error) {
  const inUse = (error as NodeJS.ErrnoException).code === 'EADDRINUSE';
  console.error(
    `pix-checkout sandbox: cannot listen on port ${port}: ${inUse ? 'it is in use (another sandbox?); --port chooses another, 0 a free one' : (error as Error).message}`,
  );
  process.exit(1);
}
const caFile = resolve(SANDBOX_ACCOUNT.caFile);
await mkdir(dirname(caFile), { recursive: true });
await writeFile(caFile, sandbox.ca);

// Before the banner: whoever waits for it may stop the sandbox at once. A second signal while it
// closes changes nothing (a terminal's Ctrl-C may reach it twice, directly and relayed).
let stopping = false;
const stop = () => {
  if (stopping) return;
  stopping = true;
  void sandbox.close().then(() => process.exit(0));
};
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, stop);
// Started by `pix-checkout sandbox` (an IPC channel): stop with it, even when it was killed outright.
process.on('disconnect', stop);

const codes = SANDBOX_DIALECTS[dialect].statusCodes;
const own = SANDBOX_DIALECTS[dialect].setting;
// A dialect with more than the three states says its setting; the others' is their three codes.
const numbering = own?.payments ?? `pending=${codes.pending},approved=${codes.approved},canceled=${codes.canceled}`;
const defaultCodes = SANDBOX_DIALECTS.default.statusCodes;
const ownNumbering =
  own !== undefined || codes.pending !== defaultCodes.pending || codes.approved !== defaultCodes.approved || codes.canceled !== defaultCodes.canceled;
/** What a client sets to use this sandbox; nothing at all from this directory on the default port. */
const settings: Record<string, string> = {
  PIX_BASE_URL: sandbox.url,
  PIX_CA_FILE: caFile,
  PIX_EMAIL: DEFAULT_ACCOUNT.email,
  PIX_ACCESS_KEY: DEFAULT_ACCOUNT.accessKey,
  PIX_USER_AGENT: SANDBOX_ACCOUNT.userAgent,
  ...(ownNumbering ? { PIX_STATUS_CODES: numbering } : {}),
  ...(own ? { PIX_TRANSFER_STATUS_CODES: own.transfers } : {}),
};
const control = `${sandbox.url}/_sandbox`;

if (options.json) {
  console.log(
    JSON.stringify({
      base_url: sandbox.url,
      control_url: control,
      ca_file: caFile,
      dialect,
      status_codes: { pending: codes.pending, approved: codes.approved, canceled: codes.canceled },
      email: DEFAULT_ACCOUNT.email,
      access_key: DEFAULT_ACCOUNT.accessKey,
      user_agent: SANDBOX_ACCOUNT.userAgent,
      tenant_id: DEFAULT_ACCOUNT.tenant.id,
      settings,
      test_customers: TEST_CUSTOMERS.map((c) => ({ name: c.name, document: c.document, kyc: c.kyc, bank: c.bank, keys: Object.values(c.keys) })),
    }),
  );
} else {
  const customers = TEST_CUSTOMERS.map(
    (c) => `    ${c.name.padEnd(20)} ${c.document.padEnd(19)} KYC ${c.kyc.padEnd(9)} bank ${c.bank.padEnd(9)} keys: ${Object.values(c.keys).join(', ')}`,
  ).join('\n');
  const quote = (value: string) => (/^[\w@%+=:,./-]+$/.test(value) ? value : `'${value}'`);
  const defaults = port === DEFAULT_PORT && !ownNumbering;
  // The sandbox's documented test credentials: printing them is the point (README.md).
  console.log(`Partner-service sandbox on ${sandbox.url}
  dialect:     ${dialect} (--dialect: ${DIALECT_NAMES.join(', ')}; server/sandbox/README.md, "Dialects"); status codes ${numbering}
  control API: ${control}/... (pay, cancel, move the clock: server/sandbox/README.md, "Control API")
  certificate: ${caFile} (PIX_CA_FILE; curl --cacert ${caFile})
  email:       ${DEFAULT_ACCOUNT.email} (PIX_EMAIL)
  access_key:  ${DEFAULT_ACCOUNT.accessKey} (PIX_ACCESS_KEY)
  tenant id:   ${DEFAULT_ACCOUNT.tenant.id}
  test customers for transfers:
${customers}
${
  defaults
    ? 'pix-checkout commands run from this directory use it with nothing set. From elsewhere:'
    : 'To use it, set these for pix-checkout commands (or in .env):'
}
  ${Object.entries(settings)
    .map(([name, value]) => `${name}=${quote(value)}`)
    .join(' ')}
Ctrl-C to stop.`);
}
