/** `pix-checkout payment create|status|show`: payments straight at the partner service. */
import { nameAndDocumentTogether } from '../../src/shared/contract.ts';
import { LIMITS, formatReais } from '../../src/shared/limits.ts';
import { partnerConfig } from '../config/index.ts';
import type { PaymentDetails } from '../partner/client.ts';
import { describeStatus, freshStatusWarning, statusJson, type StatusCodes } from '../partner/status-codes.ts';
import { CreatePartnerPaymentRequest } from '../partner/wire.ts';
import { UsageError, checkArgs, client, isoOrNull, parse, print, reais, referenceArg, type CliIo } from './io.ts';

export const HELP = `Usage:
  pix-checkout payment create --value <reais> [--description <text>] [--name <name> --document <cpf/cnpj>]
                              [--expiration <seconds>] [--transaction-id <id>] [--json]
  pix-checkout payment status <reference> [--json]
  pix-checkout payment show <reference> [--json]

create: value ${formatReais(LIMITS.paymentValue.min)} to ${formatReais(LIMITS.paymentValue.max)}; description at most ${LIMITS.descriptionMaxLength} characters; name and document together;
expiration in seconds (default ${LIMITS.defaultExpirationSeconds}). Arguments outside these exit 2 and nothing is sent.
status: the state from the payment's details (4.5), its code read with PIX_STATUS_CODES (which the
command does not check: pix-checkout doctor --create does, and create warns when a new payment's code
is not the configured pending one), and the quick check's (HEAD, 4.4) HTTP answer as a hint only.
show: the full record.`;

/** Which option gives each field of the partner's create request. */
const CREATE_FLAGS = {
  value: '--value',
  description: '--description',
  name: '--name',
  document: '--document',
  expiration: '--expiration',
  transaction_id: '--transaction-id',
};

/** The details as the command prints them with --json: the proxy API's field names (PaymentView). */
function detailsJson(record: PaymentDetails, codes: StatusCodes) {
  return {
    reference: record.externalReference,
    status: statusJson(codes, record.status),
    value: record.value,
    created_at: isoOrNull(record.createdAt),
    favoured: record.favoured,
    checkout_url: record.checkoutUrl,
    qr_code_url: record.qrCodeUrl,
    brcode: record.pixKey,
  };
}

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
  const config = () => partnerConfig(io.env);
  if (sub === 'create') {
    const expiration = values.expiration === undefined ? undefined : Number(values.expiration);
    if (expiration !== undefined && !(Number.isInteger(expiration) && expiration > 0)) throw new UsageError('--expiration must be whole seconds');
    const value = reais(values.value, '--value');
    const missing = nameAndDocumentTogether(values);
    if (missing) throw new UsageError(`--name and --document go together (--${missing} is missing)`);
    const input = {
      value,
      description: values.description,
      name: values.name,
      document: values.document,
      expiration,
      transaction_id: values['transaction-id'],
    };
    // The partner client's own check, here, so a value out of range is a bad argument (exit 2) and costs no request.
    checkArgs(CreatePartnerPaymentRequest, { ...input, tenant_id: 'fetched when sent' }, CREATE_FLAGS);
    const cfg = config();
    const created = await (await client(cfg, io.env)).createPayment(input);
    // A new payment is pending by definition: another code proves PIX_STATUS_CODES wrong.
    const warning = freshStatusWarning(cfg.statusCodes, created.status, 'payment');
    if (warning) io.err(warning);
    const data = {
      reference: created.externalReference,
      transaction_id: created.transactionId,
      status: statusJson(cfg.statusCodes, created.status),
      value,
      created_at: isoOrNull(created.createdAt),
      // The spec's rule: a QR code expires `expiration` seconds after creation.
      expires_at: created.createdAt === null ? null : isoOrNull(created.createdAt + (expiration ?? LIMITS.defaultExpirationSeconds) * 1000),
      checkout_url: created.checkoutUrl,
      qr_code_url: created.qrCodeUrl,
      brcode: created.pixKey,
    };
    return print(io, values.json === true, data, [
      ['reference', data.reference],
      ['transaction id', data.transaction_id],
      ['status', created.status ? describeStatus(cfg.statusCodes, created.status) : 'not given'],
      ['value', value.toFixed(2)],
      ['created at', data.created_at ?? 'not given'],
      ['expires at', data.expires_at ?? 'not given'],
      ['checkout', data.checkout_url],
      ['qr image', data.qr_code_url],
      ['copy and paste', data.brcode],
    ]);
  }
  if (sub === 'status' || sub === 'show') {
    const ref = referenceArg(reference, `payment ${sub}`);
    const cfg = config();
    const partner = await client(cfg, io.env);
    const record = await partner.getPayment(ref);
    if (sub === 'status') {
      // The state comes from the details; HEAD's bare HTTP status is shown for what it is.
      const check = await partner.checkPayment(ref).catch((error: unknown) => ({ error: error instanceof Error ? error.message : String(error) }));
      const quick =
        'error' in check
          ? { http_status: null, hint: null, error: check.error }
          : { http_status: check.httpStatus, hint: check.hint, note: 'a hint under the assumed mapping (ASSUMPTIONS.md), never the state' };
      return print(io, values.json === true, { reference: ref, status: detailsJson(record, cfg.statusCodes).status, quick_check: quick }, [
        ['reference', ref],
        [
          'status',
          `${describeStatus(cfg.statusCodes, record.status)} (from the details, as PIX_STATUS_CODES reads it; pix-checkout doctor --create checks that setting)`,
        ],
        [
          'quick check',
          quick.http_status === null ? `failed: ${quick.error}` : `HTTP ${quick.http_status} (${quick.hint} under the assumed mapping: a hint only)`,
        ],
      ]);
    }
    const data = detailsJson(record, cfg.statusCodes);
    return print(io, values.json === true, data, [
      ['reference', data.reference],
      ['status', describeStatus(cfg.statusCodes, record.status)],
      ['value', data.value === null ? null : data.value.toFixed(2)],
      ['created at', data.created_at],
      ['favoured', data.favoured],
      ['checkout', data.checkout_url],
      ['copy and paste', data.brcode],
    ]);
  }
  throw new UsageError(`unknown payment command ${sub ?? '(none)'}; use create, status or show`);
}
