/**
 * `npm run sandbox`: the simulated partner service on its own, for the command line and curl.
 * `SANDBOX_PORT` (default 8443) and `PIX_SANDBOX_DIALECT` (default `default`; see dialects.ts).
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { TEST_CUSTOMERS } from './customers.ts';
import { DIALECT_NAMES, isDialectName } from './dialects.ts';
import { startSandbox } from './server.ts';
import { DEFAULT_ACCOUNT } from './state.ts';

const port = Number(process.env.SANDBOX_PORT ?? 8443);
// Empty counts as unset, as an `export PIX_SANDBOX_DIALECT=` would leave it.
const dialect = process.env.PIX_SANDBOX_DIALECT || 'default';
if (!isDialectName(dialect)) {
  console.error(`PIX_SANDBOX_DIALECT must be one of: ${DIALECT_NAMES.join(', ')} (it is "${dialect}").`);
  process.exit(2);
}
const sandbox = await startSandbox({ port, dialect });
await mkdir('.sandbox', { recursive: true });
await writeFile('.sandbox/cert.pem', sandbox.ca);

const customers = TEST_CUSTOMERS.map(
  (c) => `    ${c.name.padEnd(20)} ${c.document.padEnd(19)} KYC ${c.kyc.padEnd(9)} bank ${c.bank.padEnd(9)} keys: ${Object.values(c.keys).join(', ')}`,
).join('\n');

// Before the banner: whoever waits for it may stop the sandbox at once.
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    void sandbox.close().then(() => process.exit(0));
  });
}

// The sandbox's documented test credentials: printing them is the point (README.md).
console.log(`Partner-service sandbox on ${sandbox.url}
  dialect:     ${dialect} (PIX_SANDBOX_DIALECT: ${DIALECT_NAMES.join(', ')}; README.md, "Dialects")
  email:       ${DEFAULT_ACCOUNT.email}
  access_key:  ${DEFAULT_ACCOUNT.accessKey}
  tenant id:   ${DEFAULT_ACCOUNT.tenant.id}
  certificate: .sandbox/cert.pem (trust it as an extra CA, e.g. curl --cacert .sandbox/cert.pem)
  control API: ${sandbox.url}/_sandbox/... (see server/sandbox/README.md)
  test customers for transfers:
${customers}
Ctrl-C to stop.`);
