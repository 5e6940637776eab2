/**
 * Every relative link in README.md, CONTRIBUTING.md, CHANGELOG.md and docs/ resolves: to a file that exists, and a
 * `#anchor` to a heading of the page it names (GitHub's anchors).
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { anchors, brokenLinks, docFiles } from '../../support/markdown.ts';

test('every relative link of the docs resolves to a file, and each #anchor to a heading', () => {
  const files = docFiles();
  assert.ok(files.includes('README.md') && files.includes('CONTRIBUTING.md') && files.includes('docs/guides/production.md'));
  assert.deepEqual(brokenLinks(files), []);
});

test('the checker reports a missing file, a missing heading and a missing anchor in the same page', () => {
  const root = mkdtempSync(join(tmpdir(), 'pix-docs-links-'));
  try {
    mkdirSync(join(root, 'docs', 'guides'), { recursive: true });
    writeFileSync(
      join(root, 'README.md'),
      '# Title\n\n[ok](docs/a.md#the-part-two) [gone](docs/b.md) [bad anchor](docs/a.md#nowhere) [self](#title) [self bad](#none)\n\n```md\n[in code](nowhere.md)\n```\n',
    );
    writeFileSync(join(root, 'CONTRIBUTING.md'), '<img src="docs/missing.png">\n');
    writeFileSync(join(root, 'docs', 'a.md'), '# A\n\n## The part: two\n\n[up](../README.md#title) `[code](nowhere.md)`\n');
    assert.deepEqual(brokenLinks(['README.md', 'CONTRIBUTING.md', 'docs/a.md'], root), [
      'README.md:3: docs/b.md: no such file (docs/b.md)',
      'README.md:3: docs/a.md#nowhere: no heading of docs/a.md has the anchor #nowhere',
      'README.md:3: #none: no heading of README.md has the anchor #none',
      'CONTRIBUTING.md:1: docs/missing.png: no such file (docs/missing.png)',
    ]);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test("headings' anchors are GitHub's: code and punctuation dropped, repeats numbered", () => {
  assert.deepEqual(
    [...anchors('# First: `pix-checkout doctor`\n## Personal data (LGPD)\n## Setup\n### Setup\n```sh\n# not a heading\n```\n')],
    ['first-pix-checkout-doctor', 'personal-data-lgpd', 'setup', 'setup-1'],
  );
});
