/**
 * `pix-checkout unrecorded [--record]`: payments the partner may have created that the proxy's store
 * does not know, from the intents the proxy writes before each create (store/intents/).
 */
import { formatReais } from '../../src/shared/limits.ts';
import { UsageError, count, openCliStore, parse, printList, type CliIo } from './io.ts';

export const HELP = `Usage: pix-checkout unrecorded [--older-than <seconds>] [--limit <n>] [--record] [--json]

Payment creates the proxy sent to the partner (each under our transaction_id, written to the store
before the partner is asked) whose payment the store does not hold, read from PIX_DATA_DIR (default
.data) or PIX_DATABASE_URL; newest first, those older than --older-than seconds (default 60: a create
under way is not listed).
- answer kept: the partner created it (its reference is known) and the store could not take the
  payment; a running proxy records it when the store is back. --record records these now (never
  shown to a customer: the proxy follows each to its cancellation).
- outcome unknown: the partner's answer never came (a timeout, an answer lost, or the proxy stopped);
  ask the partner about the transaction_id (its panel) or check the proxy's error lines naming it.`;

export async function unrecordedCommand(rest: string[], io: CliIo): Promise<void> {
  const { values, positionals } = parse(rest, { 'older-than': { type: 'string' }, limit: { type: 'string' }, record: { type: 'boolean' } });
  if (values.help) return io.out(HELP);
  if (positionals.length > 0) throw new UsageError(`unrecorded takes no arguments (got ${positionals[0]})`);
  const olderThan = values['older-than'] ?? '60';
  if (!/^\d+$/.test(olderThan)) throw new UsageError('--older-than must be a whole number of seconds');
  const olderThanMs = Number(olderThan) * 1000;
  const limit = count(values.limit, '--limit', 1000);
  const store = await openCliStore(io.env);
  try {
    const intents = await store.intents.unrecorded(Date.now() - olderThanMs, limit);
    const recorded: string[] = [];
    if (values.record) {
      for (const intent of intents) {
        if (!intent.answer || (await store.payments.get(intent.answer.reference))) continue;
        await store.payments.insert(intent.answer);
        recorded.push(intent.answer.reference);
      }
    }
    const data = intents.map((i) => ({
      transaction_id: i.transactionId,
      state: i.reference ? (recorded.includes(i.reference) ? 'recorded_now' : 'answer_kept') : 'outcome_unknown',
      reference: i.reference,
      checkout_id: i.checkoutId,
      value: i.valueCents / 100,
      sent_at: new Date(i.createdAt).toISOString(),
    }));
    printList(
      io,
      values.json,
      data,
      'No payment created at the partner is missing from the store.',
      (d) =>
        `${d.transaction_id}  ${d.state.padEnd(15)}  ${(d.reference ?? '-').padEnd(24)}  ${formatReais(d.value).padStart(12)}  checkout ${d.checkout_id ?? '-'}  sent ${d.sent_at}`,
    );
  } finally {
    await store.close();
  }
}
