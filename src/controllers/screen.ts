import type { ReactiveController, ReactiveControllerHost } from 'lit';
import { STATES, type Screen } from '../screens.ts';
import type { PaymentSessionController } from './payment-session.ts';

/**
 * What follows the screen the customer sees: the element's custom states (`:state(paid)`), the
 * performance marks of the QR and the paid screen painted (bench/widget-timing.ts), and the focus,
 * kept in the widget, on the status line, when the screen changes under it.
 */
export class ScreenController implements ReactiveController {
  readonly #internals: ElementInternals | null;
  /** Screen and reference last shown: focus follows the news when either changes under it. */
  #shownView: string | null = null;
  #shownScreen: Screen | null = null;
  #focusInside = false;

  readonly #host: ReactiveControllerHost & HTMLElement;
  readonly #session: PaymentSessionController;

  constructor(host: ReactiveControllerHost & HTMLElement, session: PaymentSessionController) {
    this.#host = host;
    this.#session = session;
    host.addController(this);
    this.#internals = typeof host.attachInternals === 'function' ? host.attachInternals() : null;
  }

  hostUpdate(): void {
    this.#focusInside ||= !!this.#host.shadowRoot?.activeElement;
  }

  hostUpdated(): void {
    const screen = this.#session.screen;
    const states = this.#internals?.states;
    if (states) {
      for (const name of STATES) {
        const on = name === screen || (name === 'reconnecting' && screen === 'pending' && this.#session.connection !== 'live');
        try {
          if (on) states.add(name);
          else states.delete(name);
        } catch {
          // Chromium before 125 only accepted `--name` states; styling by state is then unavailable.
        }
      }
    }
    if (screen !== this.#shownScreen && (screen === 'pending' || screen === 'paid')) {
      const mark = `pix-checkout:${screen === 'paid' ? 'paid' : 'qr'}`;
      requestAnimationFrame(() => performance.mark(mark));
    }
    this.#shownScreen = screen;
    const view = `${screen} ${this.#session.payment?.reference}`;
    if (view !== this.#shownView) {
      // Focus was in the widget (the copy, retry or more-time button, now gone): keep it here, on the news.
      if (this.#shownView !== null && this.#focusInside) {
        this.#host.shadowRoot?.querySelector<HTMLElement>('[part~="status"]')?.focus();
      }
      this.#shownView = view;
      this.#focusInside = false;
    }
  }
}
