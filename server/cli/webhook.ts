/** `pix-checkout webhook set <url>`: registers the partner's notification URL (spec 4.8). */
import { partnerConfig } from '../config.ts';
import { NOTIFY_TYPE } from '../partner/wire.ts';
import { UsageError, client, parse, print, type CliIo } from './io.ts';

export const HELP = `Usage: pix-checkout webhook set <url> [--format old|new] [--json]

Registers <url> as the notification URL (spec 4.8). --format chooses the payload format
(notify_type): old (default) or new.`;

export async function webhookCommand(rest: string[], io: CliIo): Promise<void> {
  const { values, positionals } = parse(rest, { format: { type: 'string' } });
  if (values.help || positionals[0] !== 'set') {
    if (values.help) return io.out(HELP);
    throw new UsageError(`unknown webhook command ${positionals[0] ?? '(none)'}; use: webhook set <url>`);
  }
  const url = positionals[1];
  if (!url) throw new UsageError('webhook set needs the URL');
  const format = values.format ?? 'old';
  if (format !== 'old' && format !== 'new') throw new UsageError('--format must be old or new');
  const result = await (await client(partnerConfig(io.env))).setNotificationUrl({ notification_url: url, notify_type: NOTIFY_TYPE[format] });
  return print(io, values.json === true, result, [
    ['notification url', result.notificationUrl],
    ['format', result.notifyType === NOTIFY_TYPE.new ? 'new' : 'old'],
  ]);
}
