/**
 * The payment session as the screens and the chunks after the first QR see it
 * (src/controllers/payment-session.ts implements it): their modules import these types, not the
 * session's module, which imports the loader of those chunks (no import circle).
 */
import type { ReactiveControllerHost } from 'lit';
import type { ProxyClient } from '../api/client.ts';
import type { OpenPaymentRequest, PaymentView } from '../shared/contract.ts';
import type { Screen } from '../screens.ts';
import type { ClipboardController } from './clipboard.ts';
import type { CountdownController } from './countdown.ts';
import type { WidgetEnvironment } from './environment.ts';
import type { LocaleController } from './locale.ts';
import type { Connection } from './status.ts';

/**
 * `exhausted`: checkout mode, the proxy will issue no new code (409 renewals_exhausted); shown as
 * expired. `unverified`: the checkout's next code refused while an earlier one may be paid (503
 * status_unverified), asked for again by itself.
 */
export type Phase = 'idle' | 'loading' | 'ready' | 'error' | 'exhausted' | 'unverified';

/** The element a session runs in: the checkout it shows (its public properties), where its events are fired. */
export interface SessionHost extends ReactiveControllerHost, EventTarget {
  readonly endpoint: string;
  readonly checkout: string | null | undefined;
  readonly amount: number | undefined;
  readonly description: string | undefined;
  readonly renewals: number;
  readonly isConnected: boolean;
}

export interface SessionOptions {
  env: () => WidgetEnvironment;
  i18n: LocaleController;
  /** Reset when another payment comes on screen. */
  clipboard: ClipboardController;
  /** Says `text` in the element's polite live region. */
  announce: (text: string) => void;
}

/** What the screens read, and what the later chunk reads and calls (src/controllers/session-later.ts). */
export interface Session {
  phase: Phase;
  payment: PaymentView | null;
  connection: Connection;
  /** When this widget first showed the payment paid (epoch ms; 0 before): the receipt's time without `paid_at`. */
  paidSeen: number;
  readonly countdown: CountdownController;
  /** Codes generated after the first. */
  renewalsUsed: number;
  /** The request of a payment being created or resumed, or of more time. */
  creating: AbortController | null;
  /** The request asked again by itself after a 503 status_unverified (its Retry-After), and whether it renews. */
  askAgain: unknown;
  askRenew: boolean;
  readonly sessionHost: SessionHost;
  readonly sessionOptions: SessionOptions;
  /** What the customer sees now. */
  readonly screen: Screen;
  start(renew?: boolean): Promise<void>;
  /** pix-error for `error`; `fatal`: the error screen instead of the payment. */
  fail(error: unknown, fatal: boolean): void;
  /** Sets the session's state and renders the host. */
  setState(state: Partial<Pick<Session, 'phase' | 'payment' | 'connection' | 'paidSeen'>>): void;
  client(): ProxyClient;
  /** Open-amount mode: the payment the page asks for. */
  order(): OpenPaymentRequest;
  /** Puts a payment on screen and follows it while pending; `renewals`: codes generated after the first. */
  show(payment: PaymentView, resumed: boolean, renewals: number): void;
}
