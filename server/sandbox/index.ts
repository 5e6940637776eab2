/**
 * `pix-checkout/sandbox`: the partner service's simulator, for a merchant's own tests and demos.
 * `startSandbox()` runs it alone (HTTPS); `startDevStack()` runs it with a proxy in front, the way
 * `npm start` and this package's tests do.
 */
export { startSandbox, type RunningSandbox, type SandboxOptions } from './server.ts';
export { startDevStack, type DevStack, type DevStackOptions } from '../dev-stack.ts';
