/** `npm run docs:config`: rewrites README.md's configuration table from the table of settings (server/config/settings.ts). */
import { readFileSync, writeFileSync } from 'node:fs';
import { withSettingsTable } from '../server/config/readme.ts';

const path = new URL('../README.md', import.meta.url);
const before = readFileSync(path, 'utf8');
const after = withSettingsTable(before);
if (after !== before) writeFileSync(path, after);
console.log(after === before ? 'README.md: the configuration table is up to date' : 'README.md: the configuration table rewritten');
