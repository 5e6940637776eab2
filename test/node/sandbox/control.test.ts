/**
 * The sandbox's own control API: the clock, fault injection (latency, 5xx, dropped connections,
 * malformed JSON, dropped webhooks) and its error shape. Not part of the partner spec; what tests and
 * the demo rely on to play the world around the service.
 */
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import { ErrorBody } from '../../../src/shared/errors.ts';
import { PARTNER_PATHS, TenantResponse } from '../../../server/partner/wire.ts';
import type { WebhookDelivery } from '../../../server/sandbox/webhooks.ts';
import { T0, startHarness, startReceiver, waitFor, type Harness } from '../../support/sandbox-harness.ts';

let h: Harness;
before(async () => {
  h = await startHarness();
});
beforeEach(async () => {
  assert.equal((await h.control('DELETE', '/faults')).status, 200);
});
after(() => h.close());

function assertControlError(res: { status: number; json: unknown; text: string }, status: number, code: string, fields?: string[]) {
  assert.equal(res.status, status, res.text);
  const body = ErrorBody.parse(res.json);
  assert.equal(body.error.code, code);
  assert.ok(body.error.message.length > 0);
  if (fields) assert.deepEqual(Object.keys(body.error.fields ?? {}).sort(), [...fields].sort());
}

async function addFault(fault: Record<string, unknown>) {
  const res = await h.control('POST', '/faults', fault);
  assert.equal(res.status, 201, res.text);
  return res.json.fault as { id: number };
}

const tenant = () => h.api('GET', PARTNER_PATHS.getTenant);

describe('clock', () => {
  test('reads, advances and sets the sandbox clock, forward only', async () => {
    const own = await startHarness();
    try {
      assert.deepEqual((await own.control('GET', '/clock')).json, { now: new Date(T0).toISOString(), offset_seconds: 0 });
      const advanced = await own.control('POST', '/clock/advance', { seconds: 90.5 });
      assert.deepEqual(advanced.json, { now: new Date(T0 + 90_500).toISOString(), offset_seconds: 90.5 });
      const set = await own.control('POST', '/clock/set', { now: '2030-01-02T00:00:00Z' });
      assert.equal(set.json.now, '2030-01-02T00:00:00.000Z');
      assertControlError(await own.control('POST', '/clock/set', { now: '2029-12-31T00:00:00Z' }), 400, 'invalid_request', ['now']);
      assertControlError(await own.control('POST', '/clock/advance', { seconds: -1 }), 400, 'invalid_request', ['seconds']);
      assertControlError(await own.control('POST', '/clock/advance', { seconds: 1e15 }), 400, 'invalid_request', ['seconds']);
      assertControlError(await own.control('POST', '/clock/advance', { seconds: '5' }), 400, 'invalid_request', ['seconds']);
      assertControlError(await own.control('POST', '/clock/advance', {}), 400, 'invalid_request', ['seconds']);
      assertControlError(await own.control('POST', '/clock/advance', { seconds: 1, minutes: 2 }), 400, 'invalid_request', ['minutes']);
      assertControlError(await own.control('POST', '/clock/set', { now: 'tomorrow' }), 400, 'invalid_request', ['now']);
      assert.equal(own.sandbox.state.clock.now(), Date.parse('2030-01-02T00:00:00Z'), 'refusals moved nothing');
    } finally {
      await own.close();
    }
  });
});

describe('control API errors', () => {
  test('JSON only, with the shared error shape', async () => {
    const cases: [string, string, Record<string, string>, string | undefined, number, string][] = [
      ['POST', '/_sandbox/clock/advance', { 'content-type': 'text/plain' }, '{"seconds":1}', 415, 'unsupported_media_type'],
      ['POST', '/_sandbox/clock/advance', { 'content-type': 'application/json' }, '{"seconds":', 400, 'invalid_json'],
      [
        'POST',
        '/_sandbox/clock/advance',
        { 'content-type': 'application/json' },
        JSON.stringify({ seconds: 1, pad: 'x'.repeat(70_000) }),
        413,
        'payload_too_large',
      ],
      ['GET', '/_sandbox/nothing', {}, undefined, 404, 'not_found'],
      ['DELETE', '/_sandbox/clock', {}, undefined, 404, 'not_found'],
      ['DELETE', '/_sandbox/faults/999', {}, undefined, 404, 'not_found'],
      ['DELETE', '/_sandbox/faults/abc', {}, undefined, 404, 'not_found'],
    ];
    for (const [method, path, headers, body, status, code] of cases) {
      const res = await h.api(method, path, { token: false, headers: { ...headers, 'user-agent': null }, ...(body === undefined ? {} : { raw: body }) });
      assertControlError(res, status, code);
    }
  });
});

describe('faults', () => {
  test('server_error at rate 1: every partner request gets the chosen 5xx; the control API is never affected', async () => {
    const fault = await addFault({ kind: 'server_error', rate: 1, status: 502 });
    const res = await tenant();
    assert.equal(res.status, 502);
    assert.equal(typeof res.json.message, 'string');
    assert.equal((await h.control('GET', '/faults')).json.faults.length, 1);
    assert.equal((await h.control('DELETE', `/faults/${fault.id}`)).status, 200);
    assert.equal((await tenant()).status, 200);
  });

  test('server_error defaults to 503; a path prefix scopes a fault', async () => {
    await addFault({ kind: 'server_error', rate: 1, path_prefix: '/api/v2/wallet/' });
    const created = await h.api('POST', PARTNER_PATHS.createPayment, { body: { value: 1, tenant_id: 'x' } });
    assert.equal(created.status, 503);
    assert.equal((await tenant()).status, 200, 'outside the prefix');
  });

  test('rate 0 never strikes', async () => {
    await addFault({ kind: 'server_error', rate: 0 });
    for (let i = 0; i < 10; i++) assert.equal((await tenant()).status, 200);
  });

  test('a rate between 0 and 1 strikes some requests, the same ones for the same seed', async () => {
    await addFault({ kind: 'server_error', rate: 0.5 });
    const statuses: number[] = [];
    for (let i = 0; i < 40; i++) statuses.push((await tenant()).status);
    const failed = statuses.filter((s) => s === 503).length;
    assert.ok(failed > 0 && failed < 40, `${failed} of 40 failed`);
    assert.equal(statuses.filter((s) => s === 200).length, 40 - failed);
  });

  test('drop_connection: the connection is closed without an answer', async () => {
    await addFault({ kind: 'drop_connection', rate: 1 });
    await assert.rejects(tenant(), /socket hang up|ECONNRESET/);
    await h.control('DELETE', '/faults');
    assert.equal((await tenant()).status, 200, 'and the sandbox is fine afterwards');
  });

  test('malformed_json: the real status with a body that is not JSON', async () => {
    await addFault({ kind: 'malformed_json', rate: 1 });
    const res = await tenant();
    assert.equal(res.status, 200);
    assert.match(String(res.headers['content-type']), /application\/json/);
    assert.throws(() => JSON.parse(res.text));
    assert.ok(res.text.startsWith('{'));
  });

  test('latency: requests still succeed, after the added delay', async () => {
    await addFault({ kind: 'latency', rate: 1, latency_ms: 20 });
    const res = await tenant();
    assert.equal(res.status, 200);
    assert.equal(TenantResponse.parse(res.json).data.name.length > 0, true);
  });

  test('drop_webhook: the delivery is lost (recorded as dropped), nothing reaches the receiver', async () => {
    const receiver = await startReceiver();
    try {
      await h.api('PATCH', PARTNER_PATHS.notificationUrl, { body: { notification_url: receiver.url } });
      await addFault({ kind: 'drop_webhook', rate: 1 });
      const created = await h.createPayment({});
      await h.control('POST', `/payments/${created.external_reference}/pay`);
      const deliveries = (await h.control('GET', `/webhooks/deliveries?external_reference=${created.external_reference}`)).json.deliveries as WebhookDelivery[];
      assert.equal(deliveries.length, 1);
      assert.equal(deliveries[0]!.state, 'dropped');
      assert.deepEqual(deliveries[0]!.attempts, []);
      await h.control('DELETE', '/faults');
      // A resend after the fault is gone arrives: the way back for a lost notification.
      await h.control('POST', `/webhooks/events/${deliveries[0]!.event_id}/resend`);
      await waitFor('the resent webhook', () => receiver.received.length === 1);
    } finally {
      await receiver.close();
    }
  });

  test('bad fault definitions are refused, naming the field', async () => {
    const cases: [Record<string, unknown>, string[]][] = [
      [{ kind: 'explode', rate: 1 }, ['kind']],
      [{ kind: 'server_error', rate: 1.5 }, ['rate']],
      [{ kind: 'server_error', rate: -0.1 }, ['rate']],
      [{ kind: 'server_error' }, ['rate']],
      [{ kind: 'latency', rate: 1 }, ['latency_ms']],
      [{ kind: 'latency', rate: 1, latency_ms: 0 }, ['latency_ms']],
      [{ kind: 'latency', rate: 1, latency_ms: 60_001 }, ['latency_ms']],
      [{ kind: 'server_error', rate: 1, status: 404 }, ['status']],
      [{ kind: 'drop_connection', rate: 1, status: 500 }, ['status']],
      [{ kind: 'drop_webhook', rate: 1, path_prefix: '/api' }, ['path_prefix']],
      [{ kind: 'server_error', rate: 1, path_prefix: 'api' }, ['path_prefix']],
      [{ kind: 'server_error', rate: 1, when: 'always' }, ['when']],
    ];
    for (const [fault, fields] of cases) assertControlError(await h.control('POST', '/faults', fault), 400, 'invalid_request', fields);
    assert.deepEqual((await h.control('GET', '/faults')).json.faults, []);
  });
});
