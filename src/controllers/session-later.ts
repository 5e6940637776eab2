/**
 * The payment session's paths that follow the first QR, in the chunk loaded once it is on screen
 * (src/later.ts): a status read applied, "I need more time", a new code the proxy refused. Each takes
 * the session (src/controllers/payment-session.ts) and works through its members marked "the later
 * chunk's"; it imports nothing of the main script but types (the event it fires comes with the
 * kit, src/kit.ts).
 */
import { kit } from '../kit.ts';
import type { ProxyError } from '../api/client.ts';
import type { PaymentView } from '../shared/contract.ts';
import type { Translation } from '../locales/translation.ts';
import type { PixEnvironment, WidgetEnvironment } from './environment.ts';
import type { Session } from './session-shape.ts';
import type { StatusControllerOptions } from './status.ts';
import { TimeAnnouncements } from './time-announcements.ts';

/**
 * Seconds left on a pending code when "I need more time" is offered (WCAG 2.2.1 Timing Adjustable asks
 * for at least 20 s of warning and a simple action to extend; two minutes leave time to act on it).
 */
const MORE_TIME_AT_S = 120;

/** The element's environments, each with the defaults of the parts only the status controller reads under it. */
const following = new WeakMap<WidgetEnvironment, PixEnvironment>();

/** What the session's status controller (its own chunk, src/controllers/status.ts) reads and tells. */
export function statusOptions(session: Session): StatusControllerOptions {
  const env = () => {
    const own = session.sessionOptions.env();
    let full = following.get(own);
    if (!full) {
      full = {
        EventSource: typeof EventSource === 'function' ? EventSource : null,
        hidden: () => document.visibilityState === 'hidden',
        online: () => navigator.onLine,
        random: Math.random,
        ...own,
      };
      following.set(own, full);
    }
    return full;
  };
  return {
    client: () => session.client(),
    // The status stream's event (STATUS_STREAM) as the controller reads it: its view, or the error to report.
    stream: {
      event: kit.STATUS_STREAM.event,
      read(data) {
        let view: unknown;
        try {
          view = JSON.parse(data);
        } catch {
          view = undefined;
        }
        return kit.isPaymentView(view) ? view : new kit.ProxyError('bad_response', 'The payment server sent an update this page cannot read.', 200);
      },
    },
    isFinal: kit.isFinalStatus,
    env,
    onView: (view) => applyView(session, view),
    onError: (error) => session.fail(error, false),
    onConnection: (connection) => {
      if (connection !== session.connection) session.setState({ connection });
    },
  };
}

/** A status read (the stream's or a poll's, or more time's answer for the same code) put on screen. */
export function applyView(session: Session, view: PaymentView): void {
  const previous = session.payment?.status;
  // Status reads carry no `renewable` (only a checkout's answers do): keep the last one known.
  session.setState({ payment: { ...session.payment, ...view } });
  session.countdown.set(view.created_at, view.expires_at, view.server_time);
  if (previous === undefined || previous === view.status) return;
  session.sessionOptions.announce(session.sessionOptions.i18n.t[view.status]);
  session.sessionHost.dispatchEvent(new kit.PixStatusChangeEvent({ payment: view, previous }));
  fireOutcome(session, view);
}

/** pix-paid, pix-expired or pix-canceled for a payment in that status; nothing while pending. */
export function fireOutcome(session: Session, view: PaymentView): void {
  const host = session.sessionHost;
  if (view.status === 'paid') host.dispatchEvent(new kit.PixPaidEvent({ payment: view }));
  else if (view.status === 'expired') host.dispatchEvent(new kit.PixExpiredEvent({ payment: view, renewalsLeft: renewalsLeft(session) }));
  else if (view.status === 'canceled') host.dispatchEvent(new kit.PixCanceledEvent({ payment: view }));
}

/** Checkout mode: 1 while the widget offers a new code (the proxy decides), 0 once it refused one. */
export function renewalsLeft(session: Session): number {
  if (session.sessionHost.checkout != null) return session.phase === 'exhausted' ? 0 : 1;
  const renewals = session.sessionHost.renewals;
  return Math.max(0, (Number.isFinite(renewals) ? renewals : 0) - session.renewalsUsed);
}

/** "I need more time" is offered in a pending code's last two minutes, when a new code can be had. */
export function moreTimeOffered(session: Session, seconds: number): boolean {
  return 0 < seconds && seconds <= MORE_TIME_AT_S && (session.sessionHost.checkout != null ? session.payment!.renewable === true : renewalsLeft(session) > 0);
}

const announcements = new WeakMap<Session, TimeAnnouncements>();

/** What the element's time-left live region says now (null: nothing new), at each of its updates. */
export function announceTimeLeft(session: Session, t: Translation): string | null {
  let times = announcements.get(session);
  if (!times) announcements.set(session, (times = new TimeAnnouncements()));
  const seconds = session.screen === 'pending' ? session.countdown.seconds : null;
  return times.say(t, seconds, session.payment?.reference ?? null, moreTimeOffered(session, seconds ?? 0));
}

/**
 * "I need more time": a new code now, while this one still works, which stays on screen until the
 * answer (the button disabled meanwhile). A payment made at the last second wins: the proxy confirms
 * that no code of the checkout was paid before it issues another, and answers the paid one if one
 * was; in open-amount mode the proxy checks nothing, so the widget reads this payment first. A
 * failure leaves this code on screen, announced, with the button back (gone once no code is left).
 */
export async function askMoreTime(session: Session): Promise<void> {
  const current = session.payment;
  if (!current || session.creating) return;
  const creating = new AbortController();
  const { signal } = creating;
  session.creating = creating;
  session.sessionHost.requestUpdate();
  const client = session.client();
  const id = session.sessionHost.checkout;
  try {
    let payment: PaymentView;
    let created = true;
    if (id != null) ({ payment, created } = await client.checkoutPayment(id, signal, { renew: true }));
    else {
      payment = await client.getPayment(current.reference, signal);
      if (payment.status === 'pending') payment = await client.createPayment(session.order(), signal);
      else created = false;
    }
    // Paid meanwhile (the stream can tell between the check and the answer): that screen stays.
    if (signal.aborted || session.screen === 'paid') return;
    if (payment.reference === current.reference) applyView(session, payment);
    else session.show(payment, false, session.renewalsUsed + +created);
  } catch (error) {
    if (signal.aborted) return;
    // A ProxyError's code (the error class stays in the main script).
    if ((error as Partial<ProxyError>).code === 'renewals_exhausted') session.setState({ payment: { ...session.payment!, renewable: false } });
    session.sessionOptions.announce(session.sessionOptions.i18n.t.moreTimeFailed);
    session.fail(error, false);
  } finally {
    if (session.creating === creating) session.creating = null;
    session.sessionHost.requestUpdate();
  }
}

/**
 * The proxy refused the checkout's new code: `renewals_exhausted` (409: it will issue no other; not
 * an error screen, the expired one without the button) or `status_unverified` (503: an earlier code
 * may still be paid and the proxy cannot tell yet; never "expired for good", asked again by itself
 * after its Retry-After). Nothing if another start took over while this chunk loaded.
 */
export function refused(session: Session, error: ProxyError, renew: boolean): void {
  if (session.phase !== 'loading' || session.creating) return;
  const unverified = error.code === 'status_unverified';
  session.setState({ phase: unverified ? 'unverified' : 'exhausted' });
  session.sessionOptions.announce(session.sessionOptions.i18n.t[unverified ? 'unverified' : 'renewalsExhausted']);
  if (unverified) {
    session.askRenew = renew;
    session.askAgain = session.sessionOptions.env().clock.setTimeout(() => void session.start(renew), Math.max(error.retryAfterMs, 1000));
  }
  session.fail(error, false);
}
