/**
 * Sandbox mode: the one place in the proxy's code that reaches into server/sandbox/. With no partner
 * credentials configured, createProxy (and the dev stack) run against an in-process sandbox and log
 * in with its published test account; nothing else in the proxy knows the sandbox exists.
 */
import { SANDBOX_ACCOUNT } from './partner/sandbox-account.ts';
import { startSandbox, type RunningSandbox } from './sandbox/index.ts';

export { startSandbox, type RunningSandbox, type SandboxOptions } from './sandbox/index.ts';

export interface SandboxPartner {
  sandbox: RunningSandbox;
  /** True when started here, so closed with the proxy; false for a sandbox handed in. */
  owned: boolean;
  /** How the partner client reaches it. */
  connection: { baseUrl: string; ca: string; credentials: { email: string; accessKey: string }; userAgent: string };
  /** The sandbox's clock: advancing it expires QR codes on every screen at once. */
  now: () => number;
}

/** Starts a sandbox, or uses `existing` (a proxy restarted against the same sandbox). */
export async function sandboxPartner(existing?: RunningSandbox): Promise<SandboxPartner> {
  const sandbox = existing ?? (await startSandbox());
  return {
    sandbox,
    owned: existing === undefined,
    connection: {
      baseUrl: sandbox.url,
      ca: sandbox.ca,
      credentials: { email: SANDBOX_ACCOUNT.email, accessKey: SANDBOX_ACCOUNT.accessKey },
      userAgent: SANDBOX_ACCOUNT.userAgent,
    },
    now: sandbox.state.clock.now,
  };
}
