import type { ReactiveController, ReactiveControllerHost } from 'lit';

/** The element taken over: its render options (where its first render goes) and its shadow root. */
export interface TakeoverHost extends ReactiveControllerHost, HTMLElement {
  readonly renderOptions: { renderBefore?: ChildNode | null };
}

/**
 * A widget rendered by the merchant's server (declarative shadow DOM), or whose first screen the
 * page's head put in (renderPaymentRequest), keeps that markup on screen until its first render,
 * which replaces it in the same task (no paint between: no flash), keeping the focus and a
 * selection in the code field where they were.
 */
export class TakeoverController implements ReactiveController {
  /** The server's shadow root while its markup is on screen; null once taken over (or never rendered by a server). */
  #root: ShadowRoot | null = null;
  /** The focused part and its selection, carried across the replacement. */
  #focused: { part: string; start: number | null; end: number | null } | null = null;

  readonly #host: TakeoverHost;

  constructor(host: TakeoverHost) {
    this.#host = host;
    host.addController(this);
  }

  /** Call when the host makes its render root: a shadow root already there is the server's or the page's head's. */
  claim(): void {
    this.#root = this.#host.shadowRoot;
  }

  /** The server's markup is still on screen. */
  get serverMarkup(): boolean {
    return this.#root !== null;
  }

  // Right before the first render, in the same task.
  hostUpdate(): void {
    const root = this.#root;
    if (!root) return;
    const focused = root.activeElement as HTMLTextAreaElement | null;
    const part = focused?.getAttribute('part');
    this.#focused = part ? { part, start: focused!.selectionStart, end: focused!.selectionEnd } : null;
    root.replaceChildren();
    // LitElement would render before the root's first child: the server's, gone now.
    this.#host.renderOptions.renderBefore = null;
  }

  hostUpdated(): void {
    const root = this.#root;
    this.#root = null;
    const focused = this.#focused;
    this.#focused = null;
    if (!root || !focused) return;
    const again = root.querySelector<HTMLTextAreaElement>(`[part="${focused.part}"]`);
    again?.focus({ preventScroll: true });
    again?.setSelectionRange?.(focused.start, focused.end);
  }
}
