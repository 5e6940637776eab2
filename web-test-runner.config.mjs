/**
 * Browser tests in the three engines our customers pay with, headless, one after another: Chromium,
 * Firefox and WebKit (test/support/engines.mjs), against the real stack: the sandbox over HTTPS and
 * the proxy on loopback, started once for the run on free ports and stopped after it.
 *
 *   npx wtr                          all three engines; a line of counts per engine at the end
 *   ENGINES=firefox,webkit npx wtr   some of them (ENGINES=chromium for a quick run)
 *
 * Engines run one after another (concurrentBrowsers: 1): the dev stack is shared, and a test that
 * moves the sandbox clock would expire the payments of a test running in another engine meanwhile.
 */
import rollupCommonjs from '@rollup/plugin-commonjs';
import { defaultReporter } from '@web/test-runner';
import { esbuildPlugin } from '@web/dev-server-esbuild';
import { fromRollup } from '@web/dev-server-rollup';
import { register } from 'tsx/esm/api';
import { engineSummaryReporter, launchersFor } from './test/support/engines.mjs';
import { missingEngineHints, selectedEngines } from './test/support/find-browsers.mjs';

register();
const { devStackPlugin } = await import('./test/support/dev-stack-plugin.ts');

let engines;
try {
  engines = selectedEngines();
} catch (error) {
  console.error(error.message);
  process.exit(1);
}
const missing = missingEngineHints(engines);
if (missing.length) {
  console.error(missing.join('\n'));
  process.exit(1);
}
const browsers = launchersFor(engines);

// A cancelled CI job (SIGTERM) or a closed terminal (SIGHUP) ends the run as Ctrl-C does: the runner
// stops its browsers and exits. Without this, puppeteer closes its browser on SIGTERM and the runner
// starts another for the next file. A second signal exits at once (browsers are killed on exit).
let stopping = false;
for (const signal of ['SIGTERM', 'SIGHUP']) {
  process.on(signal, () => {
    if (stopping) process.exit(1);
    stopping = true;
    process.kill(process.pid, 'SIGINT');
  });
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
  browsers,
  concurrentBrowsers: 1,
  // Firefox takes about 7 s to start on 2 cores; the default (30 s) leaves little room under load.
  browserStartTimeout: 120_000,
  reporters: [defaultReporter(), engineSummaryReporter(browsers)],
};
