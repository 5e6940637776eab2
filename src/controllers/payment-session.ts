import { isServer, type ReactiveController } from 'lit';
import { ProxyClient, ProxyError } from '../api/client.ts';
import { PixCreatedEvent, PixErrorEvent } from '../events.ts';
import { takeEarly } from '../early.ts';
import { markOnce } from '../marks.ts';
import type { PaymentView } from '../shared/contract.ts';
import { CountdownController } from './countdown.ts';
import { loadSaved, resumeKey, saveForReload } from './resume.ts';
import type { Phase, Session, SessionHost, SessionOptions } from './session-shape.ts';
import { loadLater } from '../load-later.ts';
import { afterPaint } from '../paint.ts';
import type { Screen } from '../screens.ts';
import type { Connection, StatusController } from './status.ts';

/**
 * The payment on screen and its life: started (or resumed from sessionStorage after a reload),
 * followed until final (StatusController) with its time left (CountdownController), given more time
 * or renewed after it expired, and the events the page hears about it. What follows the first QR
 * (a status read applied, more time, a new code refused) is in the later chunk
 * (src/controllers/session-later.ts), which reads and calls the members marked "the later chunk's".
 */
export class PaymentSessionController implements ReactiveController, Session {
  phase: Phase = 'idle';
  payment: PaymentView | null = null;
  connection: Connection = 'live';
  /** When this widget first showed the payment paid (epoch ms; 0 before): the receipt's time without `paid_at`. */
  paidSeen = 0;
  readonly countdown: CountdownController;
  /** Null until its chunk is here. */
  #status: StatusController | null = null;
  /** The reference to follow (null: none): what the status controller is told once it is here. */
  #following: string | null = null;
  /** Settles once the status chunk loaded (or failed to) after the last follow. */
  #statusLoaded: Promise<void> = Promise.resolve();
  /** Codes generated after the first (the later chunk's). */
  renewalsUsed = 0;
  #startedKey: string | null = null;
  /** The request of a payment being created or resumed, or of more time (the later chunk's). */
  creating: AbortController | null = null;
  /** The request asked again by itself after a 503 status_unverified (its Retry-After), and whether it renews (the later chunk's). */
  askAgain: unknown;
  askRenew = false;

  /** The element and the options (the later chunk's). */
  readonly sessionHost: SessionHost;
  readonly sessionOptions: SessionOptions;

  constructor(host: SessionHost, options: SessionOptions) {
    this.sessionHost = host;
    this.sessionOptions = options;
    host.addController(this);
    this.countdown = new CountdownController(
      host,
      () => options.env().clock,
      () => this.#checkNow(),
    );
  }

  /** Settles once the payment on screen is followed (its status chunk loaded, or failed to load). */
  get followed(): Promise<void> {
    return this.#statusLoaded;
  }

  #follow(reference: string): void {
    this.#following = reference;
    if (this.#status) this.#status.follow(reference);
    else this.#loadStatus(null);
  }

  #stopFollowing(): void {
    this.#following = null;
    this.#status?.stop();
  }

  #checkNow(): void {
    if (this.#status) this.#status.checkNow();
    else if (this.#following !== null) this.#loadStatus(null);
  }

  /**
   * Following the status is in the chunks loaded once the first QR is on screen (src/later.ts), and
   * so are the events of a payment `final` when shown, fired then if it is still on screen.
   */
  #loadStatus(final: PaymentView | null): void {
    this.#statusLoaded = afterPaint()
      .then(loadLater)
      .then(
        (l) => {
          // Added to the host, which calls its hostConnected at once when connected.
          this.#status ??= new l.StatusController(this.sessionHost, l.statusOptions(this));
          if (this.#following !== null) this.#status.follow(this.#following);
          if (final && final === this.payment) l.fireOutcome(this, final);
          // What the chunk draws besides (buttons, the screens of a code's end) is here now.
          this.sessionHost.requestUpdate();
        },
        (error: unknown) => this.fail(error, false),
      );
  }

  /** What the customer sees now. */
  get screen(): Screen {
    if (this.phase === 'error') return 'error';
    if (this.phase === 'exhausted') return 'expired';
    if (this.phase === 'unverified') return 'unverified';
    return this.phase === 'ready' && this.payment ? this.payment.status : 'loading';
  }

  hostConnected(): void {
    // Removed while creating: start again now that it is back.
    if (this.phase === 'idle') this.#startedKey = null;
    // Removed while waiting to ask again (its timer stopped): ask now.
    if (this.phase === 'unverified') void this.start(this.askRenew);
  }

  hostDisconnected(): void {
    this.#stopAskingAgain();
    this.creating?.abort();
    this.creating = null;
    if (this.phase === 'loading') this.setState({ phase: 'idle' });
  }

  /** Starts the checkout when the host shows another (a new endpoint, checkout, amount or description). */
  startIfNew(): void {
    // The server renders what it is given: it asks for nothing.
    if (isServer) return;
    const key = resumeKey(this.sessionHost);
    if (key && key !== this.#startedKey && this.sessionHost.isConnected) void this.start();
  }

  /**
   * Shows the payment the merchant's server gave the page (the element's `payment`) as this
   * checkout's, with no request for it: its status is then followed live, as a fetched one's. On the
   * server (rendering the element's markup) it is only put on screen: nothing is followed or fired.
   */
  adopt(payment: PaymentView): void {
    if (isServer) {
      // The receipt's time without `paid_at`: when the proxy answered (in the browser, when this widget saw it paid).
      Object.assign(this, { phase: 'ready', payment, paidSeen: Date.parse(payment.server_time) || 0 });
      this.countdown.set(payment.created_at, payment.expires_at, payment.server_time);
      return;
    }
    this.#startedKey = resumeKey(this.sessionHost);
    this.creating?.abort();
    this.creating = null;
    // Its server_time was true when the page was made, before the script loaded: the countdown shows
    // the page's value until the first status read (at once: the stream's first event) sets the time.
    this.show(payment, true, this.renewalsUsed);
  }

  /**
   * Shows the checkout's payment: the one saved for this page (after a reload) or a new one. With
   * `renew`, always a new one (the customer asked for a new code after the last expired).
   */
  async start(renew = false): Promise<void> {
    const key = resumeKey(this.sessionHost);
    if (!key) return;
    this.#startedKey = key;
    this.creating?.abort();
    const creating = new AbortController();
    this.creating = creating;
    this.#stopAskingAgain();
    this.#stopFollowing();
    this.countdown.stop();
    this.sessionOptions.clipboard.reset();
    this.setState({ phase: 'loading', payment: null, connection: 'live' });
    const client = this.client();
    const id = this.sessionHost.checkout;
    const saved = renew || id != null ? null : loadSaved(this.sessionOptions.env().storage, key);
    let renewals = renew ? this.renewalsUsed + 1 : (saved?.renewals ?? 0);
    markOnce('pix-checkout:request');
    try {
      let payment: PaymentView | null = null;
      let resumed = false;
      if (id != null) {
        // Checkout mode: the proxy answers the checkout's live payment (the same one after a reload), or
        // issues the next one once it expired; it alone decides the amount and the number of renewals.
        // Asked for already while the script was evaluated (src/early.ts), unless a new code is wanted.
        const answer = await ((!renew && takeEarly(this.sessionHost.endpoint, id)) || client.checkoutPayment(id, creating.signal));
        payment = answer.payment;
        resumed = !answer.created && !renew;
        // Asked for a new code but got the current one (an earlier code was paid after all).
        if (renew && !answer.created) renewals--;
      } else if (saved) {
        payment = await client.getPayment(saved.reference, creating.signal).catch((error: unknown) => {
          // Gone from the proxy (or never valid): make a new one rather than show an error.
          if (error instanceof ProxyError && (error.code === 'not_found' || error.code === 'invalid_reference')) return null;
          throw error;
        });
        resumed = payment !== null;
      }
      payment ??= await client.createPayment(this.order(), creating.signal);
      if (creating.signal.aborted) return;
      markOnce('pix-checkout:payment');
      // Shown in the page's language, whose texts loaded beside the request.
      await this.sessionOptions.i18n.localeReady;
      if (creating.signal.aborted) return;
      this.show(payment, resumed, renewals);
    } catch (error) {
      if (creating.signal.aborted) return;
      await this.sessionOptions.i18n.localeReady;
      if (creating.signal.aborted) return;
      // The proxy refused a new code (the last expired and it will issue no other, or an earlier
      // one may still be paid): the later chunk's, whose screens say so; if it cannot load, the
      // error screen does.
      if (error instanceof ProxyError && (error.code === 'renewals_exhausted' || error.code === 'status_unverified')) {
        this.#statusLoaded = loadLater().then(
          (l) => l.refused(this, error, renew),
          () => this.fail(error, true),
        );
      } else this.fail(error, true);
    } finally {
      if (this.creating === creating) this.creating = null;
    }
  }

  #stopAskingAgain(): void {
    this.sessionOptions.env().clock.clearTimeout(this.askAgain);
    this.askAgain = undefined;
  }

  /** pix-error for `error`; `fatal`: the error screen instead of the payment (the later chunk's). */
  fail(error: unknown, fatal: boolean): void {
    const detail =
      error instanceof ProxyError
        ? { code: error.code, message: error.message, ...(error.fields ? { fields: error.fields } : {}), fatal }
        : { code: 'internal', message: String(error), fatal };
    if (fatal) {
      this.setState({ phase: 'error' });
      this.sessionOptions.announce('');
      // The customer sees only "Não foi possível carregar o pagamento": the page's developer reads why here.
      console.error('pix-checkout:', detail.code, detail.message);
    }
    this.sessionHost.dispatchEvent(new PixErrorEvent(detail));
  }

  /** Sets the session's state and renders the host (as the element's own reactive state did; the later chunk's). */
  setState(state: Partial<Pick<Session, 'phase' | 'payment' | 'connection' | 'paidSeen'>>): void {
    Object.assign(this, state);
    this.sessionHost.requestUpdate();
  }

  /** The later chunk's. */
  client(): ProxyClient {
    return new ProxyClient(this.sessionHost.endpoint, this.sessionOptions.env().fetch);
  }

  /** Open-amount mode: the payment the page asks for (the later chunk's). */
  order() {
    return { value: this.sessionHost.amount!, description: this.sessionHost.description };
  }

  /** Puts a payment on screen and follows it while pending; `renewals`: codes generated after the first (the later chunk's). */
  show(payment: PaymentView, resumed: boolean, renewals: number): void {
    this.renewalsUsed = renewals;
    if (this.sessionHost.checkout == null && this.#startedKey)
      saveForReload(this.sessionOptions.env().storage, this.#startedKey, { reference: payment.reference, renewals });
    this.setState({ phase: 'ready', payment, paidSeen: 0 });
    this.countdown.set(payment.created_at, payment.expires_at, payment.server_time);
    this.sessionHost.dispatchEvent(new PixCreatedEvent({ payment, resumed, renewal: renewals }));
    if (payment.status === 'pending') this.#follow(payment.reference);
    else {
      this.#stopFollowing();
      // Already final (paid before a reload, or a late-paid earlier code): its screen (paid, expired,
      // canceled) is in the later chunk, which fires its outcome as when it happens on screen.
      this.#loadStatus(payment);
    }
  }
}
