/**
 * The merchant server's client (server/merchant/checkout-client.ts) against a real proxy over the
 * real sandbox (the dev stack, a real socket): checkouts, refunds, transfers, the one error class.
 * Faults only are made up, by a local node:http front that forwards to the proxy and, when a test
 * says so, drops a connection (before or after the proxy acted), answers a 5xx, a non-contract
 * answer, or nothing at all.
 */
import assert from 'node:assert/strict';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { errorBody } from '../../../src/shared/errors.ts';
import { CheckoutId } from '../../../src/shared/contract.ts';
import { startDevStack, type DevStack } from '../../../server/dev-stack.ts';
import { createLogger } from '../../../server/log.ts';
import { CheckoutApiError, createCheckoutClient, type CheckoutClient } from '../../../server/merchant/checkout-client.ts';
import { paidCheckout, rejectsWith } from '../../support/checks.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
/** Ana Aprovada (server/sandbox/customers.ts): her bank approves. */
const ANA = { document: '123.456.789-09', email: 'ana@cliente.example' };

let stack: DevStack;
let client: CheckoutClient;
let orders = 0;
const newOrder = () => `mc-${process.pid}-${++orders}`;

before(async () => {
  stack = await startDevStack({ logger: createLogger({ level: 'silent' }) });
  client = createCheckoutClient({ url: stack.apiUrl, apiKey: stack.apiKey });
});
after(async () => {
  await stack.close();
});

/** The CheckoutApiError `promise` rejects with; fails when it resolves or rejects with anything else. */
const apiError = (promise: Promise<unknown>): Promise<CheckoutApiError> => rejectsWith(promise, CheckoutApiError);

type Plan = 'forward' | 'drop-before' | 'drop-after' | 'hang' | { status: number; body: string };
interface Seen {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
}
interface Front {
  /** The API base through the front, for createCheckoutClient. */
  url: string;
  seen: Seen[];
  close(): Promise<void>;
}

/**
 * A node:http front to the proxy: the n-th request (1-based) is handled by `plan(n)`: forwarded, its
 * connection dropped before forwarding or after the proxy answered, left unanswered, or answered as given.
 */
async function startFront(plan: (n: number) => Plan): Promise<Front> {
  const seen: Seen[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      seen.push({ method: req.method!, url: req.url!, headers: req.headers });
      const step = plan(seen.length);
      if (step === 'hang') return;
      if (step === 'drop-before') return void req.socket.destroy();
      if (typeof step === 'object') return void res.writeHead(step.status, { 'content-type': 'application/json' }).end(step.body);
      const headers: Record<string, string> = {};
      for (const name of ['authorization', 'content-type', 'idempotency-key']) if (req.headers[name]) headers[name] = String(req.headers[name]);
      void fetch(`${stack.url}${req.url}`, { method: req.method, headers, body: chunks.length ? Buffer.concat(chunks) : undefined })
        .then(async (answer) => {
          const text = await answer.text();
          // The proxy acted; its answer is lost on the way back.
          if (step === 'drop-after') return void req.socket.destroy();
          res.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'application/json' }).end(text);
        })
        .catch(() => req.socket.destroy());
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/api`,
    seen,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

describe('checkouts', () => {
  test('create: the checkout as the proxy made it; the same order again: the same checkout; retrieve: the same', async () => {
    const order = newOrder();
    const created = await client.checkouts.create({ value: 120.5, order_id: order, name: 'Maria Silva', document: '529.982.247-25', description: 'Loja' });
    assert.ok(CheckoutId.safeParse(created.checkout_id).success, 'a checkout id');
    const { refunds, ...rest } = created;
    assert.deepEqual({ ...rest, checkout_id: '' }, { checkout_id: '', order_id: order, value: 120.5, status: 'open', renewals_left: 3 });
    assert.deepEqual(refunds ?? [], [], 'none yet');
    const again = await client.checkouts.create({ value: 120.5, order_id: order });
    assert.equal(again.checkout_id, created.checkout_id);
    assert.deepEqual(await client.checkouts.retrieve(created.checkout_id), created);
  });

  test('retrieve follows the checkout to paid, with its payment', async () => {
    const id = await paidCheckout(stack, 15.5);
    const view = await client.checkouts.retrieve(id);
    assert.equal(view.status, 'paid');
    assert.equal(view.payment?.status, 'paid');
    assert.equal(view.payment?.value, 15.5);
  });

  test('every request carries the API key as a Bearer token; a checkout carries no Idempotency-Key unless given', async () => {
    const front = await startFront(() => 'forward');
    try {
      const through = createCheckoutClient({ url: front.url, apiKey: stack.apiKey });
      const created = await through.checkouts.create({ value: 10, order_id: newOrder() });
      await through.checkouts.retrieve(created.checkout_id);
      await through.checkouts.create({ value: 10, order_id: newOrder() }, { idempotencyKey: 'order-key-1' });
      assert.deepEqual(
        front.seen.map((s) => [s.method, s.url, s.headers.authorization, s.headers['idempotency-key']]),
        [
          ['POST', '/api/checkouts', `Bearer ${stack.apiKey}`, undefined],
          ['GET', `/api/checkouts/${created.checkout_id}`, `Bearer ${stack.apiKey}`, undefined],
          ['POST', '/api/checkouts', `Bearer ${stack.apiKey}`, 'order-key-1'],
        ],
      );
    } finally {
      await front.close();
    }
  });
});

describe('the error class', () => {
  test('a wrong key: 401 unauthorized, and the key is in no message', async () => {
    const wrongKey = 'not-the-key-0123456789abcdef';
    const error = await apiError(createCheckoutClient({ url: stack.apiUrl, apiKey: wrongKey }).checkouts.create({ value: 10, order_id: newOrder() }));
    assert.deepEqual(
      [error.name, error.code, error.status, error.fields, error.idempotencyKey],
      ['CheckoutApiError', 'unauthorized', 401, undefined, undefined],
    );
    assert.match(error.message, /^POST \/checkouts: 401 unauthorized: /);
    assert.equal(error.apiMessage, 'Send the API key as Authorization: Bearer <PIX_API_KEY>.', "the proxy's own sentence, as it wrote it");
    assert.ok(!error.message.includes(wrongKey) && !error.stack!.includes(wrongKey), 'the key is in no message');
  });

  test('a bad request: 400 invalid_request with every bad field', async () => {
    const error = await apiError(client.checkouts.create({ value: 0.001, order_id: 'has spaces', name: 'Maria' }));
    assert.deepEqual([error.code, error.status], ['invalid_request', 400]);
    assert.deepEqual(Object.keys(error.fields ?? {}).sort(), ['document', 'order_id', 'value']);
    assert.match(error.fields!.value!, /two decimals|at least/);
  });

  test('an unknown checkout: 404 not_found; another value for the same order: 409 conflict naming order_id', async () => {
    const missing = await apiError(client.checkouts.retrieve(`co_${'B'.repeat(24)}`));
    assert.deepEqual([missing.code, missing.status, missing.fields], ['not_found', 404, undefined]);
    const order = newOrder();
    await client.checkouts.create({ value: 10, order_id: order });
    const conflict = await apiError(client.checkouts.create({ value: 10.01, order_id: order }));
    assert.deepEqual([conflict.code, conflict.status], ['conflict', 409]);
    assert.ok(conflict.fields?.order_id, 'order_id named');
  });

  test('an id with a slash stays one path segment (encoded): 400, not another route', async () => {
    const error = await apiError(client.checkouts.retrieve('../transfers'));
    assert.deepEqual([error.code, error.status], ['invalid_request', 400]);
  });

  test('misuse is a TypeError, before anything is sent; the key is never quoted', async () => {
    assert.throws(
      () => createCheckoutClient({ url: stack.apiUrl, apiKey: 'secret with\nnewline' }),
      (error: Error) => {
        assert.ok(error instanceof TypeError, 'a TypeError');
        assert.doesNotMatch(error.message, /secret with/);
        return true;
      },
    );
    assert.throws(() => createCheckoutClient({ url: 'not a url', apiKey: 'k' }), TypeError);
    assert.throws(() => createCheckoutClient({ url: 'http://user:pw@127.0.0.1/api', apiKey: 'k' }), /credentials/);
    await assert.rejects(client.transfers.create({ value: 1, pix_key: ANA.email }, { idempotencyKey: 'with space' }), TypeError);
  });

  test('missing is missing: an option not set says so, naming the variable, not a format', () => {
    // The merchant's server did not load .env: `process.env.PIX_API_KEY` is undefined.
    const env: Record<string, string | undefined> = {};
    const said = (run: () => unknown) => {
      try {
        run();
      } catch (error) {
        assert.ok(error instanceof TypeError, 'a TypeError');
        return error.message;
      }
      assert.fail('no error');
    };
    const apiKey = said(() => createCheckoutClient({ url: stack.apiUrl, apiKey: env.PIX_API_KEY! }));
    assert.match(apiKey, /^createCheckoutClient: apiKey is not set \(PIX_API_KEY, .*node --env-file=\.env\)$/);
    assert.equal(
      said(() => createCheckoutClient({ url: stack.apiUrl, apiKey: '' })),
      apiKey,
      'an empty PIX_API_KEY= line is not set either',
    );
    assert.match(
      said(() => createCheckoutClient({ url: env.PIX_PROXY_URL!, apiKey: stack.apiKey })),
      /^createCheckoutClient: url is not set \(/,
    );
    assert.match(
      said(() => createCheckoutClient(undefined as unknown as { url: string; apiKey: string })),
      /^createCheckoutClient: options is not set/,
    );
    // A key that is set but malformed is still judged for its format.
    assert.match(
      said(() => createCheckoutClient({ url: stack.apiUrl, apiKey: 'two words' })),
      /apiKey must be the proxy API key/,
    );
  });
});

describe('transfers', () => {
  test('create: pending, the key masked, the reference echoed, a generated UUID Idempotency-Key; retrieve: the same', async () => {
    const front = await startFront(() => 'forward');
    try {
      const through = createCheckoutClient({ url: front.url, apiKey: stack.apiKey });
      const reference = `payout-${process.pid}-1`;
      const transfer = await through.transfers.create({ value: 12.5, pix_key: ANA.email, reference });
      assert.match(transfer.transfer_id, /^tr_[A-Za-z0-9_-]{24}$/);
      assert.deepEqual(
        [transfer.status, transfer.value, transfer.pix_key, transfer.pix_key_type, transfer.reference, transfer.checkout_id],
        ['pending', 12.5, 'a***@cliente.example', 'EMAIL', reference, null],
      );
      assert.match(String(front.seen[0]!.headers['idempotency-key']), UUID);
      assert.deepEqual(await through.transfers.retrieve(transfer.transfer_id), transfer);
      // Each call its own key.
      await through.transfers.create({ value: 1, pix_key: ANA.email });
      assert.notEqual(front.seen[2]!.headers['idempotency-key'], front.seen[0]!.headers['idempotency-key']);
    } finally {
      await front.close();
    }
  });

  test('the same key and body: the same transfer; the same key with another body: 409 idempotency_key_reused, with the key', async () => {
    const idempotencyKey = `payout-key-${process.pid}`;
    const first = await client.transfers.create({ value: 3, pix_key: ANA.email, customer_document: ANA.document }, { idempotencyKey });
    const again = await client.transfers.create({ value: 3, pix_key: ANA.email, customer_document: ANA.document }, { idempotencyKey });
    assert.equal(again.transfer_id, first.transfer_id);
    const error = await apiError(client.transfers.create({ value: 4, pix_key: ANA.email }, { idempotencyKey }));
    assert.deepEqual([error.code, error.status, error.idempotencyKey], ['idempotency_key_reused', 409, idempotencyKey]);
  });

  test('a bad transfer: 400 naming the field; an unknown one: 404; both carry what was sent', async () => {
    const error = await apiError(client.transfers.create({ value: 5, pix_key: 'not a key' }));
    assert.deepEqual([error.code, error.status], ['invalid_request', 400]);
    assert.ok(error.fields?.pix_key, 'pix_key named');
    assert.match(error.idempotencyKey!, UUID);
    const missing = await apiError(client.transfers.retrieve(`tr_${'x'.repeat(24)}`));
    assert.deepEqual([missing.code, missing.status, missing.idempotencyKey], ['not_found', 404, undefined]);
  });

  test('list: one page by status and limit; listAll: every page, following next_cursor', async () => {
    const mine = new Set<string>();
    for (let i = 0; i < 3; i++) mine.add((await client.transfers.create({ value: 1 + i, pix_key: ANA.email, reference: `page-${i}` })).transfer_id);
    const urls: string[] = [];
    const counting = createCheckoutClient({
      url: stack.apiUrl,
      apiKey: stack.apiKey,
      fetch: (input, init) => {
        urls.push(input instanceof Request ? input.url : input.toString());
        return fetch(input, init);
      },
    });
    const page = await counting.transfers.list({ status: 'pending', limit: 2 });
    assert.equal(page.data.length, 2);
    assert.ok(
      page.data.every((t) => t.status === 'pending'),
      'pending only',
    );
    assert.ok(page.next_cursor, 'more than one page');
    assert.equal(urls[0], `${stack.apiUrl}/transfers?status=pending&limit=2`);

    const total = (await client.transfers.list({ limit: 100 })).data.length;
    const all: string[] = [];
    for await (const transfer of counting.transfers.listAll({ limit: 1 })) all.push(transfer.transfer_id);
    assert.equal(all.length, total);
    assert.equal(new Set(all).size, total, 'no transfer twice');
    for (const id of mine) assert.ok(all.includes(id), `${id} listed`);
    assert.equal(urls.length, 1 + total, 'one request a page');
    assert.match(urls[2]!, /\/transfers\?cursor=[A-Za-z0-9_-]+&limit=1$/);

    const bad = await apiError(client.transfers.list({ cursor: 'not-one-of-ours' }));
    assert.deepEqual([bad.code, bad.status], ['invalid_request', 400]);
  });
});

describe('refunds', () => {
  test('part of a paid checkout: a transfer naming it, listed on the checkout; more than is left: 409 refund_exceeds_paid', async () => {
    const id = await paidCheckout(stack, 30);
    const refund = await client.refunds.create(id, { value: 10, pix_key: ANA.email });
    assert.deepEqual([refund.checkout_id, refund.value, refund.status, refund.pix_key], [id, 10, 'pending', 'a***@cliente.example']);
    const checkout = await client.checkouts.retrieve(id);
    assert.deepEqual(
      checkout.refunds?.map((r) => r.transfer_id),
      [refund.transfer_id],
    );
    const over = await apiError(client.refunds.create(id, { value: 25, pix_key: ANA.email }));
    assert.deepEqual([over.code, over.status], ['refund_exceeds_paid', 409]);
    assert.ok(over.fields?.value, 'value named');
    const rest = await client.refunds.create(id, { pix_key: ANA.email });
    assert.equal(rest.value, 20, 'without a value: what is left');
  });

  test('a checkout not paid: 409 checkout_not_paid; an unknown one: 404', async () => {
    const open = await client.checkouts.create({ value: 10, order_id: newOrder() });
    const error = await apiError(client.refunds.create(open.checkout_id, { pix_key: ANA.email }));
    assert.deepEqual([error.code, error.status], ['checkout_not_paid', 409]);
    assert.match(error.idempotencyKey!, UUID);
    assert.equal((await apiError(client.refunds.create(`co_${'C'.repeat(24)}`, { pix_key: ANA.email }))).code, 'not_found');
  });
});

describe('faults: retries only what is safe to send again', () => {
  test('a transfer whose answer is lost after the proxy acted: sent again with the same generated key, one transfer made', async () => {
    const front = await startFront((n) => (n === 1 ? 'drop-after' : 'forward'));
    try {
      const through = createCheckoutClient({ url: front.url, apiKey: stack.apiKey });
      const reference = `lost-${process.pid}`;
      const transfer = await through.transfers.create({ value: 7.77, pix_key: ANA.email, reference });
      assert.equal(front.seen.length, 2);
      const [first, second] = front.seen.map((s) => s.headers['idempotency-key']);
      assert.match(String(first), UUID);
      assert.equal(second, first, 'the retry reuses the key');
      const made = (await client.transfers.list({ limit: 100 })).data.filter((t) => t.reference === reference);
      assert.deepEqual(
        made.map((t) => t.transfer_id),
        [transfer.transfer_id],
        'the proxy made one transfer',
      );
    } finally {
      await front.close();
    }
  });

  test('a refund whose connection drops before it reaches the proxy: sent again with its given key', async () => {
    const id = await paidCheckout(stack, 8);
    const front = await startFront((n) => (n === 1 ? 'drop-before' : 'forward'));
    try {
      const through = createCheckoutClient({ url: front.url, apiKey: stack.apiKey });
      const refund = await through.refunds.create(id, { pix_key: ANA.email }, { idempotencyKey: `refund-${id}` });
      assert.deepEqual(
        front.seen.map((s) => [s.url, s.headers['idempotency-key']]),
        [
          [`/api/checkouts/${id}/refunds`, `refund-${id}`],
          [`/api/checkouts/${id}/refunds`, `refund-${id}`],
        ],
      );
      assert.equal(refund.value, 8);
    } finally {
      await front.close();
    }
  });

  test('a checkout without a key is never sent again: network_error, status 0, one request; with a key it is', async () => {
    const front = await startFront((n) => (n === 1 ? 'drop-after' : 'forward'));
    try {
      const through = createCheckoutClient({ url: front.url, apiKey: stack.apiKey });
      const order = newOrder();
      const error = await apiError(through.checkouts.create({ value: 10, order_id: order }));
      assert.deepEqual([error.code, error.status, error.idempotencyKey, front.seen.length], ['network_error', 0, undefined, 1]);
      assert.match(error.message, /could not be reached/);
      const keyed = await through.checkouts.create({ value: 10, order_id: order }, { idempotencyKey: `co-${order}` });
      assert.equal(front.seen.length, 2);
      assert.equal(keyed.order_id, order, 'the order the lost answer had created');
    } finally {
      await front.close();
    }
  });

  test('a GET after 503 and 504: sent again, answered; a keyed POST after a 503 too; an unkeyed POST not', async () => {
    const busy = JSON.stringify(errorBody('not_ready', 'Starting.'));
    const front = await startFront((n) =>
      n === 1 ? { status: 503, body: busy } : n === 2 ? { status: 504, body: busy } : n === 4 ? { status: 503, body: busy } : 'forward',
    );
    try {
      const through = createCheckoutClient({ url: front.url, apiKey: stack.apiKey });
      const created = await client.checkouts.create({ value: 10, order_id: newOrder() });
      assert.equal((await through.checkouts.retrieve(created.checkout_id)).checkout_id, created.checkout_id);
      assert.equal(front.seen.length, 3, 'two retries');
      const transfer = await through.transfers.create({ value: 2, pix_key: ANA.email });
      assert.equal(front.seen.length, 5);
      assert.equal(front.seen[4]!.headers['idempotency-key'], front.seen[3]!.headers['idempotency-key']);
      assert.equal(transfer.value, 2);
    } finally {
      await front.close();
    }
    const refusing = await startFront(() => ({ status: 503, body: busy }));
    try {
      const error = await apiError(createCheckoutClient({ url: refusing.url, apiKey: stack.apiKey }).checkouts.create({ value: 10, order_id: newOrder() }));
      assert.deepEqual([error.code, error.status, refusing.seen.length], ['not_ready', 503, 1]);
    } finally {
      await refusing.close();
    }
  });

  test('at most two retries; a 502 that is the partner refusing is final; other statuses are never retried', async () => {
    const html = await startFront(() => ({ status: 502, body: '<html>Bad Gateway</html>' }));
    try {
      const error = await apiError(createCheckoutClient({ url: html.url, apiKey: stack.apiKey }).transfers.retrieve('tr_x'));
      assert.deepEqual([error.code, error.status, html.seen.length], ['invalid_response', 502, 3]);
    } finally {
      await html.close();
    }
    const refused = await startFront(() => ({ status: 502, body: JSON.stringify(errorBody('upstream_refused', 'Refused.')) }));
    try {
      const error = await apiError(createCheckoutClient({ url: refused.url, apiKey: stack.apiKey }).transfers.create({ value: 2, pix_key: ANA.email }));
      assert.deepEqual([error.code, error.status, refused.seen.length], ['upstream_refused', 502, 1]);
      assert.match(error.idempotencyKey!, UUID);
    } finally {
      await refused.close();
    }
    const limited = await startFront(() => ({ status: 429, body: JSON.stringify(errorBody('rate_limited', 'Slow down.')) }));
    try {
      const error = await apiError(createCheckoutClient({ url: limited.url, apiKey: stack.apiKey }).transfers.list());
      assert.deepEqual([error.code, error.status, limited.seen.length], ['rate_limited', 429, 1]);
    } finally {
      await limited.close();
    }
  });

  test('an answer that is not the contract: invalid_response naming what is wrong', async () => {
    const front = await startFront((n) => (n === 1 ? { status: 200, body: '{"checkout_id":"co_x"}' } : { status: 201, body: 'not json' }));
    try {
      const through = createCheckoutClient({ url: front.url, apiKey: stack.apiKey });
      const shape = await apiError(through.checkouts.retrieve('co_x'));
      assert.deepEqual([shape.code, shape.status], ['invalid_response', 200]);
      assert.match(shape.message, /order_id is required/);
      const text = await apiError(through.transfers.create({ value: 1, pix_key: ANA.email }));
      assert.deepEqual([text.code, text.status], ['invalid_response', 201]);
      assert.match(text.idempotencyKey!, UUID, 'the key to ask again with');
      assert.equal(front.seen.length, 2, 'an unreadable 2xx is not retried');
    } finally {
      await front.close();
    }
  });

  test('no answer within timeoutMs: timeout, status 0, not retried (it may still run)', async () => {
    const front = await startFront(() => 'hang');
    try {
      const through = createCheckoutClient({ url: front.url, apiKey: stack.apiKey, timeoutMs: 150 });
      const started = Date.now();
      const error = await apiError(through.transfers.create({ value: 1, pix_key: ANA.email }));
      assert.deepEqual([error.code, error.status, front.seen.length], ['timeout', 0, 1]);
      assert.match(error.message, /no answer within 150 ms; it may have been carried out/);
      assert.ok(Date.now() - started < 5000, 'within the timeout, not the default');
      const read = await apiError(through.checkouts.retrieve('co_x'));
      assert.equal(read.code, 'timeout');
    } finally {
      await front.close();
    }
  });

  test('nothing listening: network_error after two retries of a GET', async () => {
    const closed = await startFront(() => 'forward');
    await closed.close();
    let calls = 0;
    const through = createCheckoutClient({
      url: closed.url,
      apiKey: stack.apiKey,
      fetch: (input, init) => {
        calls++;
        return fetch(input, init);
      },
    });
    const error = await apiError(through.checkouts.retrieve('co_x'));
    assert.deepEqual([error.code, error.status, calls], ['network_error', 0, 3]);
    assert.match(error.message, /ECONNREFUSED/);
  });

  test('an answer quoting the API key back: the key is scrubbed from the message', async () => {
    const front = await startFront(() => ({ status: 401, body: JSON.stringify(errorBody('unauthorized', `Key ${stack.apiKey} is not valid.`)) }));
    try {
      const error = await apiError(createCheckoutClient({ url: front.url, apiKey: stack.apiKey }).checkouts.retrieve('co_x'));
      assert.equal(error.code, 'unauthorized');
      assert.ok(!error.message.includes(stack.apiKey), 'the key is not quoted');
      assert.match(error.message, /Key \[api key\] is not valid/);
    } finally {
      await front.close();
    }
  });
});
