/**
 * A web-test-runner plugin that runs the real stack (sandbox + proxy) for the browser tests and lets
 * them play the payer's bank through server commands.
 */
import { startDevStack, type DevStack, type DevStackOptions } from '../../server/dev.ts';

interface CommandArgs {
  command: string;
  payload?: unknown;
  session?: { id: string; browser?: { getPage?: (id: string) => unknown } };
}

interface PermissionPage {
  url(): string;
  browserContext(): { overridePermissions(origin: string, permissions: string[]): Promise<void> };
}

export function devStackPlugin() {
  let stack: DevStack | null = null;
  // A second stack whose proxy refuses the status stream, started on first use.
  let noStream: Promise<DevStack> | null = null;
  return {
    name: 'pix-dev-stack',
    async serverStart() {
      // Reads go to the sandbox every time: a test that pays and then checks must see the payment.
      stack = await startDevStack({ staleAfterMs: 0 } as DevStackOptions);
    },
    async serverStop() {
      await stack?.close();
      await (await noStream)?.close();
      stack = null;
      noStream = null;
    },
    async executeCommand({ command, payload, session }: CommandArgs): Promise<unknown> {
      if (!stack) return undefined;
      if (command === 'dev-stack') return { url: stack.url, apiUrl: stack.apiUrl };
      if (command === 'dev-stack-nostream') {
        // `streams: false` makes the proxy answer the events path with 404 (server/dev.ts).
        noStream ??= startDevStack({ streams: false, staleAfterMs: 0 } as DevStackOptions);
        const other = await noStream;
        return { url: other.url, apiUrl: other.apiUrl };
      }
      if (command === 'sandbox-pay' || command === 'sandbox-advance') {
        const { reference, seconds, stack: which } = payload as { reference?: string; seconds?: number; stack?: 'nostream' };
        const target = which === 'nostream' && noStream ? await noStream : stack;
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
        // The real Clipboard API in headless Chromium, as a customer's browser grants it on a tap.
        const page = session?.browser?.getPage?.(session.id) as PermissionPage | undefined;
        if (!page) return false;
        await page.browserContext().overridePermissions(new URL(page.url()).origin, ['clipboard-read', 'clipboard-write', 'clipboard-sanitized-write']);
        return true;
      }
      return undefined;
    },
  };
}
