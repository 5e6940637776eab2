/**
 * `pix-checkout transfer create|status|list` and `pix-checkout refund <checkout>`: payouts and refunds
 * through the proxy's own payouts service (domain/payouts.ts) over its store in PIX_DATA_DIR, the
 * same code as POST /api/transfers and /api/checkouts/:id/refunds: stored before the partner is
 * called, idempotent, followed by the running proxy, told to the merchant's webhook.
 */
import { randomUUID } from 'node:crypto';
import { CreateRefundRequest, CreateTransferRequest } from '../../src/shared/contract.ts';
import { LIMITS, formatReais } from '../../src/shared/limits.ts';
import { IdempotencyKey, TRANSFER_STATUSES, type TransferStatus, type TransferView } from '../../src/shared/payouts.ts';
import { partnerConfig, resolveSettings } from '../config/index.ts';
import { createServices, type Services } from '../services.ts';
import { createLogger } from '../log.ts';
import type { TransferDetails } from '../partner/client.ts';
import { describeStatus, statusJson, type StatusCodes } from '../partner/status-codes.ts';
import { tokenStoreKey } from '../partner/client.ts';
import type { Store } from '../store/store.ts';
import { ExitCode, UsageError, checkArgs, client, count, isoOrNull, maskDocument, openCliStore, parse, print, printList, type CliIo } from './io.ts';
import { detectPixKeyType } from '../../src/shared/pix-keys.ts';

const RANGE = `${formatReais(LIMITS.transferValue.min)} to ${formatReais(LIMITS.transferValue.max)}`;

export const HELP = `Usage:
  pix-checkout transfer create --value <reais> --key <pix key> [--key-type CPF|EMAIL|TELEFONE|CHAVE_ALEATORIA]
                               [--document <customer cpf/cnpj>] [--reference <your id>] [--idempotency-key <key>] [--json]
  pix-checkout transfer status <transfer id | partner reference> [--json]
  pix-checkout transfer list [--status ${TRANSFER_STATUSES.join('|')}] [--limit <n>] [--json]

create sends a Pix transfer through the proxy's payouts (its store in PIX_DATA_DIR, default .data):
stored first, sent once, then followed by the running proxy, whose merchant webhook tells its
outcome (transfer.approved, transfer.canceled, transfer.refused). With --document it is solicited for
that customer (the key must be theirs, their KYC approved); without it, it goes to the key's owner.
Value ${RANGE}; the key type is read from the key when --key-type is not given.
--idempotency-key names the operation: the same key and options answer the same transfer again
(default: a new key, printed). When the partner's answer is lost the transfer is "unknown": it may
have been carried out, it is never sent again, and the command exits 3; check with the partner.
status takes the transfer id (tr_...) from the store, or asks the partner about its reference.`;

export const REFUND_HELP = `Usage:
  pix-checkout refund <checkout id> --key <customer's pix key> [--value <reais>] [--key-type <type>]
                      [--document <customer cpf/cnpj>] [--idempotency-key <key>] [--json]

Refunds a paid checkout by a new Pix transfer to the customer's key (the partner's API has no
"devolução"): part of it with --value, or whatever is left without. The refunds of a checkout never
add up to more than it was paid. Exit codes as for transfer create.`;

/** The request's fields as the command's options, so a problem names what the user typed. */
const FLAG_OF: Record<string, string> = {
  value: '--value',
  pix_key: '--key',
  pix_key_type: '--key-type',
  customer_document: '--document',
  reference: '--reference',
};

/** A value in reais as typed (`10.50`): a number for the schema, which judges its range. */
function amount(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  if (!/^\d+(\.\d{1,2})?$/.test(text)) throw new UsageError(`--value must be an amount in reais like 10.50 (${RANGE})`);
  return Number(text);
}

function idempotencyKey(given: string | undefined): string {
  if (given === undefined) return randomUUID();
  if (!IdempotencyKey.safeParse(given).success) throw new UsageError('--idempotency-key must be 1 to 255 printable characters without spaces');
  return given;
}

/** The proxy's services over its store and the configured partner: the same code the proxy runs. */
async function payoutsOf(io: CliIo): Promise<{ store: Store; payouts: Services['payouts']; numbering: Services['numbering']; close: () => Promise<void> }> {
  const config = partnerConfig(io.env);
  const partner = await client(config, io.env);
  const store = await openCliStore(io.env);
  // The domain alone: the command needs no HTTP stack.
  const services = createServices(resolveSettings({ statusCodes: config.statusCodes, transferStatusCodes: config.transferStatusCodes }), {
    partner,
    store,
    partnerScope: tokenStoreKey(config.baseUrl, config.credentials?.email),
    // Silent: the command prints its own result and warnings.
    logger: createLogger({ level: 'silent' }),
  });
  return {
    store,
    payouts: services.payouts,
    numbering: services.numbering,
    close: async () => {
      await services.stop();
      await store.close();
    },
  };
}

export async function transferCommand(rest: string[], io: CliIo): Promise<void> {
  const { values, positionals } = parse(rest, {
    value: { type: 'string' },
    key: { type: 'string' },
    'key-type': { type: 'string' },
    document: { type: 'string' },
    reference: { type: 'string' },
    'idempotency-key': { type: 'string' },
    status: { type: 'string' },
    limit: { type: 'string' },
  });
  if (values.help) return io.out(HELP);
  const [sub, target] = positionals;
  const json = values.json === true;
  if (sub === 'create') {
    const input = checkArgs(
      CreateTransferRequest,
      {
        value: amount(values.value),
        pix_key: values.key,
        pix_key_type: values['key-type'],
        customer_document: values.document,
        reference: values.reference,
      },
      FLAG_OF,
    );
    const key = idempotencyKey(values['idempotency-key']);
    const { payouts, numbering, close } = await payoutsOf(io);
    try {
      const { transfer } = await payouts.transfer(input, key);
      // A transfer's code checks nothing (transfers verify no numbering); a mismatch payments found is still said.
      const { problem } = numbering.report();
      if (problem) io.err(`warning: ${problem}`);
      return report(io, json, transfer, key);
    } finally {
      await close();
    }
  }
  if (sub === 'status') {
    if (!target) throw new UsageError('transfer status needs the transfer id (tr_...) or the partner reference');
    if (/^tr_/.test(target)) {
      const { payouts, close } = await payoutsOf(io);
      try {
        return report(io, json, await payouts.get(target), null);
      } finally {
        await close();
      }
    }
    const config = partnerConfig(io.env);
    return printPartnerTransfer(io, json, await (await client(config, io.env)).checkTransfer(target), config.transferStatusCodes);
  }
  if (sub === 'list') {
    const status = values.status;
    if (status !== undefined && !(TRANSFER_STATUSES as readonly string[]).includes(status)) {
      throw new UsageError(`--status must be one of ${TRANSFER_STATUSES.join(', ')}`);
    }
    const limit = count(values.limit, '--limit', 100);
    const { payouts, close } = await payoutsOf(io);
    try {
      const { data } = await payouts.list({ status: status as TransferStatus | undefined, limit });
      printList(
        io,
        json,
        data,
        'No transfers.',
        (t) => `${t.transfer_id}  ${t.status.padEnd(8)}  ${t.value.toFixed(2).padStart(10)}  ${t.pix_key}  ${t.created_at}`,
      );
      return;
    } finally {
      await close();
    }
  }
  throw new UsageError(`unknown transfer command ${sub ?? '(none)'}; use create, status or list`);
}

export async function refundCommand(rest: string[], io: CliIo): Promise<void> {
  const { values, positionals } = parse(rest, {
    value: { type: 'string' },
    key: { type: 'string' },
    'key-type': { type: 'string' },
    document: { type: 'string' },
    'idempotency-key': { type: 'string' },
  });
  if (values.help) return io.out(REFUND_HELP);
  const [checkoutId] = positionals;
  if (!checkoutId || !/^co_[A-Za-z0-9_-]{24}$/.test(checkoutId)) throw new UsageError('refund needs the checkout id (co_...)');
  const input = checkArgs(
    CreateRefundRequest,
    {
      value: amount(values.value),
      pix_key: values.key,
      pix_key_type: values['key-type'],
      customer_document: values.document,
    },
    FLAG_OF,
  );
  const key = idempotencyKey(values['idempotency-key']);
  const { payouts, close } = await payoutsOf(io);
  try {
    const { transfer } = await payouts.refund(checkoutId, input, key);
    return report(io, values.json === true, transfer, key);
  } finally {
    await close();
  }
}

/** Prints the transfer; a refusal exits 1, an unknown outcome 3 (it may have been carried out). */
function report(io: CliIo, json: boolean, t: TransferView, key: string | null): void {
  print(io, json, key === null ? t : { ...t, idempotency_key: key }, [
    ['transfer id', t.transfer_id],
    ['status', t.status],
    ['value', t.value.toFixed(2)],
    ['key', `${t.pix_key}${t.pix_key_type ? ` (${t.pix_key_type})` : ''}`],
    ['reference', t.reference],
    ['checkout', t.checkout_id],
    ['partner reference', t.partner_reference],
    ['transaction id', t.transaction_id],
    ['reason', t.reason ? `${t.reason}${t.reason_message ? `: ${t.reason_message}` : ''}` : null],
    ['created at', t.created_at],
    ['idempotency key', key],
  ]);
  if (t.status === 'refused') {
    io.err(`pix-checkout: the partner refused the transfer; no money moved`);
    io.err(`  reason: ${t.reason ?? 'refused'}${t.reason_message ? ` (${t.reason_message})` : ''}`);
    throw new ExitCode(1);
  }
  if (t.status === 'unknown') {
    io.err(
      `pix-checkout: OUTCOME UNKNOWN: the partner's answer was lost; it may have been carried out. Do not send it again before checking with the partner.`,
    );
    io.err(`  transaction_id: ${t.transaction_id}`);
    throw new ExitCode(3);
  }
}

function printPartnerTransfer(io: CliIo, json: boolean, t: TransferDetails, codes: StatusCodes): void {
  const key = t.pixKey === null ? null : t.pixKeyType === 'CPF' || detectPixKeyType(t.pixKey) === 'CPF' ? maskDocument(t.pixKey) : t.pixKey;
  const data = {
    reference: t.externalReference,
    status: statusJson(codes, t.status, 'PIX_TRANSFER_STATUS_CODES'),
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
    ['status', `${describeStatus(codes, t.status)}${t.status?.code != null ? ' (as PIX_TRANSFER_STATUS_CODES reads it; not checked here)' : ''}`],
    ['value', data.value === null ? null : data.value.toFixed(2)],
    ['key', key === null ? null : `${key}${t.pixKeyType ? ` (${t.pixKeyType})` : ''}`],
    ['transaction id', data.transaction_id],
    ['created at', data.created_at],
    ['updated at', data.updated_at],
  ]);
}
