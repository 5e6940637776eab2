/**
 * The limits that keep the code readable and that no single check of eslint or dependency-cruiser
 * holds: the no-issue-numbers rule itself (eslint.config.mjs), comments of the pages eslint does not
 * read, server/'s root, and the list of files allowed past the line limit.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { test } from 'node:test';
import { Linter, type ESLint } from 'eslint';
import { ROOT } from '../../support/markdown.ts';

interface LintConfig {
  house: ESLint.Plugin;
  ISSUE_NUMBER: RegExp;
  LINE_LIMIT_EXCEPTIONS: Record<string, string>;
  MAX_LINES: number;
}
const config = (await import(pathToFileURL(join(ROOT, 'eslint.config.mjs')).href)) as LintConfig;

/** The folders whose comments name no issue (the CHANGELOG and docs/ may). */
const CODE_FOLDERS = ['server', 'src', 'test', 'bench', 'scripts', 'demo'];
/** server/'s root holds the composition and entries only; everything else has a room. */
const SERVER_ROOT_MAX_FILES = 8;

function issueProblems(code: string): string[] {
  const linter = new Linter({ configType: 'flat' });
  return linter
    .verify(code, [{ plugins: { house: config.house }, rules: { 'house/no-issue-numbers': 'error' } }], 'probe.js')
    .map((m) => `${m.line}: ${m.ruleId}`);
}

test('a comment naming an issue fails lint; code and strings naming one, and comments that name none, pass', () => {
  assert.deepEqual(issueProblems('// Kept for issue 27.\nconst a = 1;'), ['1: house/no-issue-numbers']);
  assert.deepEqual(issueProblems('/**\n * Why (Issue #30).\n */\nconst b = 2;'), ['2: house/no-issue-numbers']);
  assert.deepEqual(issueProblems('const c = 3; // see (issue 41)\n/* issues 26 and 27 */'), ['1: house/no-issue-numbers', '2: house/no-issue-numbers']);
  assert.deepEqual(issueProblems('/* fixed in (#12) */'), ['1: house/no-issue-numbers']);
  assert.deepEqual(issueProblems('/**\n * A goal (issue\n *   18), measured.\n */'), ['2: house/no-issue-numbers']);
  assert.deepEqual(issueProblems("// A partner's issue: it may send the status twice.\nconst d = 'issue 27';\nconst e = '#30';"), []);
});

/** Every file below `folder` (relative to the root) whose name ends with one of `endings`. */
function filesBelow(folder: string, endings: readonly string[]): string[] {
  const found: string[] = [];
  for (const entry of readdirSync(join(ROOT, folder), { withFileTypes: true })) {
    const path = join(folder, entry.name);
    if (entry.isDirectory() && entry.name !== 'node_modules') found.push(...filesBelow(path, endings));
    else if (entry.isFile() && endings.some((e) => entry.name.endsWith(e))) found.push(path);
  }
  return found;
}

test('no comment of an HTML or CSS page under the code folders names an issue (eslint reads the scripts)', () => {
  const comment = /<!--[\s\S]*?-->|\/\*[\s\S]*?\*\//g;
  const pages = CODE_FOLDERS.flatMap((folder) => filesBelow(folder, ['.html', '.css']));
  assert.ok(
    pages.some((p) => p.startsWith('demo/')),
    'the demo pages are read',
  );
  const named = pages.flatMap((page) =>
    (readFileSync(join(ROOT, page), 'utf8').match(comment) ?? []).filter((c) => config.ISSUE_NUMBER.test(c)).map((c) => `${page}: ${c}`),
  );
  assert.deepEqual(named, []);
});

test(`server/'s root holds at most ${SERVER_ROOT_MAX_FILES} files`, () => {
  const files = readdirSync(join(ROOT, 'server')).filter((name) => statSync(join(ROOT, 'server', name)).isFile());
  assert.ok(files.length <= SERVER_ROOT_MAX_FILES, `${files.length} files at server/'s root: ${files.join(', ')}`);
});

test('each file allowed past the line limit exists, is still past it, and says why', () => {
  const { LINE_LIMIT_EXCEPTIONS, MAX_LINES } = config;
  assert.equal(MAX_LINES, 400);
  for (const [file, reason] of Object.entries(LINE_LIMIT_EXCEPTIONS)) {
    const lines = readFileSync(join(ROOT, file), 'utf8').split('\n').length - 1;
    assert.ok(lines > MAX_LINES, `${file} has ${lines} lines: take it off LINE_LIMIT_EXCEPTIONS`);
    assert.match(reason, /^data: .{10,}|^split on branch [\w-]+$/, `${file}: its reason`);
  }
});
