/**
 * The logger's redaction (server/log.ts): a secret key's value is blanked at the top level and up
 * to three levels down, in a line's object and in a child's bindings, and a line without one is
 * written as given.
 */
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { describe, test } from 'node:test';
import { createLogger, redactSecrets } from '../../server/log.ts';

function capture() {
  const lines: Record<string, unknown>[] = [];
  const logger = createLogger({ level: 'info', destination: { write: (line: string) => void lines.push(JSON.parse(line)) } });
  return { logger, lines };
}

describe('log redaction', () => {
  test('secret keys are blanked at the top level and one, two and three levels down, in objects and arrays', () => {
    const { logger, lines } = capture();
    logger.info(
      {
        token: 'tok-top',
        request: { authorization: 'Bearer abc', path: '/x' },
        partner: { answer: { access_key: 'key-2', id: 7 } },
        deep: { a: { b: { document: '12345678909' } } },
        list: [{ customer_document: '98765432100' }, { password: 'hunter2' }],
        harmless: 'kept',
      },
      'something',
    );
    const line = lines[0]!;
    assert.equal(line.token, '[redacted]', 'top level');
    assert.deepEqual(line.request, { authorization: '[redacted]', path: '/x' }, 'one level down');
    assert.deepEqual(line.partner, { answer: { access_key: '[redacted]', id: 7 } }, 'two levels down');
    assert.deepEqual(line.deep, { a: { b: { document: '[redacted]' } } }, 'three levels down');
    assert.deepEqual(line.list, [{ customer_document: '[redacted]' }, { password: '[redacted]' }], 'inside an array');
    assert.equal(line.harmless, 'kept', 'other keys untouched');
    assert.ok(!JSON.stringify(line).match(/tok-top|abc|key-2|12345678909|98765432100|hunter2/), `no secret in ${JSON.stringify(line)}`);
  });

  test("a child's bindings are redacted too", () => {
    const { logger, lines } = capture();
    logger.child({ component: 'x', apiKey: 'k-123', nested: { cookie: 'c=1' } }).warn('bound');
    const line = lines[0]!;
    assert.equal(line.apiKey, '[redacted]', JSON.stringify(line));
    assert.deepEqual(line.nested, { cookie: '[redacted]' }, JSON.stringify(line));
    assert.equal(line.component, 'x', JSON.stringify(line));
    // A child's child keeps its parent's bindings and has its own redacted.
    logger.child({ component: 'y' }).child({ req_id: 'r-1', token: 't-9' }).info('nested');
    const nested = lines[1]!;
    assert.deepEqual([nested.component, nested.req_id, nested.token], ['y', 'r-1', '[redacted]'], JSON.stringify(nested));
  });

  test("the caller's object is not changed, and an Error stays an Error with its message", () => {
    const original = { partner: { token: 'secret-token' } };
    const redacted = redactSecrets(original);
    assert.equal(original.partner.token, 'secret-token', 'caller keeps its value');
    assert.equal(redacted.partner.token, '[redacted]', 'copy is blanked');

    const error = Object.assign(new Error('upstream refused'), { details: { authorization: 'Bearer zzz' } });
    const { logger, lines } = capture();
    logger.error({ err: error }, 'failed');
    const err = lines[0]!.err as { message: string; type: string; details: unknown; stack: string };
    assert.equal(err.message, 'upstream refused', JSON.stringify(err));
    assert.equal(err.type, 'Error', JSON.stringify(err));
    assert.deepEqual(err.details, { authorization: '[redacted]' }, JSON.stringify(err));
    assert.equal(error.details.authorization, 'Bearer zzz', 'the thrown error keeps its value');
  });

  test('an object without secrets is returned as it is, with no copy', () => {
    const line = { req_id: 'a-1', method: 'GET', path: '/api/payments/x', status: 200, ms: 0.4 };
    assert.equal(redactSecrets(line), line, 'same object');
    const nested = { a: { b: { c: { d: { token: 'below the searched depth' } } } } };
    assert.equal(redactSecrets(nested), nested, 'four levels down is past the search: same object');
  });
});

describe('stdout', () => {
  /** Runs `body` in a child process with `createLogger` in scope, and returns its stdout. */
  function child(body: string): Promise<string> {
    const script = `import { createLogger } from ${JSON.stringify(new URL('../../server/log.ts', import.meta.url).href)};\n${body}`;
    return new Promise((resolve, reject) => {
      execFile(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { timeout: 20_000 }, (error, stdout, stderr) =>
        error ? reject(new Error(`${error.message}\n${stderr}`)) : resolve(stdout),
      );
    });
  }

  test('lines are written in order, several apps sharing stdout, and what is pending is written when the process exits at once', async () => {
    const out = await child(`
      const a = createLogger(), b = createLogger();
      for (let i = 0; i < 500; i++) (i % 2 ? a : b).info({ i }, 'line');
      process.exit(0);
    `);
    const lines = out
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { i: number });
    assert.deepEqual(
      lines.map((line) => line.i),
      Array.from({ length: 500 }, (_, i) => i),
      `all 500 lines, in order (got ${lines.length})`,
    );
  });

  test('a line is written while the process goes on, without waiting for more lines or for the exit', async () => {
    // The child logs one line and then waits for this test to say it saw it: a line held until exit would never be seen.
    const script = `import { createLogger } from ${JSON.stringify(new URL('../../server/log.ts', import.meta.url).href)};
      createLogger().info('first');
      process.stdin.once('data', () => process.exit(0));`;
    const proc = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { stdio: ['pipe', 'pipe', 'inherit'] });
    let out = '';
    const seen = await new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => resolve(false), 10_000);
      proc.stdout.on('data', (chunk: Buffer) => {
        out += chunk.toString();
        if (out.includes('"msg":"first"')) {
          clearTimeout(timer);
          resolve(true);
        }
      });
    });
    proc.stdin.write('go\n');
    await new Promise((resolve) => proc.once('exit', resolve));
    assert.equal(seen, true, `the line reached stdout while the process was running: ${JSON.stringify(out)}`);
  });
});
