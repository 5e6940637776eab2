/** `pix-checkout disputes [list] | resolve <reference> --note "..."`: disputed payments, from the proxy's store. */
import { DisputeService } from '../domain/disputes.ts';
import { Outcomes } from '../domain/outcomes.ts';
import { createLogger } from '../log.ts';
import { PARTNER_STATUS } from '../partner/wire.ts';
import { ExitCode, UsageError, count, openCliStore, parse, printList, referenceArg, type CliIo } from './io.ts';

export const HELP = `Usage: pix-checkout disputes [list] [--limit <n>] [--json]
       pix-checkout disputes resolve <reference> --note "<what was found>"

Disputed payments, read from the proxy's store in PIX_DATA_DIR (default .data) or PIX_DATABASE_URL:
a final payment (paid or canceled) that a later authenticated notification of the partner contradicts.
The recorded status stands; refunds of its checkout are refused (409 disputed) while it is open.
list shows the open ones. resolve closes one once you have checked the payment with the partner,
with a note saying what you found; refunds of its checkout are accepted again.`;

export async function disputesCommand(rest: string[], io: CliIo): Promise<void> {
  const { values, positionals } = parse(rest, { limit: { type: 'string' }, note: { type: 'string' } });
  if (values.help) return io.out(HELP);
  const [sub = 'list', target] = positionals;
  if (sub !== 'list' && sub !== 'resolve') throw new UsageError(`unknown disputes command ${sub}; use list or resolve`);
  const limit = count(values.limit, '--limit', 1000);
  let reference = '';
  let note = '';
  if (sub === 'resolve') {
    reference = referenceArg(target, 'disputes resolve');
    note = values.note?.trim() ?? '';
    if (note === '') throw new UsageError('disputes resolve needs --note "<what was found>"');
    if (note.length > 1000) throw new UsageError('--note must be at most 1000 characters');
  }
  const store = await openCliStore(io.env);
  try {
    const log = createLogger({ level: 'silent' });
    // Resolving opens nothing: the outcomes told here have no listener.
    const disputes = new DisputeService({ store, now: Date.now, log, outcomes: new Outcomes(log) });
    if (sub === 'list') {
      const data = (await disputes.open(limit)).map((d) => ({
        reference: d.reference,
        checkout_id: d.checkoutId,
        recorded_status: d.recordedStatus === PARTNER_STATUS.approved ? 'paid' : 'canceled',
        notified_status: d.notified === 'approved' ? 'paid' : 'canceled',
        webhook_event: d.webhookEventId,
        opened_at: new Date(d.openedAt).toISOString(),
      }));
      printList(
        io,
        values.json,
        data,
        'No open disputes.',
        (d) =>
          `${d.reference}  recorded ${d.recorded_status.padEnd(8)}  notified ${d.notified_status.padEnd(8)}  checkout ${d.checkout_id ?? '-'}  since ${d.opened_at}`,
      );
      return;
    }
    const resolved = await disputes.resolve(reference, note);
    if (!resolved) {
      io.err(`pix-checkout: no open dispute of ${reference}`);
      throw new ExitCode(1);
    }
    const data = { reference, resolved_at: new Date(resolved.resolvedAt!).toISOString(), note };
    if (values.json) io.out(JSON.stringify(data));
    else io.out(`Dispute of ${reference} resolved; refunds of its checkout are accepted again.`);
  } finally {
    await store.close();
  }
}
