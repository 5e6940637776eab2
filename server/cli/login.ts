/** `pix-checkout login`: checks the credentials and shows the tenant. */
import { partnerConfig } from '../config.ts';
import { decodeSaved, tokenStoreKey } from '../partner/client.ts';
import { fileTokenStore } from '../partner/token-store.ts';
import { client, parse, print, type CliIo, type Row } from './io.ts';

export const HELP = `Usage: pix-checkout login [--show-token] [--json]

Logs in (or uses the saved token), fetches the tenant and prints it. The token is saved to
PIX_TOKEN_FILE (default .data/partner-token.json, readable by you only) and printed only with
--show-token.`;

export async function loginCommand(rest: string[], io: CliIo): Promise<void> {
  const { values } = parse(rest, { 'show-token': { type: 'boolean' } });
  if (values.help) return io.out(HELP);
  const cfg = partnerConfig(io.env);
  const partner = await client(cfg);
  const tenant = await partner.getTenant();
  const saved = values['show-token'] ? await fileTokenStore(cfg.tokenFile).load(tokenStoreKey(cfg.baseUrl, cfg.credentials?.email)) : undefined;
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
