/** `pix-checkout data export|erase --document <cpf|cnpj>` and `data purge`: a data subject's request and the retention purge, on the proxy's store. */
import { documentKind } from '../../src/shared/document.ts';
import { readSettings } from '../config/index.ts';
import { DataKeyError, PersonalData, PersonalDataCipher, maskDocument } from '../domain/personal-data.ts';
import { createLogger } from '../log.ts';
import { ExitCode, UsageError, openCliStore, parse, type CliIo } from './io.ts';

export const HELP = `Usage: pix-checkout data export --document <cpf|cnpj>
       pix-checkout data erase --document <cpf|cnpj> [--dry-run] [--json]
       pix-checkout data purge [--json]

A data subject's request (LGPD art. 18) and the retention purge, on the proxy's store in PIX_DATA_DIR
(default .data) or PIX_DATABASE_URL. See docs/personal-data.md.
export prints as JSON everything held about the person of that CPF or CNPJ: their checkouts with
  name and document (opened with PIX_DATA_KEY), their payments, and the payouts and refunds to
  their key, with amounts, references, states and times. A payment's partner_status is the
  partner's status in the proxy's numbering (its code translated by PIX_STATUS_CODES), and
  partner_status_meaning says what it is: pending, approved, canceled (unknown for another number).
erase erases their personal fields now (a checkout's name and document, a payout's or refund's Pix
  key), pending records included; amounts, references, states and times are kept (fiscal records,
  LGPD art. 16). A checkout that issues another code afterwards issues it without customer data.
  --dry-run lists the records it would erase (ids, order ids, kinds; no personal value) and erases
  nothing.
purge runs the retention purge once (PIX_RETENTION_DAYS, default 180), as the proxy does every
  hour: for cron, or to see what it does.
The document is checked (CPF/CNPJ check digits) and never printed whole but in the export.
Exit codes: 0 done; 1 the store failed, or a stored document does not open with PIX_DATA_KEY;
2 bad arguments or configuration.`;

export async function dataCommand(rest: string[], io: CliIo): Promise<void> {
  const { values, positionals } = parse(rest, { document: { type: 'string' }, 'dry-run': { type: 'boolean' } });
  if (values.help) return io.out(HELP);
  const [sub] = positionals;
  if (sub !== 'export' && sub !== 'erase' && sub !== 'purge') throw new UsageError(`data needs export, erase or purge; see pix-checkout data --help`);
  if (positionals.length > 1) throw new UsageError(`data ${sub} takes no argument but its options`);
  let document = '';
  if (sub !== 'purge') {
    if (values.document === undefined) throw new UsageError(`data ${sub} needs --document <cpf|cnpj>`);
    // The value is personal data: the problem says what is wrong, never the value.
    if (documentKind(values.document) === null)
      throw new UsageError('--document must be a valid CPF (11 digits) or CNPJ (14 characters): its check digits do not match');
    document = values.document;
  } else if (values.document !== undefined) throw new UsageError('data purge takes no --document: it erases by age (PIX_RETENTION_DAYS)');
  if (values['dry-run'] && sub !== 'erase') throw new UsageError(`--dry-run goes with data erase`);

  const { values: settings, problems } = readSettings(io.env, ['PIX_DATA_KEY', 'PIX_RETENTION_DAYS']);
  if (problems.length > 0) throw new UsageError(problems.join('; '));
  const cipher = new PersonalDataCipher(settings.PIX_DATA_KEY);
  const store = await openCliStore(io.env);
  try {
    const data = new PersonalData({ store, cipher, retentionDays: settings.PIX_RETENTION_DAYS, now: Date.now, log: createLogger({ level: 'silent' }) });
    if (!cipher.keyed && sub !== 'purge') io.err('pix-checkout: PIX_DATA_KEY is not set: documents stored encrypted under a key are not found without it');
    if (sub === 'export') return io.out(JSON.stringify(await data.export(document), null, 2));
    if (sub === 'erase' && values['dry-run']) {
      const plan = await data.planErase(document);
      if (values.json)
        return io.out(
          JSON.stringify({
            document: maskDocument(document),
            dry_run: true,
            would_erase: { checkouts: plan.checkouts, payouts: plan.payouts },
            in_flight: plan.in_flight,
          }),
        );
      io.out(
        `Would erase the personal data of ${maskDocument(document)} (--dry-run: nothing erased): ${plan.checkouts.length} checkout(s) and ${plan.payouts.length} payout(s) or refund(s).`,
      );
      for (const c of plan.checkouts) io.out(`  checkout ${c.checkout_id}  order ${c.order_id}  ${c.created_at}: name and document`);
      for (const p of plan.payouts) io.out(`  ${p.kind} ${p.transfer_id}  ${p.state}  ${p.created_at}: Pix key`);
      for (const p of plan.in_flight) io.out(`  ${p.kind} ${p.transfer_id}: being sent now, left as it is`);
      return;
    }
    if (sub === 'erase') {
      const report = await data.erase(document);
      if (values.json)
        return io.out(
          JSON.stringify({ document: maskDocument(document), erased: { checkouts: report.checkouts, payouts: report.payouts }, in_flight: report.inFlight }),
        );
      io.out(
        `Erased the personal data of ${maskDocument(document)}: ${report.checkouts} checkout(s) and ${report.payouts} payout(s) or refund(s); amounts, references, states and times kept.`,
      );
      if (report.inFlight > 0) io.out(`${report.inFlight} payout(s) being sent now were left as they are: run erase again in a minute.`);
      return;
    }
    const purged = await data.purge();
    if (!purged) {
      io.out('Another instance is purging now: nothing done.');
      return;
    }
    const summary = {
      cutoff: new Date(purged.cutoff).toISOString(),
      erased: { checkouts: purged.checkouts, payouts: purged.payouts },
      pruned: { notifications: purged.notifications, deliveries: purged.deliveries },
      sealed: purged.sealed,
    };
    if (values.json) return io.out(JSON.stringify(summary));
    io.out(
      `Records final before ${summary.cutoff}: personal data of ${purged.checkouts} checkout(s) and ${purged.payouts} payout(s) erased; ` +
        `${purged.notifications} notification(s) deleted, ${purged.deliveries} delivered event(s) pruned` +
        (cipher.keyed ? `; ${purged.sealed} document(s) kept in clear encrypted.` : '.'),
    );
  } catch (error) {
    if (!(error instanceof DataKeyError)) throw error;
    io.err(`pix-checkout: ${error.message}`);
    throw new ExitCode(1);
  } finally {
    await store.close();
  }
}
