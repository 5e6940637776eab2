/**
 * `GET /metrics` (server/routes/metrics.ts, server/observability/metrics.ts): served only with
 * PIX_METRICS_TOKEN set and only to its bearer, never with CORS headers, and its counters move with
 * real traffic: a checkout paid in the real sandbox (HTTPS, its notification to the proxy, a real
 * SQLite store) and delivered to a merchant receiver on a real socket.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { PaymentView } from '../../../src/shared/contract.ts';
import { createApp } from '../../../server/app.ts';
import { startDevStack, type DevStack } from '../../../server/dev-stack.ts';
import { closeServer } from '../../../server/http/close-server.ts';
import { Metrics } from '../../../server/observability/metrics.ts';
import { PARTNER_PATHS } from '../../../server/partner/wire.ts';
import { createLogger } from '../../../server/log.ts';
import { expectError, paidCheckout, stackControl, waitFor } from '../../support/checks.ts';

const TOKEN = 'metrics-token-0123456789abcdef0123456789abcdef';
const SHOP = 'https://shop.example';

/** One sample's value from Prometheus text: `name{labels}` exactly as printed (labels in their declared order); 0 when absent. */
function sample(text: string, series: string): number {
  for (const line of text.split('\n')) {
    if (line.startsWith(`${series} `)) return Number(line.slice(series.length + 1));
  }
  return 0;
}

let stack: DevStack;
let receiver: Server;
let delivered = 0;

async function scrape(token = TOKEN): Promise<string> {
  const res = await fetch(`${stack.url}/metrics`, { headers: { authorization: `Bearer ${token}` } });
  const text = await res.text();
  assert.equal(res.status, 200, text);
  assert.match(res.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
  return text;
}

before(async () => {
  receiver = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      delivered++;
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`;
  stack = await startDevStack({
    metricsToken: TOKEN,
    merchantWebhook: { url, secret: 'metrics-test-merchant-secret-0123456789abcdef' },
    logger: createLogger({ level: 'silent' }),
  });
});

after(async () => {
  await stack.close();
  await closeServer(receiver);
});

describe('GET /metrics', () => {
  test('a paid checkout moves the counters: created, finalized paid, partner calls, HTTP requests, webhook accepted, deliveries', async () => {
    const before = await scrape();
    await paidCheckout(stack, 12.5, 'metrics');
    await waitFor('the outcome delivered to the merchant', () => delivered > 0);
    const text = await waitFor('the delivery counted', async () => {
      const now = await scrape();
      return sample(now, 'pix_checkout_merchant_deliveries_total{result="delivered"}') > 0 && now;
    });
    const moved = (series: string) => sample(text, series) - sample(before, series);

    assert.equal(moved('pix_checkout_payments_created_total'), 1);
    assert.equal(moved('pix_checkout_payments_finalized_total{outcome="paid"}'), 1);
    assert.equal(moved('pix_checkout_outcome_events_total{type="payment.paid"}'), 1);
    assert.equal(moved('pix_checkout_payment_time_to_paid_seconds_count'), 1);
    assert.equal(moved('pix_checkout_partner_call_duration_seconds_count{operation="createPayment",outcome="ok"}'), 1);
    assert.ok(
      moved('pix_checkout_partner_call_duration_seconds_count{operation="getPayment",outcome="ok"}') >= 1,
      'the notification confirmed with the partner',
    );
    assert.equal(moved('pix_checkout_http_request_duration_seconds_count{method="POST",route="/api/checkouts",status="201"}'), 1);
    assert.equal(moved('pix_checkout_http_request_duration_seconds_count{method="POST",route="/api/checkouts/:id/payment",status="201"}'), 1);
    assert.ok(moved('pix_checkout_http_request_duration_seconds_count{method="POST",route="/api/webhooks/partner",status="202"}') >= 1);
    assert.ok(moved('pix_checkout_webhook_notifications_total{result="accepted",reason=""}') >= 1);
    assert.equal(moved('pix_checkout_merchant_deliveries_total{result="delivered"}'), 1);

    // Route patterns, never raw paths: no checkout id or payment reference in any label.
    assert.doesNotMatch(text, /route="[^"]*(co_|\/api\/checkouts\/[A-Za-z0-9_-]{10,})/);
    // Read when scraped: nothing waits for delivery, the numbering is in one state, the store has not failed.
    assert.equal(sample(text, 'pix_checkout_merchant_deliveries_pending'), 0);
    assert.equal(sample(text, 'pix_checkout_merchant_deliveries_oldest_pending_age_seconds'), 0);
    const states = ['unverified', 'verified', 'mismatch'].map((state) => sample(text, `pix_checkout_status_numbering_state{state="${state}"}`));
    assert.deepEqual(
      states.toSorted((a, b) => a - b),
      [0, 0, 1],
    );
    assert.equal(sample(text, 'pix_checkout_status_numbering_state{state="mismatch"}'), 0);
    assert.match(text, /^pix_checkout_store_errors_total 0$/m);
    assert.match(text, /^pix_checkout_reconciler_last_pass_age_seconds \d/m);
    // Node's own process metrics, on the app's registry.
    assert.match(text, /^process_cpu_user_seconds_total /m);
  });

  test("a partner failure: the create's outcome named, the proxy's 5xx counted, no payment counted created", async () => {
    const before = await scrape();
    await stackControl(stack, 'POST', '/faults', { kind: 'server_error', rate: 1, status: 500, times: 1, path_prefix: PARTNER_PATHS.createPayment });
    const res = await fetch(`${stack.apiUrl}/payments`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"value":4}' });
    await res.text();
    assert.ok(res.status >= 500, `a 5xx, got ${res.status}`);
    const text = await scrape();
    const moved = (series: string) => sample(text, series) - sample(before, series);
    // A create the partner answered 5xx may have happened: its outcome is unknown, never retried.
    assert.equal(moved('pix_checkout_partner_call_duration_seconds_count{operation="createPayment",outcome="outcome_unknown"}'), 1);
    assert.equal(moved('pix_checkout_partner_call_duration_seconds_count{operation="createPayment",outcome="ok"}'), 0);
    assert.equal(moved('pix_checkout_payments_created_total'), 0);
    assert.equal(moved(`pix_checkout_http_request_duration_seconds_count{method="POST",route="/api/payments",status="${res.status}"}`), 1);
  });

  test('an open status stream is counted while it is open', async () => {
    const created = await fetch(`${stack.apiUrl}/payments`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"value":3}' });
    const { reference } = PaymentView.parse(await created.json());
    const stop = new AbortController();
    const stream = await fetch(`${stack.apiUrl}/payments/${reference}/events`, { signal: stop.signal });
    assert.equal(stream.status, 200);
    try {
      assert.equal(sample(await scrape(), 'pix_checkout_status_streams_open'), 1);
    } finally {
      stop.abort();
    }
    await waitFor('the stream released', async () => sample(await scrape(), 'pix_checkout_status_streams_open') === 0);
  });

  test('a notification refused at the door is counted as rejected, with its reason', async () => {
    const before = await scrape();
    const res = await fetch(`${stack.apiUrl}/webhooks/partner`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '' });
    assert.equal(res.status, 400);
    const text = await scrape();
    assert.equal(
      sample(text, 'pix_checkout_webhook_notifications_total{result="rejected",reason="empty"}') -
        sample(before, 'pix_checkout_webhook_notifications_total{result="rejected",reason="empty"}'),
      1,
    );
  });

  test('without the token, or with a wrong one: 401 in the shared error shape, and nothing of the metrics', async () => {
    for (const headers of [
      {} as Record<string, string>,
      { authorization: 'Bearer not-the-token-0123456789abcdef0123456789' },
      { authorization: TOKEN },
      { authorization: `Basic ${TOKEN}` },
    ]) {
      const res = await fetch(`${stack.url}/metrics`, { headers });
      const text = await res.text();
      expectError({ res, json: JSON.parse(text) }, 401, 'unauthorized');
      assert.equal(res.headers.get('www-authenticate'), 'Bearer');
      assert.doesNotMatch(text, /pix_checkout_/);
    }
  });

  test('never on the browser CORS: no Access-Control-* header even from an allowed origin, and no preflight answered', async () => {
    // The dev stack allows every origin on the browser API: the same Origin there gets CORS.
    const api = await fetch(`${stack.apiUrl}/payments/nothing-here`, { headers: { origin: SHOP } });
    assert.equal(api.headers.get('access-control-allow-origin'), SHOP);

    const res = await fetch(`${stack.url}/metrics`, { headers: { origin: SHOP, authorization: `Bearer ${TOKEN}` } });
    assert.equal(res.status, 200);
    await res.text();
    const preflight = await fetch(`${stack.url}/metrics`, {
      method: 'OPTIONS',
      headers: { origin: SHOP, 'access-control-request-method': 'GET', 'access-control-request-headers': 'authorization' },
    });
    assert.equal(preflight.status, 405);
    await preflight.text();
    for (const answer of [res, preflight]) {
      assert.deepEqual(
        [...answer.headers.keys()].filter((name) => name.startsWith('access-control-')),
        [],
      );
      assert.ok(answer.headers.get('x-request-id'), 'a request id on every answer');
    }
  });

  test('with PIX_METRICS_TOKEN unset: 404, as any unknown path', async () => {
    const app = createApp({ partner: stack.partner, store: stack.store, logger: createLogger({ level: 'silent' }) });
    const res = await app.request('/metrics', { headers: { authorization: `Bearer ${TOKEN}` } });
    expectError({ res, json: await res.json() }, 404, 'not_found');
  });

  test('each app has its own registry: two apps in one process count apart', async () => {
    const apps = [0, 1].map(() => createApp({ partner: stack.partner, store: stack.store, metricsToken: TOKEN, logger: createLogger({ level: 'silent' }) }));
    await apps[0]!.request('/health');
    await apps[0]!.request('/health');
    await apps[1]!.request('/health');
    const counts = await Promise.all(
      apps.map(async (app) => {
        const text = await (await app.request('/metrics', { headers: { authorization: `Bearer ${TOKEN}` } })).text();
        return sample(text, 'pix_checkout_http_request_duration_seconds_count{method="GET",route="/health",status="200"}');
      }),
    );
    assert.deepEqual(counts, [2, 1]);
  });

  test('the HTTP histogram prints as Prometheus reads one: cumulative buckets up to +Inf, the sum and the count per label set', async () => {
    const metrics = new Metrics();
    for (const seconds of [0.0005, 0.003, 0.003, 20]) metrics.httpServed('GET', '/health', 200, seconds);
    const { text } = await metrics.scrape();
    const series = (le: string) => sample(text, `pix_checkout_http_request_duration_seconds_bucket{method="GET",route="/health",status="200",le="${le}"}`);
    assert.deepEqual(['0.001', '0.0025', '0.005', '10', '+Inf'].map(series), [1, 1, 3, 3, 4]);
    assert.equal(sample(text, 'pix_checkout_http_request_duration_seconds_sum{method="GET",route="/health",status="200"}'), 20.0065);
    assert.equal(sample(text, 'pix_checkout_http_request_duration_seconds_count{method="GET",route="/health",status="200"}'), 4);
  });
});
