#!/usr/bin/env node
// The command line's entry: runs the TypeScript sources through tsx.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../server/cli.ts');
process.exitCode = await main(process.argv.slice(2));
