/** `pix-checkout deliveries list|replay|resume`: the merchant webhook's deliveries, from the proxy's store. */
import { resumeEndpoint } from '../domain/endpoint-state.ts';
import { ExitCode, UsageError, count, openCliStore, parse, printList, type CliIo } from './io.ts';

export const HELP = `Usage: pix-checkout deliveries list [--failed] [--limit <n>] [--json]
       pix-checkout deliveries replay <id> | --all
       pix-checkout deliveries resume

The merchant webhook's deliveries (PIX_MERCHANT_WEBHOOK_URL), read from the proxy's store in
PIX_DATA_DIR (default .data). list shows each outcome event, its state (pending, delivered, failed)
and attempts; --failed only those given up. replay queues one again, or --all every failed one;
the running proxy sends them within seconds, with the same event id. resume turns the endpoint back
on after a day of failures disabled it (a /ready warning, an error line) and sends what waited, each
with a new three-day retry window.`;

export async function deliveriesCommand(rest: string[], io: CliIo): Promise<void> {
  const { values, positionals } = parse(rest, { failed: { type: 'boolean' }, all: { type: 'boolean' }, limit: { type: 'string' } });
  const [sub, target] = positionals;
  if (values.help) return io.out(HELP);
  if (sub !== 'list' && sub !== 'replay' && sub !== 'resume') throw new UsageError(`unknown deliveries command ${sub ?? '(none)'}; use list, replay or resume`);
  if (sub === 'replay' && !values.all && (target === undefined || !/^\d+$/.test(target)))
    throw new UsageError('deliveries replay needs a delivery id, or --all');
  const limit = count(values.limit, '--limit', 1000);
  const store = await openCliStore(io.env);
  try {
    if (sub === 'list') {
      const rows = await store.outbox.list({ state: values.failed ? 'failed' : undefined, limit });
      const data = rows.map((r) => ({
        id: r.id,
        event_id: r.eventId,
        type: r.type,
        reference: r.reference,
        state: r.state,
        attempts: r.attempts,
        last_error: r.lastError,
        created_at: new Date(r.createdAt).toISOString(),
        next_attempt_at: r.state === 'pending' ? new Date(r.nextAttemptAt).toISOString() : null,
        delivered_at: r.deliveredAt === null ? null : new Date(r.deliveredAt).toISOString(),
      }));
      printList(
        io,
        values.json,
        data,
        values.failed ? 'No failed deliveries.' : 'No deliveries.',
        (d) =>
          `${String(d.id).padStart(6)}  ${d.state.padEnd(9)}  ${d.type.padEnd(17)}  ${d.reference}  attempts ${d.attempts}${d.last_error ? `  last error ${d.last_error}` : ''}`,
      );
      return;
    }
    if (sub === 'resume') {
      const { wasDisabled, queued } = await resumeEndpoint(store, Date.now());
      if (values.json) return io.out(JSON.stringify({ was_disabled: wasDisabled, queued }));
      io.out(
        `${wasDisabled ? 'The merchant webhook endpoint is enabled again' : 'The merchant webhook endpoint was not disabled'}; ` +
          `${queued} pending ${queued === 1 ? 'delivery' : 'deliveries'} due now (the running proxy sends them within seconds).`,
      );
      return;
    }
    const count = await store.outbox.replay(values.all ? 'failed' : Number(target), Date.now());
    if (!values.all && count === 0) {
      io.err(`pix-checkout: no delivery ${target} to replay (unknown, or its body was pruned after PIX_RETENTION_DAYS)`);
      throw new ExitCode(1);
    }
    // A running proxy picks them up at its next look (every second).
    if (values.json) io.out(JSON.stringify({ replayed: count }));
    else io.out(`${count} ${count === 1 ? 'delivery' : 'deliveries'} queued again; the running proxy sends ${count === 1 ? 'it' : 'them'} within seconds.`);
    return;
  } finally {
    await store.close();
  }
}
