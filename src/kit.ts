/**
 * What the later chunk (src/later.ts) takes from the main script, handed over when it loads
 * (src/load-later.ts): a chunk imports nothing of the script at run time, since a page that loaded
 * the script under another URL (a query string) would evaluate a second copy of it, with its own lit
 * and its own early requests. Types only are imported here.
 */
import type { html, nothing } from 'lit';
import type { ProxyError } from './api/client.ts';
import type { STATUS_STREAM, isPaymentView } from './shared/wire.ts';
import type { isFinalStatus } from './shared/status.ts';
import type { PixCanceledEvent, PixErrorEvent, PixExpiredEvent, PixPaidEvent, PixSaveEvent, PixStatusChangeEvent } from './events.ts';
import type { splitSeconds } from './controllers/countdown.ts';
import type { statusLine } from './views/status.ts';

export interface Kit {
  html: typeof html;
  nothing: typeof nothing;
  statusLine: typeof statusLine;
  splitSeconds: typeof splitSeconds;
  PixErrorEvent: typeof PixErrorEvent;
  PixSaveEvent: typeof PixSaveEvent;
  PixStatusChangeEvent: typeof PixStatusChangeEvent;
  PixPaidEvent: typeof PixPaidEvent;
  PixExpiredEvent: typeof PixExpiredEvent;
  PixCanceledEvent: typeof PixCanceledEvent;
  /** What a status stream's event is read with (src/shared/wire.ts), and the error class of the answers the page cannot read. */
  STATUS_STREAM: typeof STATUS_STREAM;
  isPaymentView: typeof isPaymentView;
  ProxyError: typeof ProxyError;
  isFinalStatus: typeof isFinalStatus;
}

/** Set once, by install, before anything of the chunk runs. */
export let kit: Kit;

export function install(from: Kit): void {
  kit = from;
}
