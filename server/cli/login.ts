/** `pix-checkout login`: checks the credentials and shows the tenant. */
import { partnerConfig } from '../config/index.ts';
import { decodeSaved, tokenStoreKey } from '../partner/client.ts';
import { PartnerError } from '../partner/errors.ts';
import { ExitCode, cliTokenStore, client, observedAnswers, parse, print, shapeLine, type CliIo, type Row } from './io.ts';

export const HELP = `Usage: pix-checkout login [--show-token] [--json]

Logs in (or uses the saved token), fetches the tenant and prints it. The token is saved where the
proxy keeps its own: with PIX_DATABASE_URL in that database (one token for the proxy and the
command line), else in PIX_TOKEN_FILE (default .data/partner-token.json, readable by you only). It is
printed only with --show-token.`;

export async function loginCommand(rest: string[], io: CliIo): Promise<void> {
  const { values } = parse(rest, { 'show-token': { type: 'boolean' } });
  if (values.help) return io.out(HELP);
  const cfg = partnerConfig(io.env);
  const tokens = cliTokenStore(cfg, io.env);
  const { observe, last } = observedAnswers();
  const partner = await client(cfg, io.env, observe);
  let tenant: Awaited<ReturnType<typeof partner.getTenant>>;
  try {
    tenant = await partner.getTenant();
  } catch (error) {
    // An answer the client could not read: its shape, values replaced by their types (as doctor shows it).
    const answer = error instanceof PartnerError && error.details.status !== undefined ? last(error.details.operation ?? '') : undefined;
    if (!answer) throw error;
    io.err(`pix-checkout: ${(error as Error).message}`);
    io.err(`  ${shapeLine(answer.shape)}`);
    throw new ExitCode(1);
  }
  const saved = values['show-token'] ? await tokens.load(tokenStoreKey(cfg.baseUrl, cfg.credentials?.email)) : undefined;
  const token = saved === undefined ? undefined : saved === null ? null : decodeSaved(saved).token;
  const data = { base_url: cfg.baseUrl, sandbox: cfg.sandbox, tenant, ...(token !== undefined ? { token: token ?? cfg.token } : {}) };
  const rows: Row[] = [
    ['service', `${cfg.baseUrl}${cfg.sandbox ? ' (sandbox)' : ''}`],
    ['tenant id', tenant.id],
    ['tenant name', tenant.name],
  ];
  if (token !== undefined) rows.push(['token', token ?? cfg.token]);
  return print(io, values.json === true, data, rows);
}
