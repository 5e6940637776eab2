/**
 * Standard Webhooks: a receiver that knows nothing of this project verifies every delivery of the
 * proxy with the reference library (npm `standardwebhooks`, a peer's code, never ours), during a
 * rotation with two secrets (each receiver knows one); a raw (non-whsec_) secret verifies in the
 * libraries' raw format; constructEvent and verifyWebhookSignature read the standard headers, and
 * still the deprecated one. Real deliveries over the sandbox, real sockets on 127.0.0.1.
 */
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { OutcomeEvent } from '../../../src/shared/contract.ts';
import { startDevStack, type DevStack } from '../../../server/dev-stack.ts';
import { SIGNATURE_HEADER, generateWebhookSecret, verifyWebhookSignature, webhookHeaders, webhookSecretProblem } from '../../../server/domain/signature.ts';
import { createLogger } from '../../../server/log.ts';
import { WebhookVerificationError, constructEvent } from '../../../server/merchant/webhook-events.ts';
import { paidCheckout, waitFor } from '../../support/checks.ts';

const OLD = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const NEW = generateWebhookSecret();

interface Delivery {
  body: string;
  headers: Record<string, string>;
}

async function receiver(): Promise<{ url: string; deliveries: Delivery[]; close: () => Promise<void> }> {
  const deliveries: Delivery[] = [];
  const server: Server = createServer((req: IncomingMessage, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      deliveries.push({ body: Buffer.concat(chunks).toString('utf8'), headers: req.headers as Record<string, string> });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks/pix`,
    deliveries,
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

describe("the proxy's deliveries, verified by the Standard Webhooks reference library", () => {
  let stack: DevStack;
  let hook: Awaited<ReturnType<typeof receiver>>;

  before(async () => {
    hook = await receiver();
    // Rotating: the new secret and the old one both sign every delivery.
    stack = await startDevStack({ merchantWebhook: { url: hook.url, secret: `${NEW} ${OLD}` }, logger: createLogger({ level: 'silent' }) });
  });
  after(async () => {
    await stack.close();
    await hook.close();
  });

  test('every delivery verifies with either secret (rotation), and webhook-id is the event id', async () => {
    await paidCheckout(stack, 12.34, 'stdwh');
    await paidCheckout(stack, 5.6, 'stdwh');
    await waitFor('two deliveries', () => hook.deliveries.length >= 2);
    for (const delivery of hook.deliveries) {
      for (const secret of [NEW, OLD]) {
        // The library throws on anything it does not accept; it answers the parsed body.
        const payload = new Webhook(secret).verify(delivery.body, delivery.headers);
        const event = OutcomeEvent.parse(payload);
        assert.equal(delivery.headers['webhook-id'], event.id);
      }
      assert.throws(() => new Webhook(generateWebhookSecret()).verify(delivery.body, delivery.headers), /signature/i, 'a stranger secret does not verify');
      assert.throws(() => new Webhook(NEW).verify(`${delivery.body} `, delivery.headers), 'a changed body does not verify');
      // The deprecated header is still there, for receivers written before.
      assert.match(delivery.headers[SIGNATURE_HEADER.toLowerCase()] ?? '', /^t=\d+,v1=[0-9a-f]{64},v1=[0-9a-f]{64}$/);
      // Ours verify the same delivery, from the standard headers.
      assert.equal(constructEvent(delivery.body, delivery.headers, OLD).id, delivery.headers['webhook-id']);
      assert.equal(verifyWebhookSignature(delivery.body, delivery.headers, [NEW]), true);
    }
  });
});

describe('signing and verifying the standard headers', () => {
  const body = JSON.stringify({
    id: 'evt_0123456789abcdef0123456789abcdef',
    type: 'payment.paid',
    created_at: '2030-01-01T12:00:00.000Z',
    data: { reference: 'ref-1', status: 'paid', value: 1, checkout_id: null, order_id: null },
  });
  const now = Date.UTC(2030, 0, 1, 12);

  test('the library signs what we sign: same bytes for a whsec_ secret', () => {
    const headers = webhookHeaders('evt_0123456789abcdef0123456789abcdef', body, OLD, now);
    assert.equal(headers['webhook-timestamp'], String(now / 1000));
    assert.equal(headers['webhook-signature'], new Webhook(OLD).sign('evt_0123456789abcdef0123456789abcdef', new Date(now), body));
  });

  test('a secret that is not whsec_ is a raw key: the libraries verify it in their raw format', () => {
    const raw = 'a-plain-merchant-secret-of-enough-length';
    const headers = webhookHeaders('evt_0123456789abcdef0123456789abcdef', body, raw, Date.now());
    assert.doesNotThrow(() => new Webhook(raw, { format: 'raw' }).verify(body, headers));
  });

  test('constructEvent reads the standard headers: a wrong id, a changed body, an old timestamp, a header missing', () => {
    const headers = webhookHeaders('evt_0123456789abcdef0123456789abcdef', body, [NEW, OLD], now);
    const standardOnly = {
      'webhook-id': headers['webhook-id']!,
      'webhook-timestamp': headers['webhook-timestamp']!,
      'webhook-signature': headers['webhook-signature']!,
    };
    assert.equal(constructEvent(body, standardOnly, NEW, { now }).id, 'evt_0123456789abcdef0123456789abcdef');
    assert.equal(constructEvent(body, standardOnly, [generateWebhookSecret(), OLD], { now }).type, 'payment.paid', 'any of several secrets');
    const code = (run: () => unknown) => {
      try {
        run();
      } catch (error) {
        assert.ok(error instanceof WebhookVerificationError);
        return error.code;
      }
      return 'accepted';
    };
    assert.equal(
      code(() => constructEvent(body, { ...standardOnly, 'webhook-id': 'evt_other' }, NEW, { now })),
      'invalid_signature',
    );
    assert.equal(
      code(() => constructEvent(`${body} `, standardOnly, NEW, { now })),
      'invalid_signature',
    );
    assert.equal(
      code(() => constructEvent(body, standardOnly, NEW, { now: now + 301_000 })),
      'timestamp_out_of_window',
    );
    assert.equal(
      code(() => constructEvent(body, { 'webhook-id': standardOnly['webhook-id'], 'webhook-signature': standardOnly['webhook-signature'] }, NEW, { now })),
      'invalid_signature',
    );
    assert.equal(
      code(() => constructEvent(body, {}, NEW, { now })),
      'missing_signature',
    );
    // Signed with the id of another event than the body's: refused, though the signature holds.
    const other = webhookHeaders('evt_ffffffffffffffffffffffffffffffff', body, NEW, now);
    assert.equal(
      code(() =>
        constructEvent(
          body,
          { 'webhook-id': other['webhook-id']!, 'webhook-timestamp': other['webhook-timestamp']!, 'webhook-signature': other['webhook-signature']! },
          NEW,
          { now },
        ),
      ),
      'invalid_payload',
    );
    // The deprecated header alone still verifies (receivers written before).
    assert.equal(constructEvent(body, { [SIGNATURE_HEADER]: headers[SIGNATURE_HEADER]! }, OLD, { now }).id, 'evt_0123456789abcdef0123456789abcdef');
  });

  test('a whsec_ secret must be base64 of 24 to 64 bytes', () => {
    assert.equal(webhookSecretProblem(OLD), null);
    assert.equal(webhookSecretProblem(generateWebhookSecret()), null);
    assert.match(webhookSecretProblem('whsec_not base64!') ?? '', /base64/);
    assert.match(webhookSecretProblem(`whsec_${Buffer.alloc(8).toString('base64')}`) ?? '', /24 to 64 bytes/);
    assert.equal(webhookSecretProblem('any-raw-secret'), null);
  });
});
