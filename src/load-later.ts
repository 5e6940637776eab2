/**
 * Loads the chunk of what follows the first QR (src/later.ts), once for the page: a second import()
 * while it loads is the same request (the browser's module map keeps one), and the loaded module is
 * kept for synchronous use in render.
 */
import { html, nothing } from 'lit';
import { PixErrorEvent, PixSaveEvent } from './events.ts';
import { statusLine } from './views/status.ts';

export type Later = typeof import('./later.ts');

/** The chunk once loaded (undefined before). */
export let later: Later | undefined;
let loading: Promise<Later> | undefined;

/** A failed load is tried again at the next occasion (the customer came back, time ran out, a render). */
export const loadLater = (): Promise<Later> =>
  (loading ??= import('./later.ts').then(
    (module) => {
      module.install({ html, nothing, statusLine, PixErrorEvent, PixSaveEvent });
      return (later = module);
    },
    (error: unknown) => {
      loading = undefined;
      throw error;
    },
  ));
