/**
 * A web-test-runner plugin that runs the real stack (sandbox + proxy) for the browser tests and lets
 * them play the payer's bank through server commands.
 */
import { startDevStack, type DevStack, type DevStackOptions } from '../../server/dev-stack.ts';
import { renderPaymentRequest } from '../../server/merchant/payment-request.ts';
import { renderPixCheckout } from '../../server/ssr/render.ts';
import type { CheckoutView } from '../../src/shared/index.ts';

interface CommandArgs {
  command: string;
  payload?: unknown;
  session?: { id: string; browser?: { name?: string; getPage?: (id: string) => unknown } };
}

interface PermissionPage {
  url(): string;
  browserContext(): { overridePermissions(origin: string, permissions: string[]): Promise<void> };
}

/**
 * Reads go to the sandbox every time, whatever the webhooks' health (which would otherwise serve a
 * pending status for 10 s once notifications arrive): a test that pays and then checks must see it.
 */
const ALWAYS_ASK = { staleAfterMs: 0, webhookReadIntervalMs: 0 } as const;

/** Extra stacks, each started on first use: `nostream` refuses the status stream; `renewals` allows one renewal per checkout. */
type Which = 'nostream' | 'renewals';
const EXTRA: Record<Which, DevStackOptions> = {
  // `streams: false` makes the proxy answer the events path with 404 (server/dev.ts).
  nostream: { streams: false, ...ALWAYS_ASK },
  renewals: { renewals: 1, ...ALWAYS_ASK },
};

export function devStackPlugin() {
  let stack: DevStack | null = null;
  let extra: Partial<Record<Which, Promise<DevStack>>> = {};
  const other = (which: Which) => (extra[which] ??= startDevStack(EXTRA[which]));
  return {
    name: 'pix-dev-stack',
    async serverStart() {
      stack = await startDevStack(ALWAYS_ASK);
    },
    async serverStop() {
      await stack?.close();
      for (const started of Object.values(extra)) await (await started).close();
      stack = null;
      extra = {};
    },
    async executeCommand({ command, payload, session }: CommandArgs): Promise<unknown> {
      if (!stack) return undefined;
      if (command === 'dev-stack') return { url: stack.url, apiUrl: stack.apiUrl };
      if (command === 'dev-stack-nostream' || command === 'dev-stack-renewals') {
        const started = await other(command === 'dev-stack-nostream' ? 'nostream' : 'renewals');
        return { url: started.url, apiUrl: started.apiUrl };
      }
      if (command === 'create-checkout') {
        // What the merchant's server does: server to server, with the API key (never from the page).
        const { stack: which, ...body } = payload as { stack?: Which; value: number; order_id: string; description?: string };
        const target = which ? await other(which) : stack;
        const res = await fetch(`${target.apiUrl}/checkouts`, {
          method: 'POST',
          headers: { authorization: `Bearer ${target.apiKey}`, 'content-type': 'application/json' },
          body: JSON.stringify(body),
        });
        return { status: res.status, body: await res.json() };
      }
      if (command === 'render-checkout') {
        // What a merchant's server does for a server-rendered page: a checkout with its payment issued,
        // rendered with renderPixCheckout (pix-checkout-server/render) into the page's HTML.
        const { locale, phone, ...body } = payload as { value: number; order_id: string; locale?: string; phone?: boolean };
        const res = await fetch(`${stack.apiUrl}/checkouts`, {
          method: 'POST',
          headers: { authorization: `Bearer ${stack.apiKey}`, 'content-type': 'application/json' },
          body: JSON.stringify({ ...body, issue_payment: true }),
        });
        const checkout = (await res.json()) as CheckoutView;
        if (res.status !== 201) return { status: res.status, body: checkout };
        return { status: res.status, body: checkout, html: await renderPixCheckout(checkout, { endpoint: stack.apiUrl, locale, phone }) };
      }
      if (command === 'get-checkout') {
        const { checkout_id } = payload as { checkout_id: string };
        const res = await fetch(`${stack.apiUrl}/checkouts/${encodeURIComponent(checkout_id)}`, { headers: { authorization: `Bearer ${stack.apiKey}` } });
        return { status: res.status, body: await res.json() };
      }
      if (command === 'payment-request') {
        // What a merchant's server writes into a script-tag page's head: the checkout's payment asked for by the page.
        const { checkout_id } = payload as { checkout_id: string };
        return renderPaymentRequest(checkout_id, { endpoint: stack.apiUrl });
      }
      if (command === 'sandbox-pay' || command === 'sandbox-advance') {
        const { reference, seconds, stack: which } = payload as { reference?: string; seconds?: number; stack?: Which };
        const target = which ? await other(which) : stack;
        // Through the sandbox's control API, as the demo's "Simulate payment" button does.
        const res =
          command === 'sandbox-pay'
            ? await fetch(`${target.url}/sandbox/_sandbox/payments/${encodeURIComponent(reference!)}/pay`, { method: 'POST' })
            : await fetch(`${target.url}/sandbox/_sandbox/clock/advance`, {
                method: 'POST',
                headers: { 'content-type': 'application/json' },
                body: JSON.stringify({ seconds }),
              });
        return { status: res.status, body: await res.json() };
      }
      if (command === 'grant-clipboard') {
        // Firefox has no clipboard permissions to grant, and needs none: writeText after a key press
        // (a real user activation over WebDriver BiDi), readText of what the same origin wrote.
        if (session?.browser?.name?.startsWith('Firefox')) return true;
        // The real Clipboard API in headless Chromium, as a customer's browser grants it on a tap
        // (WebKit's launcher grants it at launch: test/support/engines.mjs).
        const page = session?.browser?.getPage?.(session.id) as PermissionPage | undefined;
        if (!page) return false;
        await page.browserContext().overridePermissions(new URL(page.url()).origin, ['clipboard-read', 'clipboard-write', 'clipboard-sanitized-write']);
        return true;
      }
      return undefined;
    },
  };
}
