/**
 * Browser tests in headless Chromium against the real stack: the sandbox over HTTPS and the proxy on
 * loopback, started once for the run on free ports and stopped after it.
 */
import rollupCommonjs from '@rollup/plugin-commonjs';
import { esbuildPlugin } from '@web/dev-server-esbuild';
import { fromRollup } from '@web/dev-server-rollup';
import { chromeLauncher } from '@web/test-runner-chrome';
import { register } from 'tsx/esm/api';
import { INSTALL_HINT, CHROME_ARGS, findChrome } from './test/support/find-chrome.mjs';

register();
const { devStackPlugin } = await import('./test/support/dev-stack-plugin.ts');

const executablePath = findChrome();
if (!executablePath) {
  console.error(INSTALL_HINT);
  process.exit(1);
}

const commonjs = fromRollup(rollupCommonjs);

export default {
  files: ['test/browser/**/*.test.ts'],
  nodeResolve: { browser: true },
  concurrency: 1,
  testFramework: { config: { timeout: 15000 } },
  plugins: [
    // qrcode is CommonJS only; these options are the ones that work (see docs/toolchain notes).
    commonjs({ include: ['**/node_modules/qrcode/**', '**/node_modules/dijkstrajs/**'], requireReturnsDefault: 'preferred' }),
    esbuildPlugin({ ts: true, target: 'es2022', tsconfig: './tsconfig.json' }),
    devStackPlugin(),
  ],
  browsers: [
    chromeLauncher({
      launchOptions: {
        executablePath,
        headless: true,
        args: CHROME_ARGS,
      },
    }),
  ],
};
