/**
 * `pix-checkout webhook set <url>`: registers the partner's notification URL (spec 4.8).
 * `pix-checkout webhook received`: the notifications the proxy kept but could not act on.
 */
import { partnerConfig } from '../config/index.ts';
import { redactBody } from '../partner/read.ts';
import { NOTIFY_TYPE, NotificationUrlRequest } from '../partner/wire.ts';
import { checkWebhookUrl } from './doctor.ts';
import { UsageError, checkArgs, client, count, openCliStore, parse, print, printList, type CliIo } from './io.ts';

export const HELP = `Usage: pix-checkout webhook set <url> [--format old|new] [--json]
       pix-checkout webhook received [--unreadable] [--limit <n>] [--json]

set: registers <url> as the notification URL (spec 4.8). --format chooses the payload format
(notify_type): old or new; without it no notify_type is sent and the service keeps its default.
Any 2xx answer is success, with a body or none. The URL is printed with its secret path
(PIX_WEBHOOK_SECRET_PATH, and whatever follows /webhooks/partner/) shown as "…", --json included.

received: the partner's notifications the proxy stored but could not act on, from its store in
PIX_DATA_DIR (default .data), newest first: those it could not read (unreadable, invalid, or
ambiguous: naming two different references) and those about a reference it does not know
(unknown_reference). --unreadable lists only the first kind.
Each is shown with its body as received (documents and tokens masked, at most 2 KiB); a body the
intake stored cut says how long it was (original_bytes).`;

export async function webhookCommand(rest: string[], io: CliIo): Promise<void> {
  const { values, positionals } = parse(rest, { format: { type: 'string' }, unreadable: { type: 'boolean' }, limit: { type: 'string' } });
  if (values.help) return io.out(HELP);
  if (positionals[0] === 'received') return received(io, values.unreadable === true, values.limit, values.json === true);
  if (positionals[0] !== 'set') throw new UsageError(`unknown webhook command ${positionals[0] ?? '(none)'}; use: webhook set <url>, webhook received`);
  const url = positionals[1];
  if (!url) throw new UsageError('webhook set needs the URL');
  const format = values.format;
  if (format !== undefined && format !== 'old' && format !== 'new') throw new UsageError('--format must be old or new');
  const request = checkArgs(
    NotificationUrlRequest,
    { notification_url: url, ...(format ? { notify_type: NOTIFY_TYPE[format] } : {}) },
    { notification_url: '<url>' },
  );
  const mask = checkWebhookUrl(url, io.env);
  const result = await (await client(partnerConfig(io.env), io.env)).setNotificationUrl(request);
  const formatName = result.notifyType === NOTIFY_TYPE.new ? 'new' : result.notifyType === NOTIFY_TYPE.old ? 'old' : "the service's default";
  // Output gets pasted: the secret path is shown as `…` (the URL registered is the one given).
  const shown = mask(result.notificationUrl);
  return print(io, values.json === true, { notification_url: shown, notify_type: result.notifyType, confirmed_by_answer: result.confirmed }, [
    ['notification url', shown],
    ['format', formatName],
    ['answer', result.confirmed ? 'the service echoed the URL' : 'accepted (2xx) without echoing it'],
  ]);
}

async function received(io: CliIo, onlyUnreadable: boolean, limitText: string | undefined, json: boolean): Promise<void> {
  const limit = count(limitText, '--limit', 100);
  // Imported here: only this command opens the store.
  const store = await openCliStore(io.env);
  try {
    const rows = await store.webhookEvents.listByResult(
      onlyUnreadable ? ['unreadable', 'invalid', 'ambiguous'] : ['unreadable', 'invalid', 'ambiguous', 'unknown_reference'],
      limit,
    );
    // Bodies as received, but a customer's document or a token in them masked (output gets pasted).
    const data = rows.map((r) => ({
      id: r.id,
      result: r.result ?? null,
      received_at: new Date(r.receivedAt).toISOString(),
      body: redactBody(r.rawBody),
      ...(r.originalBytes !== undefined ? { original_bytes: r.originalBytes } : {}),
    }));
    const cut = (r: (typeof data)[number]) => ('original_bytes' in r ? `  (stored cut: ${r.original_bytes} bytes received)` : '');
    printList(
      io,
      json,
      data,
      onlyUnreadable ? 'No unreadable notifications.' : 'No notifications waiting for the operator.',
      (r) => `#${r.id}  ${r.received_at}  ${r.result}${cut(r)}\n  ${r.body.length > 500 ? `${r.body.slice(0, 500)}…` : r.body}`,
    );
  } finally {
    await store.close();
  }
}
