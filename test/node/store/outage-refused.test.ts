/**
 * What an outage cost, in its own lines (store/outage.ts): work refused or skipped because of
 * the store (a partner's notification answered 503, a payment's poll) is counted by what it was, in the
 * repeat line (since the last line) and in the closing one (in all), so each such failure needs no
 * line above warn of its own. A fake clock.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { createLogger } from '../../../server/log.ts';
import { StoreOutage } from '../../../server/store/outage.ts';
import { StoreError } from '../../../server/store/store.ts';

interface Line {
  level: number;
  msg: string;
  refused?: Record<string, number>;
}

describe('the outage counts what it refused (a fake clock)', () => {
  test('notifications refused and polls failed, in the repeat line and in the closing line', () => {
    const lines: Line[] = [];
    const log = createLogger({ level: 'info', destination: { write: (line: string) => void lines.push(JSON.parse(line) as Line) } });
    let now = 0;
    const outage = new StoreOutage({ log, now: () => now, repeatMs: 60_000 });
    const down = new StoreError('the server shut down', '57P01');
    outage.failed('webhook-intake', down, 'notifications refused');
    for (let i = 0; i < 4; i++) outage.failed('webhook-intake', down, 'notifications refused');
    for (let i = 0; i < 3; i++) outage.failed('payment-watches', down, 'payment polls failed');
    outage.failed('reconciler', down);
    now = 61_000;
    outage.failed('webhook-intake', down, 'notifications refused');
    now = 62_000;
    outage.failed('payment-watches', down, 'payment polls failed');
    outage.recovered('reconciler', outage.started());
    assert.equal(lines.length, 3, JSON.stringify(lines.map((l) => l.msg)));
    const [opened, still, ended] = lines;
    assert.equal(opened!.refused, undefined);
    assert.deepEqual(still!.refused, { 'notifications refused': 5, 'payment polls failed': 3 });
    assert.match(still!.msg, /; 5 notifications refused, 3 payment polls failed since the last line$/);
    assert.deepEqual(ended!.refused, { 'notifications refused': 6, 'payment polls failed': 4 });
    assert.match(ended!.msg, /; 6 notifications refused, 4 payment polls failed$/);
  });
});
