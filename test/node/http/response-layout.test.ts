/**
 * Node's responses keep their fields in the object (V8's fast mode) however the collector runs once
 * the status stream's module is loaded (server/http/response-layout.ts). A child process checks it,
 * being the only place where V8's `%HasFastProperties` and a forced collection are allowed
 * (`--allow-natives-syntax --expose-gc`).
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { describe, it } from 'node:test';
import { RESPONSES, completeResponseLayout } from '../../../server/http/response-layout.ts';

/**
 * In a fresh process with the status stream's module loaded: a node:http server answers 10 requests
 * one after the other, with a full collection after each once the answer is closed and released (the
 * case that fixes a response at no in-object fields, whichever request is the seventh construction).
 * Returns, per request, whether its response had fast properties when the server handed it over.
 */
function responsesFastAfterCollections(): Promise<boolean[]> {
  const script = `
    import { createServer } from 'node:http';
    await import(${JSON.stringify(new URL('../../../server/http/event-stream.ts', import.meta.url).href)});
    const hasFastProperties = new Function('o', 'return %HasFastProperties(o)');
    const fast = [];
    let closed;
    const server = createServer((_request, response) => {
      fast.push(hasFastProperties(response));
      response.once('close', () => setImmediate(closed));
      response.end('ok');
    });
    await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
    for (let i = 0; i < 10; i++) {
      const released = new Promise((resolve) => (closed = resolve));
      await (await fetch('http://127.0.0.1:' + server.address().port + '/')).text();
      await released;
      gc();
    }
    server.closeAllConnections();
    server.close();
    process.stdout.write(JSON.stringify(fast));
  `;
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      ['--allow-natives-syntax', '--expose-gc', '--import', 'tsx', '--input-type=module', '-e', script],
      { timeout: 30_000 },
      (error, stdout, stderr) => (error ? reject(new Error(`${error.message}\n${stderr}`)) : resolve(JSON.parse(stdout) as boolean[])),
    );
  });
}

describe("Node's response layout", () => {
  it('every response keeps fast properties, with a full collection between each two', async () => {
    const fast = await responsesFastAfterCollections();
    assert.equal(fast.length, 10);
    assert.deepEqual(
      fast.map((isFast, i) => `request ${i + 1}: ${isFast ? 'fast' : 'dictionary'}`),
      fast.map((_, i) => `request ${i + 1}: fast`),
    );
  });

  it("Node's server builds the startup responses synchronously, from the request handed to it", () => {
    // Built later (asynchronously), they would not be held together when V8 fixes the layout.
    assert.equal(completeResponseLayout(), RESPONSES);
  });
});
