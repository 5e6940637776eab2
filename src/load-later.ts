/**
 * Loads what follows the first QR, once for the page: the later chunk (src/later.ts) and, beside it,
 * the status controller's (src/controllers/status.ts: dist/pix-checkout.status.js), two files so each
 * stays within its budget, asked for together. A second import() while they load is the same request
 * (the browser's module map keeps one), and the loaded modules are kept for synchronous use in render.
 */
import { html, nothing } from 'lit';
import { ProxyError } from './api/client.ts';
import { STATUS_STREAM, isPaymentView } from './shared/wire.ts';
import { isFinalStatus } from './shared/status.ts';
import { splitSeconds } from './controllers/countdown.ts';
import { PixCanceledEvent, PixErrorEvent, PixExpiredEvent, PixPaidEvent, PixSaveEvent, PixStatusChangeEvent } from './events.ts';
import { ptBR } from './locales/pt-BR.ts';
import { spoken } from './locales/translation.ts';
import { statusLine } from './views/status.ts';

export type Later = typeof import('./later.ts') & typeof import('./controllers/status.ts');

/** The chunks once loaded, as one (undefined before). */
export let later: Later | undefined;
let loading: Promise<Later> | undefined;

/** A failed load is tried again at the next occasion (the customer came back, time ran out, a render). */
export const loadLater = (): Promise<Later> =>
  (loading ??= Promise.all([import('./later.ts'), import('./controllers/status.ts')]).then(
    ([module, status]) => {
      module.install({
        html,
        nothing,
        statusLine,
        splitSeconds,
        PixErrorEvent,
        PixSaveEvent,
        PixStatusChangeEvent,
        PixPaidEvent,
        PixExpiredEvent,
        PixCanceledEvent,
        STATUS_STREAM,
        isPaymentView,
        ProxyError,
        isFinalStatus,
      });
      // Every widget's texts inherit from ptBR (src/controllers/locale.ts): they have these at once.
      Object.assign(ptBR, module.ptBRLater(spoken));
      return (later = { ...module, ...status });
    },
    (error: unknown) => {
      loading = undefined;
      throw error;
    },
  ));
