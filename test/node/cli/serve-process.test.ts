/** `pix-checkout serve` as a real process: listens, answers, and stops gracefully on SIGTERM. */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { describe, test } from 'node:test';
import { CheckoutView, PaymentView } from '../../../src/shared/contract.ts';
import { SANDBOX_DEFAULTS } from '../../../server/config/index.ts';

describe('pix-checkout serve', () => {
  test('--help describes it', async () => {
    const child = spawn(process.execPath, ['bin/pix-checkout.mjs', 'serve', '--help'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (chunk) => (out += chunk));
    const [code] = await once(child, 'exit');
    assert.equal(code, 0);
    assert.match(out, /Usage: pix-checkout serve/);
    assert.match(out, /SIGTERM/);
  });

  test('bad configuration: exit 2 listing every problem', async () => {
    const env = { ...process.env, PIX_BASE_URL: 'https://partner.example', PIX_TOKEN: 't', PIX_OPEN_AMOUNT: 'perhaps' };
    const child = spawn(process.execPath, ['bin/pix-checkout.mjs', 'serve'], { stdio: ['ignore', 'pipe', 'pipe'], env });
    let err = '';
    child.stderr.on('data', (chunk) => (err += chunk));
    const [code] = await once(child, 'exit');
    assert.equal(code, 2);
    assert.match(err, /PIX_USER_AGENT is required/);
    assert.match(err, /PIX_API_KEY is required/);
    assert.match(err, /PIX_OPEN_AMOUNT must be true or false/);
  });

  test('sandbox mode with no configuration; SIGTERM ends open streams and exits 0', async () => {
    const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: process.env.HOME, PIX_LOG_LEVEL: 'info' };
    const child = spawn(process.execPath, ['bin/pix-checkout.mjs', 'serve', '--port', '0'], { stdio: ['ignore', 'pipe', 'pipe'], env, cwd: process.cwd() });
    try {
      const lines = createInterface({ input: child.stdout });
      let url = '';
      for await (const line of lines) {
        const entry = JSON.parse(line) as { msg: string; url?: string };
        if (entry.msg === 'pix-checkout proxy listening') {
          url = entry.url!;
          break;
        }
      }
      assert.match(url, /^http:\/\/127\.0\.0\.1:\d+$/);
      const created = await fetch(`${url}/api/checkouts`, {
        method: 'POST',
        headers: { authorization: `Bearer ${SANDBOX_DEFAULTS.apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ value: 15, order_id: 'serve-1' }),
      });
      assert.equal(created.status, 201);
      const checkout = CheckoutView.parse(await created.json());
      const payment = PaymentView.parse(await (await fetch(`${url}/api/checkouts/${checkout.checkout_id}/payment`, { method: 'POST' })).json());
      const stream = (await fetch(`${url}/api/payments/${payment.reference}/events`)).body!.getReader();
      assert.ok((await stream.read()).value);

      const exited = once(child, 'exit');
      child.kill('SIGTERM');
      let ended = false;
      for (let i = 0; i < 10 && !ended; i++) ended = (await stream.read()).done;
      assert.equal(ended, true, 'the stream ended');
      const [code] = await exited;
      assert.equal(code, 0);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  });
});
