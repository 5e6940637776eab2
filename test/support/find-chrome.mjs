#!/usr/bin/env node
/**
 * Finds a Chromium or Chrome for the browser tests: CHROME_PATH first, then the usual places.
 * `node test/support/find-chrome.mjs --check` exits 1 with a one-line hint when there is none.
 */
import { existsSync } from 'node:fs';
import { pathToFileURL } from 'node:url';

const CANDIDATES = [
  '/usr/bin/chromium',
  '/usr/bin/chromium-browser',
  '/usr/bin/google-chrome',
  '/usr/bin/google-chrome-stable',
  '/snap/bin/chromium',
  '/Applications/Google Chrome.app/Contents/MacOS/Google Chrome',
  '/Applications/Chromium.app/Contents/MacOS/Chromium',
];

export function findChrome() {
  const fromEnv = process.env.CHROME_PATH;
  if (fromEnv) return existsSync(fromEnv) ? fromEnv : null;
  return CANDIDATES.find((path) => existsSync(path)) ?? null;
}

/** Headless Chromium as root on a machine with no network: every launch here uses these. */
export const CHROME_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-dev-shm-usage',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
  // Desktop Chromium (156 here) opens its omnibox popup as a WebUI renderer in every new window, an
  // incognito context's too: two browser_ui targets loading some 340 chrome:// files, about 0.6 s of
  // CPU over a page's first 0.75 s. On two cores that slows every page under test, and skews
  // bench:phone (a phone's browser does nothing of the kind). A feature this Chromium does not know
  // is ignored.
  '--disable-features=WebUIOmniboxPopup,WebUIOmniboxAimPopup,WebUIOmniboxFullPopup',
];

export const INSTALL_HINT =
  'No Chromium found for the browser tests: install it (Debian/Ubuntu: sudo apt-get install -y chromium) or set CHROME_PATH to a Chrome/Chromium binary.';

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href && process.argv.includes('--check')) {
  const path = findChrome();
  if (!path) {
    console.error(process.env.CHROME_PATH ? `CHROME_PATH=${process.env.CHROME_PATH} does not exist. ${INSTALL_HINT}` : INSTALL_HINT);
    process.exit(1);
  }
}
