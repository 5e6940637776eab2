/** `pix-checkout transfer create|status`: transfers to Pix keys straight at the partner service. */
import { LIMITS, formatReais } from '../../src/shared/limits.ts';
import { PIX_KEY_TYPES, detectPixKeyType } from '../../src/shared/pix-keys.ts';
import { partnerConfig } from '../config.ts';
import type { PartnerClient } from '../partner/client.ts';
import type { PixKeyType } from '../partner/wire.ts';
import { UsageError, client, maskDocument, parse, print, reais, statusLabel, type CliIo } from './io.ts';

export const HELP = `Usage:
  pix-checkout transfer create --value <reais> --key <pix key> [--key-type CPF|EMAIL|TELEFONE|CHAVE_ALEATORIA]
                               [--document <customer cpf/cnpj>] [--transaction-id <id>] [--json]
  pix-checkout transfer status <reference> [--json]

With --document, the transfer is solicited for that customer (the key must be theirs and their KYC
approved); without it, it goes to the key's owner. Value ${formatReais(LIMITS.transferValue.min)} to ${formatReais(LIMITS.transferValue.max)}. The key type is read
from the key when --key-type is not given.`;

export async function transferCommand(rest: string[], io: CliIo): Promise<void> {
  const { values, positionals } = parse(rest, {
    value: { type: 'string' },
    key: { type: 'string' },
    'key-type': { type: 'string' },
    document: { type: 'string' },
    'transaction-id': { type: 'string' },
  });
  if (values.help) return io.out(HELP);
  const [sub, reference] = positionals;
  const partner = async () => client(partnerConfig(io.env));
  if (sub === 'create') {
    const key = values.key;
    if (!key) throw new UsageError('--key is required');
    const value = reais(values.value, '--value');
    const keyType = values['key-type'];
    if (keyType !== undefined && !(PIX_KEY_TYPES as readonly string[]).includes(keyType)) {
      throw new UsageError(`--key-type must be one of ${PIX_KEY_TYPES.join(', ')}`);
    }
    const transfer = values.document
      ? await (
          await partner()
        ).solicitTransferForCustomer({
          customer_document: values.document,
          value,
          pix_key: key,
          pix_key_type: (keyType as PixKeyType | undefined) ?? detectPixKeyType(key) ?? 'EMAIL',
          transaction_id: values['transaction-id'],
        })
      : await (await partner()).transferToKey({ value, pix_key: key, transaction_id: values['transaction-id'] });
    return printTransfer(io, values.json === true, transfer);
  }
  if (sub === 'status') {
    if (!reference) throw new UsageError('transfer status needs the reference');
    return printTransfer(io, values.json === true, await (await partner()).checkTransfer(reference));
  }
  throw new UsageError(`unknown transfer command ${sub ?? '(none)'}; use create or status`);
}

function printTransfer(io: CliIo, json: boolean, t: Awaited<ReturnType<PartnerClient['checkTransfer']>>): void {
  const key = t.pix_key_type === 'CPF' ? maskDocument(t.pix_key) : t.pix_key;
  print(io, json, { ...t, pix_key: key }, [
    ['reference', t.external_reference],
    ['status', statusLabel(t.status)],
    ['value', t.value.toFixed(2)],
    ['key', `${key} (${t.pix_key_type})`],
    ['transaction id', t.transaction_id],
    ['created at', t.created_at],
    ['updated at', t.updated_at],
  ]);
}
