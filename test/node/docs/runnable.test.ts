/**
 * The shell blocks the docs mark runnable (```sh runnable, CONTRIBUTING.md "Runnable blocks") run as
 * written: each in a fresh temporary folder where `npx pix-checkout` is this repository's command line
 * (node_modules/.bin, as after installing pix-checkout-server), npm offline, no PIX_* variable from
 * this shell, a time limit; ```sh runnable sandbox blocks with a partner sandbox started in that folder
 * (`pix-checkout sandbox --port 0`) and the settings it prints in their environment. Each must exit 0.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { once } from 'node:events';
import { describe, test } from 'node:test';
import { ROOT, docFiles, fencedBlocks, readDoc } from '../../support/markdown.ts';

/** A fence's info string that marks a runnable block: `sh runnable`, optionally `sandbox`. */
const RUNNABLE = /^(?:sh|bash)\s+runnable(\s+sandbox)?$/;
const TIME_LIMIT_MS = 60_000;

interface Result {
  code: number | null;
  output: string;
}

/** A folder as a merchant's project has it after installing the server package: `npx pix-checkout` finds the command line. */
function project(): string {
  const folder = mkdtempSync(join(tmpdir(), 'pix-docs-run-'));
  mkdirSync(join(folder, 'node_modules', '.bin'), { recursive: true });
  symlinkSync(join(ROOT, 'bin', 'pix-checkout.mjs'), join(folder, 'node_modules', '.bin', 'pix-checkout'));
  return folder;
}

/** This process's environment without any PIX_ or SANDBOX_ setting, npm kept offline (it never asks the registry). */
function cleanEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) if (!/^(PIX_|SANDBOX_|OTEL_|npm_)/.test(name)) env[name] = value;
  return { ...env, npm_config_offline: 'true', npm_config_update_notifier: 'false', npm_config_fund: 'false', ...extra };
}

/** Runs `script` with bash (-e -o pipefail) in `cwd`; killed (with its children) past the time limit. */
async function runBlock(script: string, cwd: string, env: NodeJS.ProcessEnv, limitMs = TIME_LIMIT_MS): Promise<Result> {
  const child = spawn('bash', ['-e', '-o', 'pipefail', '-c', script], { cwd, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const timer = setTimeout(() => {
    output += `\n(killed after ${limitMs} ms)`;
    kill(child);
  }, limitMs);
  const [code] = (await once(child, 'close')) as [number | null];
  clearTimeout(timer);
  return { code, output };
}

function kill(child: ChildProcess): void {
  try {
    process.kill(-child.pid!, 'SIGKILL');
  } catch {
    // already gone
  }
}

/** `pix-checkout sandbox --port 0 --json` in `cwd`: its settings, and how to stop it. */
async function startSandbox(cwd: string): Promise<{ settings: Record<string, string>; stop: () => Promise<void> }> {
  const child = spawn(process.execPath, [join(ROOT, 'bin', 'pix-checkout.mjs'), 'sandbox', '--port', '0', '--json'], {
    cwd,
    env: cleanEnv({}),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const line = await new Promise<string>((resolve, reject) => {
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      if (stdout.includes('\n')) resolve(stdout.slice(0, stdout.indexOf('\n')));
    });
    child.once('exit', (code) => reject(new Error(`the sandbox exited (${code}): ${stderr}`)));
  });
  const { settings } = JSON.parse(line) as { settings: Record<string, string> };
  return {
    settings,
    stop: async () => {
      if (child.exitCode !== null) return;
      const closed = once(child, 'close');
      child.kill('SIGTERM');
      await closed;
    },
  };
}

const blocks = docFiles().flatMap((file) =>
  fencedBlocks(readDoc(file))
    .blocks.filter((block) => RUNNABLE.test(block.info))
    .map((block) => ({ file, ...block, sandbox: RUNNABLE.exec(block.info)![1] !== undefined })),
);

describe('the shell blocks the docs mark runnable', () => {
  test('there are some, in more than one page, and some need the sandbox', () => {
    assert.ok(blocks.length >= 4, `${blocks.length} runnable blocks`);
    assert.ok(new Set(blocks.map((block) => block.file)).size >= 2);
    assert.ok(blocks.some((block) => block.sandbox));
  });

  for (const block of blocks) {
    test(`${block.file}:${block.line}${block.sandbox ? ' (sandbox)' : ''}`, { timeout: TIME_LIMIT_MS + 30_000 }, async () => {
      const folder = project();
      const sandbox = block.sandbox ? await startSandbox(folder) : null;
      try {
        const result = await runBlock(block.body, folder, cleanEnv(sandbox?.settings ?? {}));
        assert.equal(result.code, 0, `${block.file}:${block.line} exited ${result.code}:\n${block.body}\n--- output ---\n${result.output}`);
      } finally {
        await sandbox?.stop();
        rmSync(folder, { recursive: true, force: true });
      }
    });
  }
});

test('a block that fails, or runs past its limit, is a failure', async () => {
  const folder = project();
  try {
    assert.equal((await runBlock('npx pix-checkout --help | grep -q "Usage: pix-checkout"', folder, cleanEnv({}))).code, 0);
    assert.notEqual((await runBlock('npx pix-checkout no-such-command', folder, cleanEnv({}))).code, 0);
    assert.notEqual((await runBlock('false | cat', folder, cleanEnv({}))).code, 0, 'pipefail');
    const slow = await runBlock('sleep 30', folder, cleanEnv({}), 500);
    assert.notEqual(slow.code, 0);
    assert.match(slow.output, /killed after 500 ms/);
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
});
