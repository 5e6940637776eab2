/**
 * `pix-checkout report`: the accounting export of a running proxy (GET /api/reports, API key), to
 * stdout or a file, as it streams: the command holds one chunk at a time, whatever the range holds.
 */
import { createWriteStream } from 'node:fs';
import { once } from 'node:events';
import { MERCHANT_PATHS, REPORT_FORMATS, ReportQuery } from '../../src/shared/merchant.ts';
import { ExitCode, UsageError, checkArgs, parse, type CliIo } from './io.ts';
import { PROXY_HELP, PROXY_OPTIONS, proxyTarget, refusalOf } from './proxy-http.ts';

export const HELP = `Usage: pix-checkout report --from <YYYY-MM-DD> --to <YYYY-MM-DD> [--format csv|json] [--time-zone <zone>] [--out <file>]

The accounting export: every checkout, payment, refund and payout created from the start of --from
to the end of --to (days in the merchant's time zone, PIX_TIME_ZONE, default America/Sao_Paulo),
one row each, with its amount (reais, exact), status, times (with the zone's offset) and references,
then the totals per kind and status. Read from a running proxy with the API key, streamed.

  --format csv|json  default csv
  --time-zone <zone> another IANA time zone than the proxy's
  --out <file>       write there instead of stdout
${PROXY_HELP}`;

export async function reportCommand(rest: string[], io: CliIo): Promise<void> {
  const { values } = parse(rest, {
    from: { type: 'string' },
    to: { type: 'string' },
    format: { type: 'string' },
    'time-zone': { type: 'string' },
    out: { type: 'string' },
    ...PROXY_OPTIONS,
  });
  if (values.help) return io.out(HELP);
  if (values.json && values.format !== undefined && values.format !== 'json') throw new UsageError('--json and --format csv contradict each other');
  const query = checkArgs(
    ReportQuery,
    {
      from: values.from,
      to: values.to,
      ...((values.format ?? values.json) ? { format: values.format ?? 'json' } : {}),
      ...(values['time-zone'] !== undefined ? { time_zone: values['time-zone'] } : {}),
    },
    { from: '--from', to: '--to', format: `--format (${REPORT_FORMATS.join(' or ')})`, time_zone: '--time-zone' },
  );
  const target = proxyTarget(values, io.env);
  const url = new URL(`${target.api}${MERCHANT_PATHS.reports}`);
  for (const [key, value] of Object.entries(query)) if (value !== undefined) url.searchParams.set(key, value);
  let res: Response;
  try {
    res = await fetch(url, { headers: { authorization: `Bearer ${target.apiKey}` } });
  } catch (error) {
    io.err(`pix-checkout: could not reach the proxy at ${target.api} (${(error as Error).message}); is it running? (pix-checkout serve)`);
    throw new ExitCode(1);
  }
  if (!res.ok) {
    io.err(`pix-checkout: the proxy refused the report: ${await refusalOf(res)}`);
    throw new ExitCode(res.status === 400 ? 2 : 1);
  }
  const file = values.out === undefined ? null : createWriteStream(values.out);
  const write =
    file === null
      ? (io.write ?? ((chunk: string) => void process.stdout.write(chunk)))
      : async (chunk: string) => {
          if (!file.write(chunk)) await once(file, 'drain');
        };
  const decoder = new TextDecoder();
  try {
    // One chunk at a time: the next is read once this one is written.
    const reader = res.body?.getReader();
    for (;;) {
      const next = await reader?.read();
      if (!next || next.done) break;
      await write(decoder.decode(next.value, { stream: true }));
    }
    const tail = decoder.decode();
    if (tail) await write(tail);
  } finally {
    if (file) {
      file.end();
      await once(file, 'close');
    }
  }
  if (file) io.err(`Written to ${values.out}.`);
}
