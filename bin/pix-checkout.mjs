#!/usr/bin/env node
// The command line's entry. Installed from the package, it runs the compiled server (lib/); in this
// repository, where the TypeScript sources are, it runs them through tsx, so no build is needed.
import { existsSync } from 'node:fs';

const sources = new URL('../server/cli/index.ts', import.meta.url);
let main;
if (existsSync(sources)) {
  const { register } = await import('tsx/esm/api');
  register();
  ({ main } = await import(sources.href));
} else {
  ({ main } = await import('../lib/server/cli/index.js'));
}
process.exitCode = await main(process.argv.slice(2));
