/** `npm run build` writes docs/openapi.json: the proxy's OpenAPI 3.1 document (server/routes/openapi.ts) under the default base path. */
import { readFileSync, writeFileSync } from 'node:fs';
import { openApiDocument } from '../server/routes/openapi.ts';

const path = new URL('../docs/openapi.json', import.meta.url);
const text = `${JSON.stringify(openApiDocument('/api'), null, 2)}\n`;
let before = '';
try {
  before = readFileSync(path, 'utf8');
} catch {
  // Not written yet.
}
if (text !== before) writeFileSync(path, text);
console.log(text === before ? 'docs/openapi.json: up to date' : 'docs/openapi.json: written');
