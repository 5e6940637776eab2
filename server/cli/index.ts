/**
 * `pix-checkout <command>`: the partner service from a terminal, through the same client and the same
 * configuration as the proxy, one file per command. With nothing configured it talks to the local
 * sandbox (`pix-checkout sandbox`).
 */
import { ConfigError, loadEnv, partnerConfig } from '../config/index.ts';
import { DomainError } from '../domain/errors.ts';
import { PartnerError } from '../partner/errors.ts';
import { StoreError } from '../store/store.ts';
import { HELP as DATA, dataCommand } from './data.ts';
import { HELP as DELIVERIES, deliveriesCommand } from './deliveries.ts';
import { HELP as DISPUTES, disputesCommand } from './disputes.ts';
import { HELP as DOCTOR, doctorCommand } from './doctor.ts';
import { ExitCode, UsageError, type CliIo } from './io.ts';
import { HELP as LISTEN, listenCommand } from './listen.ts';
import { HELP as LOGIN, loginCommand } from './login.ts';
import { HELP as NUMBERING, numberingCommand } from './numbering.ts';
import { HELP as PAYMENT, paymentCommand } from './payment.ts';
import { HELP as REPORT, reportCommand } from './report.ts';
import { HELP as SANDBOX, sandboxCommand } from './sandbox.ts';
import { HELP as SERVE, serveCommand } from './serve.ts';
import { HELP as TRANSFER, REFUND_HELP as REFUND, refundCommand, transferCommand } from './transfer.ts';
import { HELP as UNRECORDED, unrecordedCommand } from './unrecorded.ts';
import { HELP as WEBHOOK, webhookCommand } from './webhook.ts';

export { maskDocument, type CliIo } from './io.ts';

/** Each command's help, for `help <command>` and the tests. */
export const COMMAND_HELP = {
  sandbox: SANDBOX,
  serve: SERVE,
  login: LOGIN,
  doctor: DOCTOR,
  webhook: WEBHOOK,
  payment: PAYMENT,
  transfer: TRANSFER,
  refund: REFUND,
  deliveries: DELIVERIES,
  disputes: DISPUTES,
  numbering: NUMBERING,
  data: DATA,
  unrecorded: UNRECORDED,
  listen: LISTEN,
  report: REPORT,
} as const;

const COMMANDS: Record<keyof typeof COMMAND_HELP, (rest: string[], io: CliIo) => Promise<void>> = {
  sandbox: sandboxCommand,
  serve: serveCommand,
  login: loginCommand,
  doctor: doctorCommand,
  webhook: webhookCommand,
  payment: paymentCommand,
  transfer: transferCommand,
  refund: refundCommand,
  deliveries: deliveriesCommand,
  disputes: disputesCommand,
  numbering: numberingCommand,
  data: dataCommand,
  unrecorded: unrecordedCommand,
  listen: listenCommand,
  report: reportCommand,
};

/** The overview's lines for payouts: money sent out of the account. */
const PAYOUTS_HELP = `  transfer create            send a transfer to a Pix key (stored, idempotent, followed by the proxy)
  transfer status <id|ref>   a transfer: by its id (tr_...) from the store, by its reference from the partner
  transfer list [--status s] the transfers started through the proxy, newest first
  refund <checkout> --key k  refund a paid checkout (all of it, or --value) to the customer's key`;

const HELP = `Usage: pix-checkout <command> [options]

Running locally:
  sandbox                    run the partner-service sandbox (test account, HTTPS) until Ctrl-C
  serve                      run the checkout proxy (see serve --help)

The partner service:
  login                      check the credentials and show the tenant
  doctor [--create]          check the assumptions about the service against the real one
  webhook set <url>          register the URL that receives the service's notifications
  payment create             create a Pix payment (QR code)
  payment status <reference> the state from the details; the quick check (HEAD) as a hint
  payment show <reference>   the payment's full record

Payouts:
${PAYOUTS_HELP}

The proxy's store (PIX_DATA_DIR):
  webhook received           notifications the proxy kept but could not act on
  deliveries list [--failed] the merchant webhook's deliveries
  deliveries replay <id>|--all send a delivery again (--all: every failed one)
  deliveries resume          turn the merchant webhook back on after a day of failures disabled it
  disputes [list]            payments an authenticated notification contradicts (refunds wait)
  disputes resolve <ref>     close one, once checked with the partner (--note "what you found")
  numbering [show]           every partner status code: its meaning, state (verified, mismatch...) and evidence
  numbering reset            forget the verdicts (a mismatch) after fixing PIX_STATUS_CODES; an audit line
  data export --document d   everything held about a CPF/CNPJ, as JSON (a data subject's request)
  data erase --document d    erase that person's personal data; amounts and states stay
    [--dry-run]              list what it would erase, and erase nothing
  data purge                 run the retention purge once (PIX_RETENTION_DAYS; the proxy runs it hourly)
  unrecorded [--record]      payments created at the partner that the store does not hold

A running proxy, with the API key (--proxy, PIX_PROXY_URL; --api-key, PIX_API_KEY):
  listen --forward-to <url>  forward its outcome events, signed, to your local receiver (development)
  report --from d --to d     the accounting export, CSV (or --format json), streamed

Options for every command:
  --json                     print JSON (snake_case, the proxy API's field names) instead of a table
  --help                     help for the command

Exit codes: 0 done; 1 the service refused or failed; 2 bad arguments or configuration, an argument
outside the limits included (nothing was sent); 3 a create whose outcome is unknown (it may have
happened: check before sending it again); 4 doctor found something that would break.

Configuration (environment or .env): PIX_BASE_URL, PIX_EMAIL, PIX_ACCESS_KEY or PIX_TOKEN,
PIX_USER_AGENT, PIX_CA_FILE, PIX_TIMEOUT_MS, PIX_TOKEN_FILE, PIX_STATUS_CODES, PIX_TRANSFER_STATUS_CODES. With none set, the
local sandbox (pix-checkout sandbox, in this directory) is used.`;

async function run(args: string[], io: CliIo): Promise<void> {
  const [command, ...rest] = args;
  if (command === undefined || command === '--help' || command === '-h' || command === 'help') {
    io.out(HELP);
    return;
  }
  if (!Object.hasOwn(COMMANDS, command)) throw new UsageError(`unknown command ${command}; see pix-checkout --help`);
  await COMMANDS[command as keyof typeof COMMANDS](rest, io);
}

/** True when nothing is configured for the partner, so the commands talk to the local sandbox. */
function sandboxMode(env: CliIo['env']): boolean {
  try {
    return partnerConfig(env).sandbox;
  } catch {
    return false;
  }
}

/**
 * Runs one command; resolves to the process exit code: 0 ok, 1 the service refused or failed, 2 bad
 * usage or configuration (an argument out of the shared limits included: nothing was sent), 3 a create
 * whose outcome is unknown (it may have happened), 4 doctor found something that would break.
 */
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
    if (error instanceof DomainError) {
      // What the proxy's service refused (a checkout not paid, a refund past what was paid, a key used for another request).
      io.err(`pix-checkout: ${error.message}`);
      for (const [field, problem] of Object.entries(error.fields ?? {})) io.err(`  ${field}: ${problem}`);
      return error.kind === 'invalid' ? 2 : 1;
    }
    if (error instanceof StoreError) {
      io.err(`pix-checkout: ${error.message}`);
      return 1;
    }
    if (error instanceof PartnerError) {
      io.err(`pix-checkout: ${error.message}`);
      for (const [field, problem] of Object.entries(error.details.fields ?? {})) io.err(`  ${field}: ${problem}`);
      if (error.details.reason) io.err(`  reason: ${error.details.reason}`);
      // The client's own check of the input: each command checks its arguments first, so this is
      // a backstop for a rule a command missed. Nothing was sent.
      if (error.kind === 'invalid_input') return 2;
      if (error.kind === 'unavailable' && error.details.status === undefined && sandboxMode(io.env)) {
        io.err('  is the sandbox running? Start it in this directory with: pix-checkout sandbox');
      }
      if (error.details.outcomeUnknown) {
        // Money may have moved: never reported as a plain failure, never to be retried blindly.
        io.err(`  OUTCOME UNKNOWN: it may have been carried out. Do not send it again before checking with the partner.`);
        io.err(`  transaction_id: ${error.details.transactionId ?? '(none)'}`);
        if (error.details.rawBody !== undefined) io.err(`  answer as received (redacted): ${error.details.rawBody || '(empty)'}`);
        return 3;
      }
      return 1;
    }
    io.err(`pix-checkout: unexpected error: ${error instanceof Error ? error.message : String(error)}`);
    return 1;
  }
}
