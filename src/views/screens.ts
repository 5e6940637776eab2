/**
 * What the element renders for each screen (src/screens.ts lists them): a record over the screens a
 * first QR may need here, and over the others in the later chunk (src/views/outcome.ts), so a screen
 * without its renderer does not compile. Those of the later chunk draw the loading screen until it
 * is here, and ask for it.
 */
import { later, loadLater, type Later } from '../load-later.ts';
import type { EndScreen, Screen } from '../screens.ts';
import type { ScreenContext } from './context.ts';
import { renderPending } from './pending.ts';
import { renderError, renderLoading } from './status.ts';

export function renderScreen(screen: Screen, c: ScreenContext) {
  const { i18n, session } = c;
  const t = i18n.t;
  const loading = () => renderLoading(t, i18n.hasTranslation);
  const renderers: Record<Exclude<Screen, EndScreen>, () => unknown> = {
    loading,
    error: () => renderError(t, () => void session.start()),
    pending: () => pending(c, later),
  };
  const rendered = screen in renderers ? renderers[screen as keyof typeof renderers]() : later?.renderEnd(screen as EndScreen, c);
  if (rendered) return rendered;
  loadLater().then(
    () => c.host.requestUpdate(),
    () => {},
  );
  return loading();
}

function pending(c: ScreenContext, l: Later | undefined) {
  const { host, copyFirst, i18n, session, code, clipboard, copy } = c;
  const t = i18n.t;
  const payment = session.payment!;
  const amount = i18n.formatMoney(payment.value);
  const receiver = code.receiver(payment);
  return renderPending({
    t,
    payment,
    amount,
    receiver,
    seconds: session.countdown.seconds ?? 0,
    fraction: session.countdown.fraction,
    connection: session.connection,
    mode: host.mode,
    copyFirst,
    qr: () => code.qr(payment.brcode),
    copyState: clipboard.copyState,
    copy,
    extras: l ?? null,
    context: c,
  });
}
