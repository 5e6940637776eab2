/**
 * `npm run pack`: the two packages this repository publishes, as tarballs.
 *
 * - `pix-checkout`: the widget (the element, its React and Vue typings, the script-tag build, the
 *   shared contract). Depends on lit and zod alone: a browser app gets no server, no native binary.
 * - `pix-checkout-server`: the proxy (`pix-checkout-server`, `/sandbox`, `/shared`) and the command
 *   line `pix-checkout`. It carries the script-tag build it serves and the compiled contract itself,
 *   so it installs alone, without asking a registry for the widget.
 *
 * The root package.json is the development manifest (`npm ci` installs from it; it is private and
 * its `npm pack` refuses). Each package is described by scripts/packages/<name>.json: its exports,
 * files and bin as in a package.json, `dependencies` as a list of names whose ranges are the root's
 * (one place), and `runtime`, the folders whose compiled imports must all be among those names
 * (checked here: a package that would fail at its first import is not packed). Name-independent
 * fields (version, license, repository, engines, type) are the root's, so both stay in lockstep.
 * Each is copied to a staging folder and packed there with `npm pack`.
 *
 * Beside the tarballs, SHA512SUMS (`sha512sum -c SHA512SUMS` checks them where they are installed).
 *
 * Options: --destination DIR (default: the repository), --no-build (use the current dist/ and
 * lib/), --json (what was packed, as JSON: file names, sizes, sha512 integrity).
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { isBuiltin } from 'node:module';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';

const repo = fileURLToPath(new URL('..', import.meta.url));
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
/** The packages, in the order they are packed. */
export const PACKAGE_NAMES = ['pix-checkout', 'pix-checkout-server'] as const;
export type PackageName = (typeof PACKAGE_NAMES)[number];

interface Template {
  name: PackageName;
  description: string;
  keywords: string[];
  files: string[];
  dependencies: string[];
  /**
   * Packages only an optional entry imports (the server's `./render`: lit and @lit-labs/ssr): optional
   * peer dependencies, with the root's ranges, so a proxy's install does not carry them.
   */
  optionalPeers?: string[];
  runtime: string[];
  [field: string]: unknown;
}

interface RootManifest {
  version: string;
  license: string;
  homepage: string;
  repository: unknown;
  bugs: unknown;
  type: string;
  engines: Record<string, string>;
  dependencies: Record<string, string>;
}

export interface Packed {
  name: PackageName;
  version: string;
  /** The tarball's path. */
  path: string;
  filename: string;
  /** Bytes of the tarball. */
  size: number;
  unpackedSize: number;
  /** `sha512-…`, what a lockfile's `integrity` says for it. */
  integrity: string;
  files: string[];
  dependencies: Record<string, string>;
}

const readJson = <T>(path: string): T => JSON.parse(readFileSync(path, 'utf8')) as T;

export function readTemplate(name: PackageName): Template {
  return readJson<Template>(join(repo, 'scripts', 'packages', `${name}.json`));
}

/** The package.json a package is published with: the template, the root's shared fields, the root's ranges. */
export function manifest(name: PackageName, root: RootManifest = readJson<RootManifest>(join(repo, 'package.json'))): Record<string, unknown> {
  const { dependencies: names, optionalPeers = [], runtime: _runtime, name: _name, description, keywords, ...fields } = readTemplate(name);
  const rangeOf = (dependency: string) => {
    const range = root.dependencies[dependency];
    if (!range) throw new Error(`scripts/packages/${name}.json names ${dependency}, which the root package.json's dependencies do not list`);
    return range;
  };
  const dependencies = Object.fromEntries(names.map((dependency) => [dependency, rangeOf(dependency)]));
  const peers = optionalPeers.length
    ? {
        peerDependencies: Object.fromEntries(optionalPeers.map((dependency) => [dependency, rangeOf(dependency)])),
        peerDependenciesMeta: Object.fromEntries(optionalPeers.map((dependency) => [dependency, { optional: true }])),
      }
    : {};
  return {
    name,
    version: root.version,
    description,
    license: root.license,
    homepage: root.homepage,
    repository: root.repository,
    bugs: root.bugs,
    type: root.type,
    engines: root.engines,
    keywords,
    ...fields,
    dependencies,
    ...peers,
  };
}

/** Every file under `path` (a file or a folder). */
function walk(path: string): string[] {
  if (!statSync(path).isDirectory()) return [path];
  return readdirSync(path).flatMap((entry) => walk(join(path, entry)));
}

/** The package a bare import specifier names (`zod/mini` → zod, `@hono/node-server/x` → @hono/node-server). */
const packageOf = (specifier: string): string => specifier.split('/', specifier.startsWith('@') ? 2 : 1).join('/');

/** The packages the compiled JavaScript under `folders` imports (static, dynamic and re-exports), builtins left out. */
export function importedPackages(base: string, folders: readonly string[]): Set<string> {
  const found = new Set<string>();
  // Static imports and re-exports at a statement's start, side-effect imports, dynamic imports; in
  // code, not in the comments that quote an import.
  const patterns = [
    /(?:^|[;}])\s*(?:import|export)\s[^'"]*?\bfrom\s*['"]([^'"]+)['"]/gm,
    /^\s*import\s*['"]([^'"]+)['"]/gm,
    /\bimport\(\s*['"]([^'"]+)['"]\s*\)/g,
  ];
  for (const folder of folders) {
    for (const file of walk(join(base, folder))) {
      if (!/\.m?js$/.test(file)) continue;
      const code = readFileSync(file, 'utf8')
        .replace(/\/\*[\s\S]*?\*\//g, '')
        .replace(/^\s*\/\/.*$/gm, '');
      for (const pattern of patterns) {
        for (const [, specifier] of code.matchAll(pattern)) {
          if (!/^[./]/.test(specifier!) && !isBuiltin(specifier!)) found.add(packageOf(specifier!));
        }
      }
    }
  }
  return found;
}

/** Copies what `files` lists (negations are npm pack's to apply) from the repository into `staging`. */
function stage(files: readonly string[], staging: string): void {
  for (const entry of files) {
    if (entry.startsWith('!')) continue;
    const from = join(repo, entry);
    if (!existsSync(from)) throw new Error(`${entry} is missing: build first (npm run build)`);
    cpSync(from, join(staging, entry), { recursive: true });
  }
}

/** Builds (unless `build: false`), then packs both packages into `destination`. */
export function packPackages({ destination = repo, build = true }: { destination?: string; build?: boolean } = {}): Packed[] {
  if (build) {
    const built = spawnSync(npm, ['run', 'build'], { cwd: repo, stdio: ['ignore', 2, 'inherit'] });
    if (built.status !== 0) throw new Error('npm run build failed');
  }
  const root = readJson<RootManifest>(join(repo, 'package.json'));
  const used = new Set<string>();
  mkdirSync(destination, { recursive: true });
  const packed: Packed[] = [];
  for (const name of PACKAGE_NAMES) {
    const template = readTemplate(name);
    const staging = mkdtempSync(join(tmpdir(), `${name}-pack-`));
    try {
      stage(template.files, staging);
      const listed = [...template.dependencies, ...(template.optionalPeers ?? [])];
      const missing = [...importedPackages(staging, template.runtime)].filter((dependency) => !listed.includes(dependency));
      if (missing.length > 0) {
        throw new Error(`${name} imports ${missing.join(', ')} at run time: add to the dependencies of scripts/packages/${name}.json (and the root's)`);
      }
      for (const dependency of listed) used.add(dependency);
      const pkg = manifest(name, root);
      writeFileSync(join(staging, 'package.json'), `${JSON.stringify(pkg, null, 2)}\n`);
      const result = spawnSync(npm, ['pack', '--json', '--ignore-scripts', '--pack-destination', resolve(destination)], {
        cwd: staging,
        encoding: 'utf8',
        maxBuffer: 64 * 1024 * 1024,
      });
      if (result.status !== 0) throw new Error(`npm pack of ${name} failed: ${result.stderr}`);
      const [info] = JSON.parse(result.stdout) as [{ filename: string; size: number; unpackedSize: number; integrity: string; files: { path: string }[] }];
      packed.push({
        name,
        version: root.version,
        path: join(resolve(destination), info.filename),
        filename: info.filename,
        size: info.size,
        unpackedSize: info.unpackedSize,
        integrity: info.integrity,
        files: info.files.map((f) => f.path),
        dependencies: pkg.dependencies as Record<string, string>,
      });
    } finally {
      rmSync(staging, { recursive: true, force: true });
    }
  }
  // For `sha512sum -c SHA512SUMS` where the tarballs are installed: npm records a file tarball's
  // integrity in the lockfile but does not check it again on `npm ci`.
  const sums = packed.map((p) => `${createHash('sha512').update(readFileSync(p.path)).digest('hex')}  ${p.filename}\n`).join('');
  writeFileSync(join(resolve(destination), 'SHA512SUMS'), sums);
  const unused = Object.keys(root.dependencies).filter((dependency) => !used.has(dependency));
  if (unused.length > 0) throw new Error(`the root's dependencies ${unused.join(', ')} are in neither package: move them to devDependencies or to a package`);
  return packed;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const { values } = parseArgs({ options: { destination: { type: 'string' }, 'no-build': { type: 'boolean' }, json: { type: 'boolean' } } });
  try {
    const packed = packPackages({ destination: values.destination ?? repo, build: !values['no-build'] });
    if (values.json) console.log(JSON.stringify(packed.map(({ files: _files, ...rest }) => rest)));
    else for (const p of packed) console.log(`${p.path}\n  ${(p.size / 1024).toFixed(1)} KB, ${p.files.length} files, ${p.integrity}`);
  } catch (error) {
    console.error(`npm run pack: ${(error as Error).message}`);
    process.exitCode = 1;
  }
}
