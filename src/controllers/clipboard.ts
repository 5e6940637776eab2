import type { ReactiveController, ReactiveControllerHost } from 'lit';
import { COPIED_FOR_MS } from '../shared/first-screen.ts';
import type { WidgetEnvironment } from './environment.ts';

/** How a copy ended: by the Clipboard API, by the execCommand fallback, or not at all (text selected). */
export type CopyMethod = 'clipboard' | 'execCommand' | 'manual';
export type CopyState = 'idle' | 'copied' | 'failed';

/**
 * Copies the code inside the customer's tap. The Clipboard API is called synchronously in the click
 * (iOS refuses it after an await); if it is missing or refuses, the field is selected and
 * execCommand('copy') tried; if that fails too, the text stays selected for a manual copy. `copyState`
 * is `copied` only when a copy really happened.
 */
export class ClipboardController implements ReactiveController {
  copyState: CopyState = 'idle';
  #timer: unknown;

  readonly #host: ReactiveControllerHost;
  readonly #env: () => WidgetEnvironment;

  constructor(host: ReactiveControllerHost, env: () => WidgetEnvironment) {
    this.#host = host;
    this.#env = env;
    host.addController(this);
  }

  /** Call from the click handler itself, before any await. */
  copyCode(text: string, field: HTMLTextAreaElement | HTMLInputElement | null): Promise<CopyMethod> {
    const env = this.#env();
    let written: Promise<void>;
    try {
      // No Clipboard API (null) throws here too: the fallback below, whatever the reason.
      written = env.clipboard!.writeText(text);
    } catch {
      written = Promise.reject(new Error());
    }
    return written.then(
      () => this.#settle('clipboard'),
      () => {
        field?.focus();
        field?.select();
        let copied: boolean;
        try {
          copied = env.execCopy();
        } catch {
          copied = false;
        }
        return this.#settle(copied ? 'execCommand' : 'manual');
      },
    );
  }

  reset(): void {
    this.#env().clock.clearTimeout(this.#timer);
    this.copyState = 'idle';
  }

  hostDisconnected(): void {
    this.reset();
  }

  #settle(method: CopyMethod): CopyMethod {
    const clock = this.#env().clock;
    clock.clearTimeout(this.#timer);
    this.copyState = method === 'manual' ? 'failed' : 'copied';
    if (method !== 'manual') {
      this.#timer = clock.setTimeout(() => {
        this.copyState = 'idle';
        this.#host.requestUpdate();
      }, COPIED_FOR_MS);
    }
    this.#host.requestUpdate();
    return method;
  }
}
