import { minifySync } from 'rolldown/utils';
import { readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
const src = readFileSync('dist/pix-checkout.js', 'utf8');
const names = process.argv[2];
const r = minifySync('a.js', src, { module: true, compress: true, mangle: true, mangleProps: names ? { include: new RegExp(`^(${names})$`) } : undefined });
if (r.errors.length) console.log(r.errors);
console.log(src.length, gzipSync(src,{level:9}).length, '->', r.code.length, gzipSync(r.code,{level:9}).length, r.mangleCache);
