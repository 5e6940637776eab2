/** `npm run docs:config`: rewrites docs/configuration.md's table from the table of settings (server/config/settings.ts). */
import { readFileSync, writeFileSync } from 'node:fs';
import { withSettingsTable } from '../server/config/readme.ts';

const path = new URL('../docs/configuration.md', import.meta.url);
const before = readFileSync(path, 'utf8');
const after = withSettingsTable(before);
if (after !== before) writeFileSync(path, after);
console.log(after === before ? 'docs/configuration.md: the table is up to date' : 'docs/configuration.md: the table rewritten');
