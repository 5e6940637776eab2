/**
 * `pix-checkout listen` and `pix-checkout report` against the sandbox stack, as a developer runs them:
 * listen forwards a checkout paid in the sandbox to a local receiver that verifies it with the
 * Standard Webhooks reference library and listen's own printed secret (the proxy's never shows);
 * report exports the day's checkouts, payments, a refund and a payout as CSV and JSON, with totals,
 * in the merchant's time zone. Real sockets on 127.0.0.1, port 0; everything stopped in `after`.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { CheckoutView, OutcomeEvent } from '../../../src/shared/contract.ts';
import { Report } from '../../../src/shared/merchant.ts';
import { main } from '../../../server/cli/index.ts';
import { startDevStack, type DevStack } from '../../../server/dev-stack.ts';
import { createLogger } from '../../../server/log.ts';
import { paidCheckout, waitFor } from '../../support/checks.ts';

const PROXY_SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';

describe('pix-checkout listen and report against the sandbox', () => {
  let stack: DevStack;
  let server: Server;
  let receiverUrl: string;
  /** What the local receiver verified, with the secret listen printed. */
  const verified: OutcomeEvent[] = [];
  const refused: string[] = [];
  let listenSecret: string | null = null;
  const cli = (args: string[], extra: Partial<Parameters<typeof main>[1]> = {}) => {
    const out: string[] = [];
    const err: string[] = [];
    const chunks: string[] = [];
    const io = { out: (s: string) => void out.push(s), err: (s: string) => void err.push(s), env: {}, write: (c: string) => void chunks.push(c), ...extra };
    return { out, err, chunks, run: main([...args, '--proxy', stack.apiUrl, '--api-key', stack.apiKey], io) };
  };

  before(async () => {
    server = createServer((req, res) => {
      const parts: Buffer[] = [];
      req.on('data', (c: Buffer) => parts.push(c));
      req.on('end', () => {
        try {
          verified.push(
            OutcomeEvent.parse(new Webhook(listenSecret ?? '').verify(Buffer.concat(parts).toString('utf8'), req.headers as Record<string, string>)),
          );
          res.writeHead(204).end();
        } catch (error) {
          refused.push((error as Error).message);
          res.writeHead(400).end();
        }
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    receiverUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks`;
    // The proxy delivers to a backend of its own (signed with its secret); listen is a second, local reader.
    stack = await startDevStack({ merchantWebhook: { url: `${receiverUrl}/proxy`, secret: PROXY_SECRET }, logger: createLogger({ level: 'silent' }) });
  });
  after(async () => {
    await stack.close();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  test('listen forwards a payment paid in the sandbox, signed with its own secret, one line with the answer', async () => {
    const stop = new AbortController();
    const listen = cli(['listen', '--forward-to', receiverUrl], { signal: stop.signal });
    const ready = await waitFor('listen ready', () => listen.out.find((l) => l.startsWith('Ready!')));
    listenSecret = /signing secret is (whsec_\S+)/.exec(ready)?.[1] ?? null;
    assert.ok(listenSecret, ready);
    const checkout = await paidCheckout(stack, 10.5, 'listen');
    const line = await waitFor('a line for payment.paid', () => listen.out.find((l) => l.includes('payment.paid')));
    assert.match(line, /\[\d+\] payment\.paid\s+evt_[0-9a-f]{32} {2}-> 204 No Content \(\d+ ms\)$/);
    const event = await waitFor('the verified event', () => verified.find((e) => e.data.checkout_id === checkout));
    assert.equal(event.type, 'payment.paid');
    assert.equal(event.data.value, 10.5);
    stop.abort();
    assert.equal(await listen.run, 0);

    // --after <seq - 1>: a second listen forwards that event again, from the proxy's record (as a reconnection does).
    const seq = Number(/\[(\d+)\]/.exec(line)?.[1]);
    const again = new AbortController();
    const replay = cli(['listen', '--forward-to', receiverUrl, '--secret', listenSecret, '--after', String(seq - 1)], { signal: again.signal });
    const replayed = await waitFor('the same event forwarded again', () => replay.out.find((l) => l.includes(event.id)));
    assert.match(replayed, /-> 204 No Content/);
    assert.match(replay.out[0] ?? '', /signed with the secret you gave/);
    again.abort();
    assert.equal(await replay.run, 0);
    // The proxy's own signing secret and the API key never show.
    const printed = [...listen.out, ...listen.err].join('\n');
    assert.ok(!printed.includes(PROXY_SECRET) && !printed.includes(stack.apiKey), printed);
    // The proxy's deliveries (signed with its secret) are refused by a receiver that only knows listen's.
    assert.ok(refused.length > 0 && verified.every((e) => e.id === event.id || e.data.checkout_id !== checkout));
  });

  test('listen with a wrong API key says why and exits 1, naming no key', async () => {
    const out: string[] = [];
    const err: string[] = [];
    const code = await main(['listen', '--forward-to', receiverUrl, '--proxy', stack.apiUrl, '--api-key', 'wrong-key-0123456789abcdef'], {
      out: (s) => void out.push(s),
      err: (s) => void err.push(s),
      env: {},
    });
    assert.equal(code, 1);
    assert.match(err.join('\n'), /401 unauthorized/);
    assert.doesNotMatch(err.join('\n'), /wrong-key/);
  });

  test('report: checkouts, payments, a refund and a payout, one row each, in the time zone, with totals (CSV and JSON)', async () => {
    const paid = await paidCheckout(stack, 20, 'report');
    const headers = { authorization: `Bearer ${stack.apiKey}`, 'content-type': 'application/json' };
    const open = await fetch(`${stack.apiUrl}/checkouts`, { method: 'POST', headers, body: JSON.stringify({ value: 7.25, order_id: `open-${process.pid}` }) });
    const openId = CheckoutView.parse(await open.json()).checkout_id;
    const refund = await fetch(`${stack.apiUrl}/checkouts/${paid}/refunds`, {
      method: 'POST',
      headers: { ...headers, 'idempotency-key': randomUUID() },
      body: JSON.stringify({ value: 5, pix_key: 'ana@cliente.example' }),
    });
    assert.equal(refund.status, 201, await refund.clone().text());
    const payout = await fetch(`${stack.apiUrl}/transfers`, {
      method: 'POST',
      headers: { ...headers, 'idempotency-key': randomUUID() },
      body: JSON.stringify({ value: 3.33, pix_key: 'ana@cliente.example', reference: 'seller-7' }),
    });
    assert.equal(payout.status, 201, await payout.clone().text());

    const day = (offset: number) => new Date(Date.now() + offset * 86_400_000).toISOString().slice(0, 10);
    const csv = cli(['report', '--from', day(-1), '--to', day(1)]);
    assert.equal(await csv.run, 0, csv.err.join('\n'));
    const lines = csv.chunks.join('').trimEnd().split('\r\n');
    assert.equal(lines[0], 'kind,id,reference,checkout_id,order_id,status,amount,created_at,settled_at,count');
    const rows = lines.slice(1).map((l) => l.split(','));
    const of = (kind: string) => rows.filter((r) => r[0] === kind);
    assert.equal(of('checkout').length, 3, 'two paid (listen, report) and one open');
    assert.equal(of('payment').length, 2);
    assert.deepEqual(
      of('checkout')
        .find((r) => r[1] === openId)
        ?.slice(5, 7),
      ['open', '7.25'],
    );
    const paidRow = of('payment').find((r) => r[3] === paid)!;
    assert.deepEqual([paidRow[5], paidRow[6]], ['paid', '20.00']);
    assert.match(paidRow[4]!, /^report-/, 'the order id');
    assert.match(paidRow[7]!, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}-03:00$/, 'São Paulo time, with its offset');
    assert.match(paidRow[8]!, /-03:00$/, 'settled');
    assert.deepEqual(
      of('refund').map((r) => [r[3], r[6]]),
      [[paid, '5.00']],
    );
    assert.deepEqual(
      of('payout').map((r) => r[6]),
      ['3.33'],
    );
    const totals = of('total').map((r) => `${r[1]} ${r[5]} ${r[6]} ${r[9]}`);
    assert.ok(totals.includes('payment paid 30.50 2'), totals.join('; '));
    assert.ok(totals.includes('checkout open 7.25 1'), totals.join('; '));

    const json = cli(['report', '--from', day(-1), '--to', day(1), '--format', 'json', '--time-zone', 'UTC']);
    assert.equal(await json.run, 0, json.err.join('\n'));
    const report = Report.parse(JSON.parse(json.chunks.join('')));
    assert.equal(report.rows.length, rows.length - of('total').length);
    assert.ok(report.rows.every((r) => r.created_at.endsWith('+00:00')));
    assert.deepEqual(
      report.totals.find((t) => t.kind === 'payment' && t.status === 'paid'),
      { kind: 'payment', status: 'paid', count: 2, amount: '30.50' },
    );
  });

  test('report refuses a bad range before asking (exit 2), and the route refuses a wrong key', async () => {
    for (const args of [
      ['--from', '2030-02-30', '--to', '2030-03-01'],
      ['--from', '2030-03-02', '--to', '2030-03-01'],
      ['--from', '2030-01-01', '--to', '2031-06-01'],
      ['--from', '2030-01-01', '--to', '2030-01-02', '--format', 'xlsx'],
    ]) {
      const run = cli(['report', ...args]);
      assert.equal(await run.run, 2, args.join(' '));
    }
    const zone = cli(['report', '--from', '2030-01-01', '--to', '2030-01-02', '--time-zone', 'Mars/Olympus']);
    assert.equal(await zone.run, 2);
    assert.match(zone.err.join('\n'), /time_zone/);
    const res = await fetch(`${stack.apiUrl}/reports?from=2030-01-01&to=2030-01-02`, { headers: { authorization: 'Bearer nope' } });
    assert.equal(res.status, 401);
  });
});
