import { isServer, type ReactiveController, type ReactiveControllerHost } from 'lit';

/** Narrow or touch screens: the customer cannot scan their own screen, so copy comes first. */
const PHONE_QUERY = '(max-width: 40rem), (pointer: coarse)';

/** Whether the screen is a phone's (PHONE_QUERY), followed while connected; false on the server. */
export class PhoneScreenController implements ReactiveController {
  matches = false;
  #media: MediaQueryList | null = null;

  readonly #host: ReactiveControllerHost;

  constructor(host: ReactiveControllerHost) {
    this.#host = host;
    host.addController(this);
  }

  hostConnected(): void {
    if (isServer) return;
    this.#media = matchMedia(PHONE_QUERY);
    this.#media.addEventListener('change', this.#onChange);
    this.#onChange();
  }

  hostDisconnected(): void {
    this.#media?.removeEventListener('change', this.#onChange);
  }

  readonly #onChange = () => {
    const matches = this.#media?.matches ?? false;
    if (matches === this.matches) return;
    this.matches = matches;
    this.#host.requestUpdate();
  };
}
