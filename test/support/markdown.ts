/**
 * The project's Markdown, read the way GitHub renders it, for the docs tests (test/node/docs/):
 * which files are documentation, their fenced blocks, their links and their headings' anchors.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository's root folder. */
export const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** README.md, CONTRIBUTING.md, CHANGELOG.md and every Markdown file under docs/, as paths relative to the root. */
export function docFiles(root = ROOT): string[] {
  const files = ['README.md', 'CONTRIBUTING.md', 'CHANGELOG.md'];
  const walk = (folder: string): void => {
    for (const entry of readdirSync(join(root, folder), { withFileTypes: true })) {
      const path = join(folder, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith('.md')) files.push(path);
    }
  };
  walk('docs');
  return files.map((file) => relative(root, join(root, file)));
}

export interface FencedBlock {
  /** The fence's info string: `sh runnable` for ```sh runnable. */
  info: string;
  /** The block's text, without its fences. */
  body: string;
  /** The 1-based line of the opening fence. */
  line: number;
}

const FENCE = /^( {0,3})(`{3,}|~{3,})(.*)$/;

/** The fenced code blocks of a Markdown text, and the text with each block's lines blanked. */
export function fencedBlocks(text: string): { blocks: FencedBlock[]; prose: string } {
  const lines = text.split('\n');
  const blocks: FencedBlock[] = [];
  const prose: string[] = [];
  let open: { fence: string; info: string; line: number; body: string[] } | null = null;
  lines.forEach((line, index) => {
    const fence = FENCE.exec(line);
    if (open === null) {
      if (fence && !(fence[2]!.startsWith('`') && fence[3]!.includes('`'))) {
        open = { fence: fence[2]!, info: fence[3]!.trim(), line: index + 1, body: [] };
        prose.push('');
      } else prose.push(line);
      return;
    }
    const closing = /^ {0,3}(`{3,}|~{3,})\s*$/.exec(line);
    if (closing && closing[1]![0] === open.fence[0] && closing[1]!.length >= open.fence.length) {
      blocks.push({ info: open.info, body: open.body.join('\n'), line: open.line });
      open = null;
    } else open.body.push(line.replace(/^ {0,3}/, ''));
    prose.push('');
  });
  return { blocks, prose: prose.join('\n') };
}

/** GitHub's anchor of a heading: lower case, punctuation dropped, each space a hyphen. */
export function slug(heading: string): string {
  return heading
    .replace(/<[^>]+>/g, '')
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

/** The anchors a Markdown text's headings (outside code blocks) and its `<a id>`/`<a name>` tags give, repeats numbered as GitHub numbers them. */
export function anchors(text: string): Set<string> {
  const { prose } = fencedBlocks(text);
  const found = new Set<string>();
  const seen = new Map<string, number>();
  for (const match of prose.matchAll(/^ {0,3}#{1,6}\s+(.+?)\s*#*\s*$/gm)) {
    const base = slug(match[1]!);
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    found.add(count === 0 ? base : `${base}-${count}`);
  }
  for (const match of prose.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) found.add(match[1]!);
  return found;
}

export interface Link {
  target: string;
  line: number;
}

/** The link targets of a Markdown text outside code blocks and code spans: `[text](target)` and `src`/`href` attributes. */
export function links(text: string): Link[] {
  // Code spans (which may run over a line break) blanked, line breaks kept for the line numbers.
  const prose = fencedBlocks(text).prose.replace(/(`+)[\s\S]*?\1/g, (span) => span.replace(/[^\n]/g, ' '));
  const found: Link[] = [];
  prose.split('\n').forEach((visible, index) => {
    for (const match of visible.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) found.push({ target: match[1]!, line: index + 1 });
    for (const match of visible.matchAll(/\b(?:src|href)="([^"]+)"/g)) found.push({ target: match[1]!, line: index + 1 });
  });
  return found;
}

/** Reads a file under the root. */
export function readDoc(path: string, root = ROOT): string {
  return readFileSync(join(root, path), 'utf8');
}

/**
 * Every relative link of `files` that does not resolve: to a file or folder that does not exist, or
 * to a `#anchor` that no heading of the Markdown file it points to gives. External links
 * (`https:`, `mailto:`...) are not followed.
 */
export function brokenLinks(files: readonly string[], root = ROOT): string[] {
  const problems: string[] = [];
  const anchorsOf = new Map<string, Set<string>>();
  const anchorsIn = (path: string): Set<string> => {
    let found = anchorsOf.get(path);
    if (!found) anchorsOf.set(path, (found = anchors(readDoc(path, root))));
    return found;
  };
  for (const file of files) {
    for (const { target, line } of links(readDoc(file, root))) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue;
      const [pathPart = '', anchor] = target.split('#', 2) as [string, string | undefined];
      const path = pathPart === '' ? file : relative(root, join(root, file, '..', decodeURIComponent(pathPart)));
      if (path.startsWith('..') || !existsSync(join(root, path))) {
        problems.push(`${file}:${line}: ${target}: no such file (${path})`);
        continue;
      }
      if (anchor !== undefined && path.endsWith('.md') && !anchorsIn(path).has(decodeURIComponent(anchor))) {
        problems.push(`${file}:${line}: ${target}: no heading of ${path} has the anchor #${anchor}`);
      }
    }
  }
  return problems;
}
