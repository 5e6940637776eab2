/** `npm run sandbox`: the simulated partner service on its own, for the command line and curl. */
import { mkdir, writeFile } from 'node:fs/promises';
import { TEST_CUSTOMERS } from './customers.ts';
import { startSandbox } from './server.ts';
import { DEFAULT_ACCOUNT } from './state.ts';

const port = Number(process.env.SANDBOX_PORT ?? 8443);
const sandbox = await startSandbox({ port });
await mkdir('.sandbox', { recursive: true });
await writeFile('.sandbox/cert.pem', sandbox.ca);

const customers = TEST_CUSTOMERS.map(
  (c) => `    ${c.name.padEnd(20)} ${c.document.padEnd(19)} KYC ${c.kyc.padEnd(9)} bank ${c.bank.padEnd(9)} keys: ${Object.values(c.keys).join(', ')}`,
).join('\n');

// The sandbox's documented test credentials: printing them is the point (README.md).
console.log(`Partner-service sandbox on ${sandbox.url}
  email:       ${DEFAULT_ACCOUNT.email}
  access_key:  ${DEFAULT_ACCOUNT.accessKey}
  tenant id:   ${DEFAULT_ACCOUNT.tenant.id}
  certificate: .sandbox/cert.pem (trust it as an extra CA, e.g. curl --cacert .sandbox/cert.pem)
  control API: ${sandbox.url}/_sandbox/... (see server/sandbox/README.md)
  test customers for transfers:
${customers}
Ctrl-C to stop.`);

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    void sandbox.close().then(() => process.exit(0));
  });
}
