/**
 * What a newcomer types, taken from the docs and the Dockerfile as written, for the tests that run it
 * literally (test/e2e/package.test.ts): the shell lines of the guides' code blocks, a fresh checkout
 * of the repository to type them in, the Dockerfile's steps replayed without a container daemon, and
 * what a packed tarball holds.
 */
import { execFile, execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const big = { maxBuffer: 64 * 1024 * 1024 };

/** A shell line of a fenced code block in a Markdown file, with where it stands. */
export interface DocumentedLine {
  file: string;
  line: number;
  command: string;
}

/** The Markdown files a newcomer reads: README.md, CONTRIBUTING.md and everything under docs/. */
export function markdownFiles(repo: string): string[] {
  const files = ['README.md', 'CONTRIBUTING.md'].filter((name) => existsSync(join(repo, name)));
  const visit = (dir: string): void => {
    for (const entry of readdirSync(join(repo, dir), { withFileTypes: true })) {
      const path = `${dir}/${entry.name}`;
      if (entry.isDirectory()) visit(path);
      else if (entry.name.endsWith('.md')) files.push(path);
    }
  };
  if (existsSync(join(repo, 'docs'))) visit('docs');
  return files;
}

/** Every line of a `sh`/`bash`/`shell` code block in the Markdown files that matches `pattern`. */
export function documentedLines(repo: string, pattern: RegExp): DocumentedLine[] {
  const found: DocumentedLine[] = [];
  for (const file of markdownFiles(repo)) {
    let shell = false;
    let fenced = false;
    readFileSync(join(repo, file), 'utf8')
      .split('\n')
      .forEach((text, index) => {
        const fence = /^\s*```\s*(\w*)/.exec(text);
        if (fence) {
          shell = !fenced && ['sh', 'bash', 'shell', 'console'].includes(fence[1]!);
          fenced = !fenced;
        } else if (shell && pattern.test(text)) found.push({ file, line: index + 1, command: text.trim() });
      });
  }
  return found;
}

/**
 * A fresh checkout of the working tree in `dest`: the files git tracks and the new ones it does not
 * ignore, as they are now (so an uncommitted change is what gets tried), nothing built or installed.
 */
export function freshCheckout(repo: string, dest: string): void {
  const files = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], { cwd: repo, ...big })
    .toString()
    .split('\0')
    .filter((file) => file && existsSync(join(repo, file)));
  for (const file of files) {
    mkdirSync(dirname(join(dest, file)), { recursive: true });
    cpSync(join(repo, file), join(dest, file));
  }
}

/** A .dockerignore pattern as a matcher of paths relative to the build context (Go's filepath.Match, `**` for any depth). */
function ignoreMatcher(pattern: string): RegExp {
  const body = pattern
    .replace(/^\/+|\/+$/g, '')
    .split(/(\*\*\/?|\*|\?)/)
    .map((part) => (part.startsWith('**') ? '(?:.*/)?' : part === '*' ? '[^/]*' : part === '?' ? '[^/]' : part.replace(/[.+^${}()|[\]\\]/g, '\\$&')))
    .join('');
  return new RegExp(`^${body}$`);
}

/** Copies the build context `from` to `to` less what .dockerignore leaves out (a folder left out, all of it). */
function copyContext(context: string, from: string, to: string, ignored: RegExp[]): void {
  const visit = (path: string): void => {
    const rel = relative(context, path);
    if (rel && ignored.some((pattern) => pattern.test(rel))) return;
    if (statSync(path).isDirectory()) for (const entry of readdirSync(path)) visit(join(path, entry));
    else {
      const target = join(to, relative(from, path));
      mkdirSync(dirname(target), { recursive: true });
      cpSync(path, target);
    }
  };
  visit(from);
}

/** One build stage of a replayed Dockerfile: its name and the folder standing for its `/`. */
export interface ReplayedStage {
  name: string;
  root: string;
}

/**
 * Replays a Dockerfile's FROM, WORKDIR, COPY and RUN steps in folders under `dir`, one per stage, as
 * `/bin/sh -c` would run them in the image, without a container daemon: each stage's absolute paths
 * become paths under its folder (the base image's system folders stay the machine's). ENV, USER,
 * EXPOSE and the like describe the running image and change nothing on disk. What a step prints goes
 * to `log`; a failing step throws with its line and output.
 */
export async function replayDockerfile(dockerfile: string, context: string, dir: string, log: (line: string) => void = () => {}): Promise<ReplayedStage[]> {
  const system = /^\/(?:dev|proc|sys|usr|bin|sbin|lib|lib64|etc|tmp)(?:\/|$)/;
  const ignoreFile = join(context, '.dockerignore');
  const ignored = existsSync(ignoreFile)
    ? readFileSync(ignoreFile, 'utf8')
        .split('\n')
        .map((line) => line.trim())
        .filter((line) => line && !line.startsWith('#'))
        .map(ignoreMatcher)
    : [];
  const steps: { line: number; text: string }[] = [];
  let pending: { line: number; text: string } | null = null;
  readFileSync(dockerfile, 'utf8')
    .split('\n')
    .forEach((text, index) => {
      if (/^\s*#/.test(text) || !text.trim()) return;
      const continued = /\\\s*$/.test(text);
      const part = text.replace(/\\\s*$/, '');
      pending = pending ? { line: pending.line, text: `${pending.text} ${part}` } : { line: index + 1, text: part };
      if (!continued) {
        steps.push(pending);
        pending = null;
      }
    });
  const stages: (ReplayedStage & { workdir: string })[] = [];
  const inStage = (stage: ReplayedStage & { workdir: string }, path: string): string =>
    path.startsWith('/') ? (system.test(path) ? path : join(stage.root, path)) : join(stage.root, stage.workdir, path);
  for (const { line, text } of steps) {
    const [, instruction = '', rest = ''] = /^\s*(\w+)\s+([^]*)$/.exec(text) ?? [];
    const stage = stages.at(-1);
    const where = `Dockerfile:${line}`;
    switch (instruction.toUpperCase()) {
      case 'FROM': {
        const name = /\bAS\s+(\S+)/i.exec(rest)?.[1] ?? `stage-${stages.length}`;
        stages.push({ name, root: join(dir, `${stages.length}-${name}`), workdir: '/' });
        mkdirSync(stages.at(-1)!.root, { recursive: true });
        break;
      }
      case 'WORKDIR':
        stage!.workdir = resolve(stage!.workdir, rest.trim());
        mkdirSync(inStage(stage!, stage!.workdir), { recursive: true });
        break;
      case 'COPY': {
        const words = rest.trim().split(/\s+/);
        const from = words.find((word) => word.startsWith('--from='))?.slice('--from='.length);
        const paths = words.filter((word) => !word.startsWith('--'));
        const dest = paths.pop()!;
        const source = from ? stages.find((s) => s.name === from) : undefined;
        if (from && !source) throw new Error(`${where}: no stage ${from}`);
        const target = inStage(stage!, dest);
        for (const path of paths) {
          const origin = source ? inStage({ ...source }, path) : join(context, path);
          if (statSync(origin).isDirectory()) {
            mkdirSync(target, { recursive: true });
            if (source) cpSync(origin, target, { recursive: true });
            else copyContext(context, origin, target, ignored);
          } else {
            const file = dest.endsWith('/') ? join(target, path.split('/').pop()!) : target;
            mkdirSync(dirname(file), { recursive: true });
            cpSync(origin, file);
          }
        }
        break;
      }
      case 'RUN': {
        // Absolute paths that are the image's own (not the base image's system folders) move under the stage's folder.
        const command = rest.replace(/(^|[\s='"])(\/[\w.-][\w./*-]*)/g, (match, before: string, path: string) =>
          system.test(path) ? match : `${before}${join(stage!.root, path)}`,
        );
        log(`${where}: ${command}`);
        try {
          const { stdout, stderr } = await run('/bin/sh', ['-c', command], { cwd: inStage(stage!, stage!.workdir), ...big });
          if (stdout.trim()) log(stdout.trim());
          if (stderr.trim()) log(stderr.trim());
        } catch (error) {
          const failed = error as { stdout?: string; stderr?: string; message: string };
          throw new Error(`${where} failed: ${command}\n${failed.stdout ?? ''}${failed.stderr ?? failed.message}`, { cause: error });
        }
        break;
      }
      default:
        break;
    }
  }
  return stages;
}

/** What `npm run pack` reports of a tarball, read back from the file itself. */
export interface TarballInfo {
  name: string;
  version: string;
  path: string;
  filename: string;
  size: number;
  integrity: string;
  files: string[];
  dependencies: Record<string, string>;
}

/** A packed tarball's name, version, files (without `package/`), dependencies, size and sha512 integrity. */
export async function readTarball(path: string): Promise<TarballInfo> {
  const listing = await run('tar', ['-tzf', path], big);
  const manifest = JSON.parse((await run('tar', ['-xzOf', path, 'package/package.json'], big)).stdout) as {
    name: string;
    version: string;
    dependencies?: Record<string, string>;
  };
  return {
    name: manifest.name,
    version: manifest.version,
    path,
    filename: path.split('/').pop()!,
    size: statSync(path).size,
    integrity: `sha512-${createHash('sha512').update(readFileSync(path)).digest('base64')}`,
    files: listing.stdout
      .split('\n')
      .filter((line) => line && !line.endsWith('/'))
      .map((line) => line.replace(/^package\//, '')),
    dependencies: manifest.dependencies ?? {},
  };
}
