/** `pix-checkout transfer create|status`: transfers to Pix keys straight at the partner service. */
import { LIMITS, formatReais } from '../../src/shared/limits.ts';
import { PIX_KEY_TYPES, detectPixKeyType } from '../../src/shared/pix-keys.ts';
import { partnerConfig } from '../config.ts';
import type { TransferDetails } from '../partner/client.ts';
import { describeStatus, freshStatusWarning, statusJson, type StatusCodes } from '../partner/status-codes.ts';
import type { PixKeyType } from '../partner/wire.ts';
import { UsageError, client, isoOrNull, maskDocument, parse, print, reais, type CliIo } from './io.ts';

export const HELP = `Usage:
  pix-checkout transfer create --value <reais> --key <pix key> [--key-type CPF|EMAIL|TELEFONE|CHAVE_ALEATORIA]
                               [--document <customer cpf/cnpj>] [--transaction-id <id>] [--json]
  pix-checkout transfer status <reference> [--json]

With --document, the transfer is solicited for that customer (the key must be theirs and their KYC
approved); without it, it goes to the key's owner. A transfer is sent once: when its answer is lost
or unreadable, the command says the outcome is unknown, names its transaction id and exits 3; check
with the partner before sending it again. Value ${formatReais(LIMITS.transferValue.min)} to ${formatReais(LIMITS.transferValue.max)}. The key type is read
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
  const cfg = () => partnerConfig(io.env);
  const partner = async () => client(cfg());
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
    // A new transfer is pending: another code proves PIX_STATUS_CODES wrong (for transfers at least).
    const warning = freshStatusWarning(cfg().statusCodes, transfer.status, 'transfer');
    if (warning) io.err(warning);
    return printTransfer(io, values.json === true, transfer, cfg().statusCodes);
  }
  if (sub === 'status') {
    if (!reference) throw new UsageError('transfer status needs the reference');
    return printTransfer(io, values.json === true, await (await partner()).checkTransfer(reference), cfg().statusCodes);
  }
  throw new UsageError(`unknown transfer command ${sub ?? '(none)'}; use create or status`);
}

function printTransfer(io: CliIo, json: boolean, t: TransferDetails, codes: StatusCodes): void {
  const key = t.pixKey === null ? null : t.pixKeyType === 'CPF' || detectPixKeyType(t.pixKey) === 'CPF' ? maskDocument(t.pixKey) : t.pixKey;
  const data = {
    reference: t.externalReference,
    status: statusJson(codes, t.status),
    value: t.value,
    pix_key: key,
    pix_key_type: t.pixKeyType,
    transaction_id: t.transactionId,
    end2end: t.end2end,
    created_at: isoOrNull(t.createdAt),
    updated_at: isoOrNull(t.updatedAt),
  };
  print(io, json, data, [
    ['reference', data.reference],
    ['status', `${describeStatus(codes, t.status)}${t.status?.code != null ? ' (as PIX_STATUS_CODES reads it; not checked here)' : ''}`],
    ['value', data.value === null ? null : data.value.toFixed(2)],
    ['key', key === null ? null : `${key}${t.pixKeyType ? ` (${t.pixKeyType})` : ''}`],
    ['transaction id', data.transaction_id],
    ['created at', data.created_at],
    ['updated at', data.updated_at],
  ]);
}
