/**
 * `pix-checkout <command>`: the partner service from a terminal, through the same client and the same
 * configuration as the proxy. With nothing configured it talks to the local sandbox (`npm run sandbox`).
 */
import { readFile } from 'node:fs/promises';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { LIMITS, formatReais } from '../../src/shared/limits.ts';
import { NOTIFY_TYPE, PARTNER_STATUS, type PixKeyType } from '../partner/wire.ts';
import { PIX_KEY_TYPES, detectPixKeyType } from '../../src/shared/pix-keys.ts';
import { ConfigError, loadEnv, partnerConfig, type PartnerConfig } from '../config.ts';
import { createPartnerClient, tokenStoreKey, type PartnerClient } from '../partner/client.ts';
import { PartnerError } from '../partner/errors.ts';
import { fileTokenStore } from '../partner/token-store.ts';

export interface CliIo {
  out: (text: string) => void;
  err: (text: string) => void;
  env: Record<string, string | undefined>;
}

class UsageError extends Error {}

/** A command that already reported its problem and only needs the exit code. */
class ExitCode extends Error {
  constructor(readonly code: number) {
    super(`exit ${code}`);
  }
}

type Row = [string, string | number | boolean | null | undefined];

const HELP = {
  serve: `Usage: pix-checkout serve [--port <port>] [--host <host>]

Runs the checkout proxy: the browser API and the checkouts API under /api, /health and /ready.
Configuration from the environment or .env (docs/proxy.md lists every variable): PIX_API_KEY,
PIX_ALLOWED_ORIGINS, PIX_DATA_DIR, PIX_OPEN_AMOUNT, PIX_RENEWALS, PORT, HOST, PIX_LOG_LEVEL and the
partner's PIX_* settings. With no partner credentials it runs against an in-process sandbox.
Ctrl-C (SIGINT) or SIGTERM stops it gracefully: open streams end, requests in flight finish.`,
  deliveries: `Usage: pix-checkout deliveries list [--failed] [--limit <n>] [--json]
       pix-checkout deliveries replay <id> | --all

The merchant webhook's deliveries (PIX_MERCHANT_WEBHOOK_URL), read from the proxy's store in
PIX_DATA_DIR (default .data). list shows each outcome event, its state (pending, delivered, failed)
and attempts; --failed only those given up. replay queues one again, or --all every failed one;
the running proxy sends them within seconds, with the same event id.`,
  main: `Usage: pix-checkout <command> [options]

Commands:
  serve                      run the checkout proxy (see serve --help)
  login                      check the credentials and show the tenant
  webhook set <url>          register the URL that receives the service's notifications
  payment create             create a Pix payment (QR code)
  payment status <reference> quick status check (HEAD)
  payment show <reference>   the payment's full record
  transfer create            send a transfer to a Pix key
  transfer status <reference> a transfer's record
  deliveries list [--failed] the merchant webhook's deliveries (the store in PIX_DATA_DIR)
  deliveries replay <id>|--all send a delivery again (--all: every failed one)

Options for every command:
  --json                     print JSON instead of a table
  --help                     help for the command

Configuration (environment or .env): PIX_BASE_URL, PIX_EMAIL, PIX_ACCESS_KEY or PIX_TOKEN,
PIX_USER_AGENT, PIX_CA_FILE, PIX_TIMEOUT_MS, PIX_TOKEN_FILE. With none set, the local sandbox
(npm run sandbox) is used.`,
  login: `Usage: pix-checkout login [--show-token] [--json]

Logs in (or uses the saved token), fetches the tenant and prints it. The token is saved to
PIX_TOKEN_FILE (default .data/partner-token.json, readable by you only) and printed only with
--show-token.`,
  webhook: `Usage: pix-checkout webhook set <url> [--format old|new] [--json]

Registers <url> as the notification URL (spec 4.8). --format chooses the payload format
(notify_type): old (default) or new.`,
  payment: `Usage:
  pix-checkout payment create --value <reais> [--description <text>] [--name <name> --document <cpf/cnpj>]
                              [--expiration <seconds>] [--transaction-id <id>] [--json]
  pix-checkout payment status <reference> [--json]
  pix-checkout payment show <reference> [--json]

create: value ${formatReais(LIMITS.paymentValue.min)} to ${formatReais(LIMITS.paymentValue.max)}; description at most ${LIMITS.descriptionMaxLength} characters; name and document together.
status: the quick check (paid, pending or canceled). show: the full record.`,
  transfer: `Usage:
  pix-checkout transfer create --value <reais> --key <pix key> [--key-type CPF|EMAIL|TELEFONE|CHAVE_ALEATORIA]
                               [--document <customer cpf/cnpj>] [--transaction-id <id>] [--json]
  pix-checkout transfer status <reference> [--json]

With --document, the transfer is solicited for that customer (the key must be theirs and their KYC
approved); without it, it goes to the key's owner. Value ${formatReais(LIMITS.transferValue.min)} to ${formatReais(LIMITS.transferValue.max)}. The key type is read
from the key when --key-type is not given.`,
} as const;

const COMMON = { json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } } as const;

function parse<T extends NonNullable<ParseArgsConfig['options']>>(args: string[], options: T) {
  try {
    return parseArgs({ args, options: { ...COMMON, ...options }, allowPositionals: true, strict: true });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}

function reais(text: string | undefined, flag: string): number {
  if (text === undefined) throw new UsageError(`${flag} is required`);
  if (!/^\d+(\.\d{1,2})?$/.test(text)) throw new UsageError(`${flag} must be an amount in reais like 10.50`);
  return Number(text);
}

/** `1` -> `pending (1)`: the partner's numeric status with its meaning (PARTNER_STATUS). */
function statusLabel(code: number): string {
  const name = Object.entries(PARTNER_STATUS).find(([, value]) => value === code)?.[0];
  return name ? `${name} (${code})` : `unknown (${code})`;
}

/** Shows only the ends of a document or CPF key, so terminal output can be pasted safely. */
export function maskDocument(value: string): string {
  const digits = value.replace(/\D/g, '');
  return digits.length >= 11 ? `${digits.slice(0, 3)}.***.***-${digits.slice(-2)}` : '***';
}

function print(io: CliIo, json: boolean, data: unknown, rows: Row[]): void {
  if (json) {
    io.out(JSON.stringify(data, null, 2));
    return;
  }
  const width = Math.max(...rows.map(([k]) => k.length));
  io.out(rows.map(([k, v]) => `${k.padEnd(width)}  ${v ?? '-'}`).join('\n'));
}

async function client(config: PartnerConfig): Promise<PartnerClient> {
  let ca: string | null = null;
  if (config.caFile) {
    try {
      ca = await readFile(config.caFile, 'utf8');
    } catch {
      throw new UsageError(
        config.sandbox
          ? `no sandbox certificate at ${config.caFile}: start the sandbox first (npm run sandbox)`
          : `cannot read PIX_CA_FILE ${config.caFile}`,
      );
    }
  }
  return createPartnerClient({
    baseUrl: config.baseUrl,
    credentials: config.credentials,
    token: config.token,
    tokenStore: fileTokenStore(config.tokenFile),
    userAgent: config.userAgent,
    ca,
    timeoutMs: config.timeoutMs,
  });
}

async function run(args: string[], io: CliIo): Promise<void> {
  const [command, ...rest] = args;
  if (command === undefined || command === '--help' || command === '-h' || command === 'help') {
    io.out(HELP.main);
    return;
  }
  const config = () => partnerConfig(io.env);

  switch (command) {
    case 'serve': {
      const { values } = parse(rest, { port: { type: 'string' }, host: { type: 'string' } });
      if (values.help) return io.out(HELP.serve);
      const env = { ...io.env, ...(values.port !== undefined ? { PORT: values.port } : {}), ...(values.host !== undefined ? { HOST: values.host } : {}) };
      // Imported here: the other commands need neither the server nor the store.
      const { serve } = await import('../main.ts');
      const code = await serve(env, io.err);
      if (code !== 0) throw new ExitCode(code);
      return;
    }

    case 'login': {
      const { values } = parse(rest, { 'show-token': { type: 'boolean' } });
      if (values.help) return io.out(HELP.login);
      const cfg = config();
      const partner = await client(cfg);
      const tenant = await partner.getTenant();
      const token = values['show-token'] ? await fileTokenStore(cfg.tokenFile).load(tokenStoreKey(cfg.baseUrl, cfg.credentials?.email)) : undefined;
      const data = { base_url: cfg.baseUrl, sandbox: cfg.sandbox, tenant, ...(token !== undefined ? { token: token ?? cfg.token } : {}) };
      const rows: Row[] = [
        ['service', `${cfg.baseUrl}${cfg.sandbox ? ' (sandbox)' : ''}`],
        ['tenant id', tenant.id],
        ['tenant name', tenant.name],
      ];
      if (token !== undefined) rows.push(['token', token ?? cfg.token]);
      return print(io, values.json === true, data, rows);
    }

    case 'webhook': {
      const { values, positionals } = parse(rest, { format: { type: 'string' } });
      if (values.help || positionals[0] !== 'set') {
        if (values.help) return io.out(HELP.webhook);
        throw new UsageError(`unknown webhook command ${positionals[0] ?? '(none)'}; use: webhook set <url>`);
      }
      const url = positionals[1];
      if (!url) throw new UsageError('webhook set needs the URL');
      const format = values.format ?? 'old';
      if (format !== 'old' && format !== 'new') throw new UsageError('--format must be old or new');
      const result = await (await client(config())).setNotificationUrl({ notification_url: url, notify_type: NOTIFY_TYPE[format] });
      return print(io, values.json === true, result, [
        ['notification url', result.notificationUrl],
        ['format', result.notifyType === NOTIFY_TYPE.new ? 'new' : 'old'],
      ]);
    }

    case 'payment': {
      const { values, positionals } = parse(rest, {
        value: { type: 'string' },
        description: { type: 'string' },
        name: { type: 'string' },
        document: { type: 'string' },
        expiration: { type: 'string' },
        'transaction-id': { type: 'string' },
      });
      if (values.help) return io.out(HELP.payment);
      const [sub, reference] = positionals;
      if (sub === 'create') {
        const expiration = values.expiration === undefined ? undefined : Number(values.expiration);
        if (expiration !== undefined && !(Number.isInteger(expiration) && expiration > 0)) throw new UsageError('--expiration must be whole seconds');
        const created = await (await client(config())).createPayment({
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
        const partner = await client(config());
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

    case 'transfer': {
      const { values, positionals } = parse(rest, {
        value: { type: 'string' },
        key: { type: 'string' },
        'key-type': { type: 'string' },
        document: { type: 'string' },
        'transaction-id': { type: 'string' },
      });
      if (values.help) return io.out(HELP.transfer);
      const [sub, reference] = positionals;
      const partner = async () => client(config());
      if (sub === 'create') {
        const key = values.key;
        if (!key) throw new UsageError('--key is required');
        const value = reais(values.value, '--value');
        const keyType = values['key-type'];
        if (keyType !== undefined && !(PIX_KEY_TYPES as readonly string[]).includes(keyType)) {
          throw new UsageError(`--key-type must be one of ${PIX_KEY_TYPES.join(', ')}`);
        }
        const transfer = values.document
          ? await (await partner()).solicitTransferForCustomer({
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

    case 'deliveries': {
      const { values, positionals } = parse(rest, { failed: { type: 'boolean' }, all: { type: 'boolean' }, limit: { type: 'string' } });
      const [sub, target] = positionals;
      if (values.help) return io.out(HELP.deliveries);
      if (sub !== 'list' && sub !== 'replay') throw new UsageError(`unknown deliveries command ${sub ?? '(none)'}; use list or replay`);
      if (sub === 'replay' && !values.all && (target === undefined || !/^\d+$/.test(target))) throw new UsageError('deliveries replay needs a delivery id, or --all');
      // Imported here: only these commands open the store.
      const { openSqliteStore } = await import('../store/sqlite/sqlite-store.ts');
      const store = openSqliteStore({ dataDir: io.env.PIX_DATA_DIR?.trim() || '.data', cacheSize: 0 });
      try {
        if (sub === 'list') {
          const limit = values.limit === undefined ? 1000 : Number(values.limit);
          const rows = await store.outbox.list({ state: values.failed ? 'failed' : undefined, limit });
          const data = rows.map((r) => ({ id: r.id, event_id: r.eventId, type: r.type, reference: r.reference, state: r.state, attempts: r.attempts, last_error: r.lastError, created_at: new Date(r.createdAt).toISOString(), next_attempt_at: r.state === 'pending' ? new Date(r.nextAttemptAt).toISOString() : null, delivered_at: r.deliveredAt === null ? null : new Date(r.deliveredAt).toISOString() }));
          if (values.json) return io.out(JSON.stringify(data, null, 2));
          if (data.length === 0) return io.out(values.failed ? 'No failed deliveries.' : 'No deliveries.');
          io.out(data.map((d) => `${String(d.id).padStart(6)}  ${d.state.padEnd(9)}  ${d.type.padEnd(17)}  ${d.reference}  attempts ${d.attempts}${d.last_error ? `  last error ${d.last_error}` : ''}`).join('\n'));
          return;
        }
        const count = await store.outbox.replay(values.all ? 'failed' : Number(target), Date.now());
        if (!values.all && count === 0) {
          io.err(`pix-checkout: no delivery ${target}`);
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

    default:
      throw new UsageError(`unknown command ${command}; see pix-checkout --help`);
  }
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

/** Runs one command; resolves to the process exit code (0 ok, 1 the service failed, 2 bad usage or config). */
export async function main(args: string[], io: CliIo = { out: console.log, err: console.error, env: loadEnv() }): Promise<number> {
  try {
    await run(args, io);
    return 0;
  } catch (error) {
    if (error instanceof ExitCode) return error.code;
    if (error instanceof UsageError) {
      io.err(`pix-checkout: ${error.message}`);
      return 2;
    }
    if (error instanceof ConfigError) {
      io.err(error.message);
      return 2;
    }
    if (error instanceof PartnerError) {
      io.err(`pix-checkout: ${error.message}`);
      for (const [field, problem] of Object.entries(error.details.fields ?? {})) io.err(`  ${field}: ${problem}`);
      if (error.details.reason) io.err(`  reason: ${error.details.reason}`);
      if (error.details.outcomeUnknown) io.err(`  the outcome is unknown: check transaction ${error.details.transactionId} before trying again`);
      return 1;
    }
    io.err(`pix-checkout: unexpected error: ${error instanceof Error ? error.message : String(error)}`);
    return 1;
  }
}
