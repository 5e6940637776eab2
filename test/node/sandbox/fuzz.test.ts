/**
 * Bad input anywhere gets a 4xx, never a 5xx or a crash: many malformed requests (wrong types,
 * missing and unknown fields, huge and deep bodies, invalid JSON and UTF-8, odd paths, methods and
 * headers) at every partner and control endpoint, from a seeded generator so a failure replays.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { PARTNER_PATHS } from '../../../server/partner/wire.ts';
import { seededRandom } from '../../../server/sandbox/faults.ts';
import { DEFAULT_ACCOUNT } from '../../../server/sandbox/state.ts';
import { startHarness, type Harness } from '../../support/sandbox-harness.ts';

let h: Harness;
before(async () => {
  h = await startHarness();
});
after(() => h.close());

const SEED = 20240611;
const REQUESTS = 1000;

const FIELDS = [
  'value',
  'tenant_id',
  'callback',
  'name',
  'document',
  'expiration',
  'transaction_id',
  'description',
  'email',
  'access_key',
  'customer_document',
  'pix_key',
  'pix_key_type',
  'notification_url',
  'notify_type',
  'seconds',
  'now',
  'kind',
  'rate',
  'path_prefix',
  'latency_ms',
  'status',
  'kyc',
  'bank',
  'keys',
  '__proto__',
  'constructor',
];

test(`${REQUESTS} malformed requests: no 5xx, no crash, nothing logged`, async () => {
  const random = seededRandom(SEED);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
  const chance = (p: number) => random() < p;

  const created = await h.createPayment({});
  const references = [created.external_reference, 'x', '', '..', '%2e%2e', '%ZZ', '%00', 'a%2Fb', '😀', 'a'.repeat(3000), "'; drop table--", '<script>'];
  // Each path with its own method, which the generator uses most of the time so bodies reach validation.
  const routes: [string, string][] = [
    ['POST', PARTNER_PATHS.login],
    ['GET', PARTNER_PATHS.getTenant],
    ['POST', PARTNER_PATHS.createPayment],
    ['HEAD', PARTNER_PATHS.checkPayment],
    ['GET', PARTNER_PATHS.getPayment],
    ['POST', PARTNER_PATHS.solicitTransferForCustomer],
    ['POST', PARTNER_PATHS.transferToKey],
    ['GET', PARTNER_PATHS.checkTransfer],
    ['PATCH', PARTNER_PATHS.notificationUrl],
    ['POST', '/_sandbox/payments/:external_reference/pay'],
    ['POST', '/_sandbox/payments/:external_reference/cancel'],
    ['POST', '/_sandbox/transfers/:external_reference/approve'],
    ['POST', '/_sandbox/transfers/:external_reference/cancel'],
    ['POST', '/_sandbox/customers'],
    ['GET', '/_sandbox/webhooks/deliveries'],
    ['POST', '/_sandbox/webhooks/events/:external_reference/resend'],
    ['DELETE', '/_sandbox/notification-url'],
    ['GET', '/_sandbox/clock'],
    ['POST', '/_sandbox/clock/advance'],
    ['POST', '/_sandbox/clock/set'],
    ['POST', '/_sandbox/faults'],
    ['DELETE', '/_sandbox/faults/:external_reference'],
    ['GET', '/qr/:external_reference.svg'],
    ['GET', '/checkout/:external_reference'],
    ['POST', '/checkout/:external_reference/pay'],
    ['GET', '/'],
    ['GET', '/api'],
    ['POST', '/api/v2/'],
    ['GET', '/api//v2//identity'],
    ['POST', '/api/v2/identity/partner/login/'],
  ];

  function scalar(): unknown {
    return pick([
      () => random() * 1e6 - 5e5,
      () => 1e308,
      () => -0,
      () => 0.2,
      () => 49_000.01,
      () => Number.MAX_SAFE_INTEGER + 2,
      () => '',
      () => 'x'.repeat(Math.floor(random() * 2000)),
      () => '\u0000\ud800',
      () => '529.982.247-25',
      () => 'https://x.example/',
      () => true,
      () => null,
      () => 'CPF',
      () => 'EMAIL',
      () => 'latency',
      () => '2030-01-01T00:00:00Z',
      () => DEFAULT_ACCOUNT.tenant.id,
    ])();
  }
  function value(depth: number): unknown {
    if (depth > 2 || chance(0.6)) return scalar();
    if (chance(0.3)) return Array.from({ length: Math.floor(random() * 4) }, () => value(depth + 1));
    return object(depth + 1);
  }
  function object(depth = 0): Record<string, unknown> {
    const result: Record<string, unknown> = {};
    const count = Math.floor(random() * 6);
    for (let i = 0; i < count; i++) result[chance(0.85) ? pick(FIELDS) : `f${Math.floor(random() * 100)}`] = value(depth);
    return result;
  }
  function body(): string | Buffer | undefined {
    return pick([
      () => undefined,
      () => JSON.stringify(object()),
      () => JSON.stringify(value(0)),
      () => JSON.stringify({ value: 10, tenant_id: DEFAULT_ACCOUNT.tenant.id, ...object() }),
      () => '{"value": 1,',
      () => '{"a":1}{"b":2}',
      () => '['.repeat(5000) + ']'.repeat(5000),
      () => `{"d":${'{"d":'.repeat(3000)}1${'}'.repeat(3000)}}`,
      () => Buffer.from([0x7b, 0xc3, 0x28, 0x7d]),
      () => Buffer.from(Array.from({ length: 64 }, () => Math.floor(random() * 256))),
      () => JSON.stringify({ value: 1, pad: 'x'.repeat(70_000) }),
      () => '"just a string"',
      () => 'null',
    ])();
  }

  const logged: unknown[] = [];
  const original = console.error;
  console.error = (...args: unknown[]) => logged.push(args);
  try {
    for (let i = 0; i < REQUESTS; i++) {
      const reference = chance(0.4) ? created.external_reference : pick(references);
      const [rightMethod, template] = pick(routes);
      const path = template.replace(':external_reference', encodeURI(reference).replace(/%25/g, '%')) + (chance(0.1) ? '?x=%ZZ&external_reference=' : '');
      const method = chance(0.75) ? rightMethod : pick(['GET', 'POST', 'PATCH', 'HEAD', 'PUT', 'DELETE', 'OPTIONS']);
      const headers: Record<string, string | null> = {};
      if (chance(0.15)) headers['user-agent'] = pick([null, 'x', 'Loja (a@b.c', '(a@b.co)', 'L'.repeat(5000) + ' (a@b.co)']);
      if (chance(0.15)) headers.authorization = pick([null, 'Bearer', 'Bearer \u00e9', `Bearer ${'t'.repeat(4000)}`, 'Basic x']);
      if (chance(0.15)) headers['content-type'] = pick([null, 'text/plain', 'application/json; charset=latin1', 'application/json;', 'multipart/form-data']);
      let raw = body();
      if (raw !== undefined && (method === 'GET' || method === 'HEAD') && chance(0.7)) raw = undefined;
      const res = await h.api(method, path, { headers, ...(raw === undefined ? {} : { raw }) });
      assert.ok(res.status >= 200 && res.status < 500, `#${i} ${method} ${path.slice(0, 80)} answered ${res.status}: ${res.text.slice(0, 200)}`);
      if (res.status >= 400 && method !== 'HEAD' && !path.startsWith('/checkout')) {
        assert.ok(
          res.json && (typeof res.json.message === 'string' || typeof res.json.error?.message === 'string'),
          `#${i} a clear error: ${res.text.slice(0, 200)}`,
        );
      }
    }
  } finally {
    console.error = original;
  }
  assert.deepEqual(logged, [], 'no unexpected error was logged');
  assert.equal((await h.api('GET', PARTNER_PATHS.getTenant)).status, 200, 'still serving');
});
