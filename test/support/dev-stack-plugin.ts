/**
 * A web-test-runner plugin that runs the real stack (sandbox + proxy) for the browser tests and lets
 * them play the payer's bank through server commands.
 */
import { startDevStack, type DevStack } from '../../server/dev.ts';

interface CommandArgs {
  command: string;
  payload?: unknown;
}

export function devStackPlugin() {
  let stack: DevStack | null = null;
  return {
    name: 'pix-dev-stack',
    async serverStart() {
      stack = await startDevStack();
    },
    async serverStop() {
      await stack?.close();
      stack = null;
    },
    async executeCommand({ command, payload }: CommandArgs): Promise<unknown> {
      if (!stack) return undefined;
      if (command === 'dev-stack') return { url: stack.url, apiUrl: stack.apiUrl };
      if (command === 'sandbox-pay') {
        const { reference } = payload as { reference: string };
        // Through the sandbox's control API, as the demo's "Simulate payment" button does.
        const res = await fetch(`${stack.url}/sandbox/_sandbox/payments/${encodeURIComponent(reference)}/pay`, { method: 'POST' });
        return { status: res.status, body: await res.json() };
      }
      return undefined;
    },
  };
}
