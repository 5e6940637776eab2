/** `pix-checkout payment create|status|show`: payments straight at the partner service. */
import { LIMITS, formatReais } from '../../src/shared/limits.ts';
import { partnerConfig } from '../config.ts';
import { UsageError, client, parse, print, reais, statusLabel, type CliIo } from './io.ts';

export const HELP = `Usage:
  pix-checkout payment create --value <reais> [--description <text>] [--name <name> --document <cpf/cnpj>]
                              [--expiration <seconds>] [--transaction-id <id>] [--json]
  pix-checkout payment status <reference> [--json]
  pix-checkout payment show <reference> [--json]

create: value ${formatReais(LIMITS.paymentValue.min)} to ${formatReais(LIMITS.paymentValue.max)}; description at most ${LIMITS.descriptionMaxLength} characters; name and document together.
status: the quick check (paid, pending or canceled). show: the full record.`;

export async function paymentCommand(rest: string[], io: CliIo): Promise<void> {
  const { values, positionals } = parse(rest, {
    value: { type: 'string' },
    description: { type: 'string' },
    name: { type: 'string' },
    document: { type: 'string' },
    expiration: { type: 'string' },
    'transaction-id': { type: 'string' },
  });
  if (values.help) return io.out(HELP);
  const [sub, reference] = positionals;
  if (sub === 'create') {
    const expiration = values.expiration === undefined ? undefined : Number(values.expiration);
    if (expiration !== undefined && !(Number.isInteger(expiration) && expiration > 0)) throw new UsageError('--expiration must be whole seconds');
    const created = await (
      await client(partnerConfig(io.env))
    ).createPayment({
      value: reais(values.value, '--value'),
      description: values.description,
      name: values.name,
      document: values.document,
      expiration,
      transaction_id: values['transaction-id'],
    });
    return print(io, values.json === true, created, [
      ['reference', created.externalReference],
      ['transaction id', created.transactionId],
      ['created at', created.createdAt],
      ['checkout', created.checkoutUrl],
      ['qr image', created.qrCodeUrl],
      ['copy and paste', created.pixKey],
    ]);
  }
  if (sub === 'status' || sub === 'show') {
    if (!reference) throw new UsageError(`payment ${sub} needs the reference`);
    const partner = await client(partnerConfig(io.env));
    if (sub === 'status') {
      const status = await partner.checkPayment(reference);
      return print(io, values.json === true, { reference, status }, [
        ['reference', reference],
        ['status', status],
      ]);
    }
    const record = await partner.getPayment(reference);
    return print(io, values.json === true, record, [
      ['reference', record.external_reference],
      ['status', statusLabel(record.status)],
      ['value', record.value.toFixed(2)],
      ['created at', record.created_at],
      ['favoured', record.pix_deposit.favoured],
      ['checkout', record.pix_deposit.checkout],
      ['copy and paste', record.pix_deposit.pix_key],
    ]);
  }
  throw new UsageError(`unknown payment command ${sub ?? '(none)'}; use create, status or show`);
}
