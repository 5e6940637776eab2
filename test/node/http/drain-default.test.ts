/**
 * The drain behind a balancer: with `PIX_TRUSTED_PROXIES` set, an unset
 * `PIX_SHUTDOWN_DRAIN_MS` keeps the port open 5 s after SIGTERM (within the grace period), so a
 * balancer probing `/ready` sees it fail before connections are refused; an explicit 0 there is
 * warned about at start (the log and `/ready`'s warnings).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { proxyConfig } from '../../../server/config/index.ts';
import { createLogger } from '../../../server/log.ts';
import { createProxy } from '../../../server/proxy.ts';

describe('the drain default', () => {
  test('behind a balancer an unset drain is 5 s, at most the grace period; an explicit value stands; alone it is 0', () => {
    assert.equal(proxyConfig({ PIX_TRUSTED_PROXIES: '1' }).shutdown.drainMs, 5000);
    assert.equal(proxyConfig({ PIX_TRUSTED_PROXIES: '1', PIX_SHUTDOWN_GRACE_MS: '3000' }).shutdown.drainMs, 3000);
    assert.equal(proxyConfig({ PIX_TRUSTED_PROXIES: '2', PIX_SHUTDOWN_DRAIN_MS: '0' }).shutdown.drainMs, 0);
    assert.equal(proxyConfig({ PIX_TRUSTED_PROXIES: '1', PIX_SHUTDOWN_DRAIN_MS: '8000' }).shutdown.drainMs, 8000);
    assert.equal(proxyConfig({}).shutdown.drainMs, 0);
  });

  test('0 behind a balancer is warned about at start, in the log and in /ready', { timeout: 60_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'pix-drain-'));
    const lines: { level: number; msg: string }[] = [];
    const log = createLogger({ level: 'warn', destination: { write: (line: string) => void lines.push(JSON.parse(line) as { level: number; msg: string }) } });
    const proxy = await createProxy(proxyConfig({ PIX_TRUSTED_PROXIES: '1', PIX_SHUTDOWN_DRAIN_MS: '0', PIX_DATA_DIR: join(dir, 'data') }), log, {
      background: false,
    });
    try {
      assert.ok(lines.some((l) => l.level === 40 && l.msg.startsWith('PIX_SHUTDOWN_DRAIN_MS is 0 behind a balancer')));
      const ready = (await (await proxy.app.request('/ready')).json()) as { warnings?: string[] };
      assert.ok(
        ready.warnings?.some((w) => w.startsWith('PIX_SHUTDOWN_DRAIN_MS is 0 behind a balancer')),
        JSON.stringify(ready),
      );
    } finally {
      await proxy.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
