import { spawnSync } from 'node:child_process';
/**
 * The files that run the proxy outside this repository, checked against the code they configure: the
 * two package descriptions (scripts/packages/*.json) against the root package.json, and the Dockerfile,
 * deploy/compose.yaml, deploy/proxy.env.example and deploy/pix-checkout.service against the table of
 * settings (a misspelt variable is silently ignored by the proxy) and the health route. The image is
 * not built here (no container daemon): test/e2e/package.test.ts runs what it would run.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { PACKAGE_NAMES, manifest, readTemplate } from '../../../scripts/pack.ts';
import { SETTINGS } from '../../../server/config/settings.ts';
import { HEALTH_PATHS } from '../../../server/routes/health.ts';

const read = (path: string): string => readFileSync(new URL(`../../../${path}`, import.meta.url), 'utf8');
const root = JSON.parse(read('package.json')) as {
  version: string;
  private?: boolean;
  engines: { node: string };
  dependencies: Record<string, string>;
  scripts: Record<string, string>;
};
/** Variables the deploy files may set that are not the proxy's: the runtime's and the Postgres image's. */
const NOT_SETTINGS = new Set(['NODE_ENV', 'PATH', 'POSTGRES_USER', 'POSTGRES_DB', 'POSTGRES_PASSWORD']);

function unknownVariables(names: readonly string[]): string[] {
  return names.filter((name) => !(name in SETTINGS) && !NOT_SETTINGS.has(name));
}

describe('the two packages', () => {
  test('each takes its version and its dependency ranges from the root package.json', () => {
    for (const name of PACKAGE_NAMES) {
      const pkg = manifest(name) as { name: string; version: string; dependencies: Record<string, string> };
      assert.equal(pkg.name, name);
      assert.equal(pkg.version, root.version);
      for (const [dependency, range] of Object.entries(pkg.dependencies)) assert.equal(range, root.dependencies[dependency], `${name}: ${dependency}`);
    }
  });

  test('the widget depends on lit and zod alone and has no command line; the server has it', () => {
    assert.deepEqual(readTemplate('pix-checkout').dependencies, ['lit', 'zod']);
    assert.equal(readTemplate('pix-checkout').bin, undefined);
    assert.deepEqual(readTemplate('pix-checkout-server').bin, { 'pix-checkout': 'bin/pix-checkout.mjs' });
    for (const native of ['libsql', 'pg', 'pino', 'hono']) assert.ok(readTemplate('pix-checkout-server').dependencies.includes(native));
  });

  test('every root dependency is in a package, and the root is not published itself', () => {
    // A package's dependencies, or its optional peers (the server's render entry: lit, @lit-labs/ssr).
    const listed = new Set(PACKAGE_NAMES.flatMap((name) => [...readTemplate(name).dependencies, ...(readTemplate(name).optionalPeers ?? [])]));
    assert.deepEqual(
      Object.keys(root.dependencies).filter((dependency) => !listed.has(dependency)),
      [],
    );
    assert.equal(root.private, true);
    // npm runs prepack before `npm pack` (npm_command "pack") and before `npm run pack` ("run"): only the first refuses.
    const prepack = (command: string) =>
      spawnSync('/bin/sh', ['-c', root.scripts.prepack!], { env: { ...process.env, npm_command: command }, encoding: 'utf8' });
    assert.equal(prepack('pack').status, 1, '`npm pack` at the root refuses');
    assert.match(prepack('pack').stderr, /npm run pack makes the two packages/, 'and says what to run');
    assert.equal(prepack('publish').status, 1, '`npm publish` at the root refuses');
    assert.equal(prepack('run').status, 0, '`npm run pack` (npm 11) is not refused by its own pre script');
    assert.equal(prepack('run-script').status, 0, '`npm run pack` (npm 10) is not refused by its own pre script');
  });
});

describe('the deploy files', () => {
  test('the Dockerfile sets known variables and checks /health', () => {
    const dockerfile = read('Dockerfile');
    const env = /^ENV ((?:.*\\\n)*.*)$/m.exec(dockerfile)![1]!;
    const names = [...env.matchAll(/([A-Z][A-Z0-9_]*)=/g)].map((m) => m[1]!);
    assert.deepEqual(names, ['NODE_ENV', 'HOST', 'PORT', 'PIX_DATA_DIR', 'PIX_TOKEN_FILE', 'PATH']);
    assert.deepEqual(unknownVariables(names), []);
    assert.match(dockerfile, new RegExp(`^HEALTHCHECK .*\\n.*'${HEALTH_PATHS.health}'`, 'm'));
    assert.match(dockerfile, /^USER 10001:10001$/m, 'a numeric non-root user');
    assert.match(dockerfile, /^STOPSIGNAL SIGTERM$/m);
    assert.match(dockerfile, /npm install --omit=dev [^\n]*pix-checkout-server-\*\.tgz/, 'the server tarball, production dependencies only');
  });

  test('the compose file, the env example and the systemd unit name only settings that exist', () => {
    const compose = [...read('deploy/compose.yaml').matchAll(/^ {4,}([A-Z][A-Z0-9_]*): /gm)].map((m) => m[1]!);
    const example = [...read('deploy/proxy.env.example').matchAll(/^([A-Z][A-Z0-9_]*)=/gm)].map((m) => m[1]!);
    const unit = [...read('deploy/pix-checkout.service').matchAll(/^Environment=([A-Z][A-Z0-9_]*)=/gm)].map((m) => m[1]!);
    assert.ok(compose.includes('PIX_DATABASE_URL') && example.includes('PIX_API_KEY') && unit.includes('PIX_DATA_DIR'));
    assert.deepEqual(unknownVariables([...compose, ...example, ...unit]), []);
  });

  test("the systemd unit names the Node it needs (package.json's engines) and where Debian's is too old", () => {
    const unit = read('deploy/pix-checkout.service');
    const least = /^>=(\d+\.\d+)$/.exec(root.engines.node)?.[1];
    assert.ok(least, root.engines.node);
    assert.match(unit, new RegExp(`^# It needs Node ${least.replace('.', '\\.')} or later`, 'm'));
    assert.match(unit, /Debian 12's own \/usr\/bin\/node[\s\S]{0,40}is Node 18/);
    assert.match(unit, /^ExecStart=\/usr\/bin\/node /m);
  });

  test('docs/deployment.md shows the systemd unit as deploy/pix-checkout.service has it', () => {
    const guide = read('docs/deployment.md');
    const block = /```ini\n([\s\S]*?)```/.exec(guide)?.[1];
    assert.equal(block, read('deploy/pix-checkout.service'));
  });
});
