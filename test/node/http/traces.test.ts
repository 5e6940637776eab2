/**
 * Traces (server/observability/tracing.ts, http-telemetry.ts) as an operator's OpenTelemetry SDK
 * sees them: the SDK's NodeTracerProvider with an in-memory exporter and the AsyncLocalStorage
 * context manager, registered as `node --import ./otel.mjs` would, over the real sandbox (HTTPS), a
 * real SQLite store and a merchant receiver on a real socket. And X-Request-Id on every answer, the
 * same as the log line's `req_id`.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { SpanKind, SpanStatusCode, context, propagation, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { InMemorySpanExporter, NodeTracerProvider, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-node';
import { PaymentView } from '../../../src/shared/contract.ts';
import { createApp } from '../../../server/app.ts';
import { openSqliteStore } from '../../../server/store/sqlite/sqlite-store.ts';
import { startDevStack, type DevStack } from '../../../server/dev-stack.ts';
import { closeServer } from '../../../server/http/close-server.ts';
import { createLogger } from '../../../server/log.ts';
import { stackControl, waitFor } from '../../support/checks.ts';

const exporter = new InMemorySpanExporter();
const provider = new NodeTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });

/** The proxy's log lines, as JSON. */
const logged: Record<string, unknown>[] = [];
let stack: DevStack;
let receiver: Server;
const deliveries: IncomingHttpHeaders[] = [];

const spans = (): ReadableSpan[] => exporter.getFinishedSpans();
const named = (name: string): ReadableSpan[] => spans().filter((span) => span.name === name);
const parentOf = (span: ReadableSpan): string | undefined => span.parentSpanContext?.spanId;

before(async () => {
  provider.register({ contextManager: new AsyncLocalStorageContextManager() });
  receiver = createServer((req, res) => {
    deliveries.push(req.headers);
    req.resume();
    req.on('end', () => res.writeHead(204).end());
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  stack = await startDevStack({
    // No partner notifications: the proxy learns the outcome by asking, within the browser's read.
    registerWebhook: false,
    staleAfterMs: 0,
    merchantWebhook: { url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`, secret: 'traces-test-merchant-secret-0123456789abcdef' },
    logger: createLogger({ level: 'info', destination: { write: (line: string) => void logged.push(JSON.parse(line) as Record<string, unknown>) } }),
  });
});

after(async () => {
  await stack.close();
  await closeServer(receiver);
  await provider.shutdown();
  trace.disable();
  context.disable();
  propagation.disable();
});

describe('traces', () => {
  let reference: string;

  test('a request: a server span named by its route pattern, its partner call a child in the same trace', async () => {
    const res = await fetch(`${stack.apiUrl}/payments`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-request-id': 'lb-7f3a9c2e-0001' },
      body: '{"value":5}',
    });
    assert.equal(res.status, 201);
    reference = PaymentView.parse(await res.json()).reference;

    const [server] = named('POST /api/payments');
    assert.ok(
      server,
      `a server span, among ${spans()
        .map((s) => s.name)
        .join(', ')}`,
    );
    assert.equal(server.kind, SpanKind.SERVER);
    assert.equal(server.attributes['http.request.method'], 'POST');
    assert.equal(server.attributes['http.route'], '/api/payments');
    assert.equal(server.attributes['http.response.status_code'], 201);
    assert.equal(server.attributes['pix.request_id'], 'lb-7f3a9c2e-0001');
    assert.notEqual(server.status.code, SpanStatusCode.ERROR);

    const [partner] = named('partner createPayment');
    assert.ok(partner);
    assert.equal(partner.kind, SpanKind.CLIENT);
    assert.equal(partner.spanContext().traceId, server.spanContext().traceId);
    assert.equal(parentOf(partner), server.spanContext().spanId);
  });

  test('the read that finds the payment paid: the delivery to the merchant is its child, and carries its traceparent', async () => {
    await stackControl(stack, 'POST', `/payments/${encodeURIComponent(reference)}/pay`);
    await waitFor('the read finds it paid', async () => {
      const read = await fetch(`${stack.apiUrl}/payments/${reference}`);
      return PaymentView.parse(await read.json()).status === 'paid';
    });
    await waitFor('the delivery sent', () => deliveries.length > 0 && named('merchant webhook delivery').length > 0);

    const [delivery] = named('merchant webhook delivery');
    assert.ok(delivery);
    assert.equal(delivery.kind, SpanKind.CLIENT);
    assert.equal(delivery.attributes['pix.event.type'], 'payment.paid');
    assert.equal(delivery.attributes['http.response.status_code'], 204);
    // Its parent: the read (a server span) whose partner call found the payment paid.
    const read = named('GET /api/payments/:reference').find((span) => span.spanContext().spanId === parentOf(delivery));
    assert.ok(read, 'the delivery is the child of the read that recorded the outcome');
    assert.equal(delivery.spanContext().traceId, read.spanContext().traceId);
    const asked = spans().filter((span) => span.name.startsWith('partner ') && parentOf(span) === read.spanContext().spanId);
    assert.ok(asked.length > 0, 'the read asked the partner, in its trace');

    // The merchant received the delivery span's context (W3C traceparent, the SDK's default propagator).
    const traceparent = deliveries[0]!.traceparent;
    assert.equal(traceparent, `00-${delivery.spanContext().traceId}-${delivery.spanContext().spanId}-01`);
  });

  test("X-Request-Id on every answer, the log line's req_id: the caller's when well-formed, else a new one", async () => {
    const answers: { res: Response; path: string }[] = [];
    const ask = async (path: string, init: RequestInit = {}) => {
      const res = await fetch(`${stack.url}${path}`, init);
      await res.arrayBuffer();
      answers.push({ res, path });
      return res;
    };
    // The status read's fast path (a final payment), the app's route, a 404, /health, the sandbox's pages.
    await ask(`/api/payments/${reference}`);
    await ask('/api/payments/no-such-payment');
    await ask('/health');
    await ask('/nowhere');
    const kept = await ask('/health', { headers: { 'x-request-id': 'a1b2c3d4-e5f6-7890-abcd-ef0123456789' } });
    assert.equal(kept.headers.get('x-request-id'), 'a1b2c3d4-e5f6-7890-abcd-ef0123456789');
    const fastKept = await ask(`/api/payments/${reference}`, { headers: { 'x-request-id': 'edge:42' } });
    assert.equal(fastKept.headers.get('x-request-id'), 'edge:42');
    for (const refused of ['has spaces in it', 'x'.repeat(129), 'quote"s', '']) {
      const res = await ask('/health', { headers: { 'x-request-id': refused } });
      assert.notEqual(res.headers.get('x-request-id'), refused);
    }

    await waitFor('the lines written', () => answers.every(({ res }) => logged.some((line) => line.req_id === res.headers.get('x-request-id'))));
    for (const { res, path } of answers) {
      const id = res.headers.get('x-request-id');
      assert.ok(id, `an id on ${path}`);
      const line = logged.find((entry) => entry.req_id === id && entry.msg === 'request');
      assert.ok(line, `the log line of ${path}`);
      assert.equal(line.path, path);
      assert.equal(line.status, res.status);
    }
    // The fast path's answer has its server span too, timed from its arrival.
    const fast = named('GET /api/payments/:reference').find((span) => span.attributes['pix.request_id'] === 'edge:42');
    assert.ok(fast);
    assert.equal(fast.attributes['http.response.status_code'], 200);
  });

  test("a 5xx answer's span has an error status; the webhook's secret segment never reaches a span", async () => {
    const secret = 'traces-secret-path-0123456789';
    const dir = mkdtempSync(join(tmpdir(), 'pix-traces-'));
    const store = openSqliteStore({ dataDir: dir });
    try {
      const app = createApp({ partner: stack.partner, store, webhooks: { secretPath: secret }, logger: createLogger({ level: 'silent' }) });
      const accepted = await app.request(`/api/webhooks/partner/${secret}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '' });
      assert.equal(accepted.status, 400);
      await store.close();
      // The store gone: /ready answers 503.
      const ready = await app.request('/ready');
      assert.equal(ready.status, 503);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    const [webhook] = named('POST /api/webhooks/partner/:secret');
    assert.ok(webhook);
    assert.equal(webhook.attributes['url.path'], '/api/webhooks/partner/…');
    assert.equal(webhook.attributes['http.response.status_code'], 400);
    assert.notEqual(webhook.status.code, SpanStatusCode.ERROR, "a 4xx is the caller's error, not the server's");
    assert.doesNotMatch(JSON.stringify(spans().map((span) => [span.name, span.attributes])), new RegExp(secret));
    const [ready] = named('GET /ready');
    assert.ok(ready);
    assert.equal(ready.attributes['http.response.status_code'], 503);
    assert.equal(ready.status.code, SpanStatusCode.ERROR);
  });
});
