/**
 * The first-payment scenario, for stack/instances.test.ts and bench/first-payment.ts: the first payment of a new
 * database, two instances over it, as an operator going live would. A checkout is created at A, its
 * payment issued at B (B's new payment verifies the status numbering and keeps the verdict in the
 * store), a status stream is held at B, the customer pays at once, and the partner's notification
 * lands at A, which read the shared verdicts a moment before (none yet: it reads them every 2 s).
 * B polls the partner only every minute, so its stream can only learn of the payment from A.
 * Answers how long after the payment the stream at B and the merchant's webhook heard `paid`.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startDevStack, type DevStack, type RunningSandbox } from '../../server/dev-stack.ts';
import { createLogger } from '../../server/log.ts';

export interface FirstPaymentTimes {
  /** Milliseconds from the payment to `paid` on B's stream, and to the merchant's webhook; null: not within the guard. */
  streamMs: number | null;
  merchantMs: number | null;
}

export async function firstPayment(sandbox: RunningSandbox, databaseUrl: string, guardMs = 5000): Promise<FirstPaymentTimes> {
  const told = new Map<string, number>();
  const receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      try {
        const event = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { type: string; data: { reference: string } };
        if (event.type === 'payment.paid' && !told.has(event.data.reference)) told.set(event.data.reference, performance.now());
      } catch {
        // Not an event: nothing to note.
      }
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const merchantWebhook = { url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`, secret: 'first-payment-merchant-secret-0123456789' };
  const quiet = createLogger({ level: 'silent' });
  const slow = { watchIntervalMs: 60_000, staleAfterMs: 60_000 };
  const stacks: DevStack[] = [];
  let reader: ReadableStreamDefaultReader<Uint8Array> | undefined;
  try {
    const a = await startDevStack({ sandbox, databaseUrl, merchantWebhook, logger: quiet, ...slow });
    stacks.push(a);
    const b = await startDevStack({ sandbox, databaseUrl, registerWebhook: false, merchantWebhook, logger: quiet, ...slow });
    stacks.push(b);
    const created = await fetch(`${a.apiUrl}/checkouts`, {
      method: 'POST',
      headers: { authorization: `Bearer ${a.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ value: 9.9, order_id: `first-${process.pid}-${Date.now()}` }),
    });
    const { checkout_id: id } = (await created.json()) as { checkout_id: string };
    // A reads the shared verdicts now, as it does every 2 s: none yet.
    await a.pix.numbering.reload();
    const issued = await fetch(`${b.apiUrl}/checkouts/${id}/payment`, { method: 'POST' });
    const { reference } = (await issued.json()) as { reference: string };
    const stream = await fetch(`${b.apiUrl}/payments/${reference}/events`);
    reader = stream.body!.getReader();
    const decoder = new TextDecoder();
    let seen = '';
    while (!seen.includes('"status":"pending"')) seen += decoder.decode((await reader.read()).value);
    const paidAt = performance.now();
    const payment = sandbox.state.payments.get(reference);
    if (!payment || !sandbox.state.pay(payment).ok) throw new Error(`the sandbox could not pay ${reference}`);
    let streamMs: number | null = null;
    const guard = setTimeout(() => void reader?.cancel(), guardMs);
    try {
      while (!seen.includes('"status":"paid"')) {
        const { value, done } = await reader.read();
        if (done) break;
        seen += decoder.decode(value, { stream: true });
      }
      if (seen.includes('"status":"paid"')) streamMs = performance.now() - paidAt;
    } finally {
      clearTimeout(guard);
    }
    const deadline = paidAt + guardMs;
    while (!told.has(reference) && performance.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
    const merchantAt = told.get(reference);
    return { streamMs, merchantMs: merchantAt === undefined ? null : merchantAt - paidAt };
  } finally {
    await reader?.cancel().catch(() => undefined);
    for (const stack of stacks) await stack.close();
    receiver.closeAllConnections();
    await new Promise((resolve) => receiver.close(resolve));
  }
}
