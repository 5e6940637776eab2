/** `npm run sandbox`: the simulated partner service on its own, for the command line and curl. */
import { mkdir, writeFile } from 'node:fs/promises';
import { startSandbox } from './server.ts';
import { DEFAULT_ACCOUNT } from './state.ts';

const port = Number(process.env.SANDBOX_PORT ?? 8443);
const sandbox = await startSandbox({ port });
await mkdir('.sandbox', { recursive: true });
await writeFile('.sandbox/cert.pem', sandbox.ca);

console.log(`Partner-service sandbox on ${sandbox.url}
  email:       ${DEFAULT_ACCOUNT.email}
  access_key:  ${DEFAULT_ACCOUNT.accessKey}
  certificate: .sandbox/cert.pem (trust it as an extra CA, e.g. curl --cacert .sandbox/cert.pem)
Ctrl-C to stop.`);

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    void sandbox.close().then(() => process.exit(0));
  });
}
