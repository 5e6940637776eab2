#!/usr/bin/env node
/**
 * The three browser engines the tests run in, and where this machine has them: Chromium (Android's
 * Chrome; find-chrome.mjs), Firefox (firefox-esr, driven over WebDriver BiDi) and WebKit (WebKitGTK's
 * MiniBrowser through WebKitWebDriver, on an Xvfb display), all from Debian's packages.
 * Plain JavaScript with no dependency, so that `.ci/run` can ask it before `npm ci`.
 *
 *   node test/support/find-browsers.mjs --check [engine...]    exits 1 with one line per missing engine
 *   node test/support/find-browsers.mjs --debian-packages      what apt-get should install, or nothing
 *
 * Both look at the engines named in `ENGINES` (comma separated; all three when unset), plus any named
 * as arguments.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { INSTALL_HINT as CHROMIUM_HINT, findChrome } from './find-chrome.mjs';

export const ENGINE_NAMES = ['chromium', 'firefox', 'webkit'];

/** What each engine needs from Debian (MiniBrowser comes with webkit2gtk-driver's libwebkit2gtk). */
export const DEBIAN_PACKAGES = {
  chromium: ['chromium'],
  firefox: ['firefox-esr'],
  webkit: ['webkit2gtk-driver', 'xvfb'],
};

export const ENGINE_HINTS = {
  chromium: CHROMIUM_HINT,
  firefox:
    'No Firefox found for the browser tests: install it (Debian: sudo apt-get install -y firefox-esr), set FIREFOX_PATH, or leave it out with ENGINES=chromium,webkit.',
  webkit:
    "No WebKit found for the browser tests: install WebKitGTK's driver and a virtual display (Debian: sudo apt-get install -y webkit2gtk-driver xvfb), or leave it out with ENGINES=chromium,firefox.",
};

/** The engines named in `ENGINES`, in the order given, all three when unset; throws on an unknown name. */
export function selectedEngines(value = process.env.ENGINES) {
  if (!value?.trim()) return [...ENGINE_NAMES];
  const names = value
    .split(',')
    .map((name) => name.trim().toLowerCase())
    .filter(Boolean);
  const unknown = names.filter((name) => !ENGINE_NAMES.includes(name));
  if (unknown.length) throw new Error(`ENGINES=${value}: no engine called ${unknown.join(', ')} (the engines: ${ENGINE_NAMES.join(', ')})`);
  return [...new Set(names)];
}

/** A command on PATH (or in /usr/bin, which a minimal PATH may lack), as its full path. */
export function onPath(command) {
  const dirs = [...(process.env.PATH ?? '').split(delimiter), '/usr/bin'];
  for (const dir of dirs) if (dir && existsSync(join(dir, command))) return join(dir, command);
  return null;
}

/** FIREFOX_PATH if set, else Debian's firefox-esr (or a firefox). */
export function findFirefox() {
  const fromEnv = process.env.FIREFOX_PATH;
  if (fromEnv) return existsSync(fromEnv) ? fromEnv : null;
  return ['/usr/bin/firefox-esr', '/usr/bin/firefox'].find((path) => existsSync(path)) ?? null;
}

/**
 * Where test/support/fetch-firefox-esr.sh unpacks the other Firefox ESRs Debian offers this machine
 * (Debian 12 offers 140 beside its security updates' newer ESR): one folder each, never installed.
 */
export const OTHER_FIREFOXES = fileURLToPath(new URL('../../.browsers/', import.meta.url));

/**
 * Every Firefox the browser tests run in: findFirefox()'s first, then each ESR unpacked under
 * .browsers/ (unless FIREFOX_PATH names one alone), each with its version ("140.12.0esr").
 */
export function findFirefoxes() {
  const first = findFirefox();
  const paths = first ? [first] : [];
  if (!process.env.FIREFOX_PATH && existsSync(OTHER_FIREFOXES)) {
    for (const name of readdirSync(OTHER_FIREFOXES)
      .filter((entry) => entry.startsWith('firefox-esr-'))
      .sort()) {
      const path = join(OTHER_FIREFOXES, name, 'usr/lib/firefox-esr/firefox-esr');
      if (existsSync(path)) paths.push(path);
    }
  }
  return paths.map((path) => ({ path, version: firefoxVersion(path) }));
}

/** "140.12.0esr" from `firefox --version` ("Mozilla Firefox 140.12.0esr"), or "" when it does not say. */
function firefoxVersion(path) {
  try {
    return /(\d+\.[\w.]+)\s*$/.exec(execFileSync(path, ['--version'], { encoding: 'utf8', timeout: 30_000 }).trim())?.[1] ?? '';
  } catch {
    return '';
  }
}

/** WEBKIT_MINIBROWSER if set, else MiniBrowser from libwebkit2gtk-4.1-0 (or webkitgtk-6.0), whatever the multiarch directory. */
export function findMiniBrowser() {
  const fromEnv = process.env.WEBKIT_MINIBROWSER;
  if (fromEnv) return existsSync(fromEnv) ? fromEnv : null;
  let triplets;
  try {
    triplets = readdirSync('/usr/lib').filter((name) => /-linux-gnu\w*$/.test(name));
  } catch {
    return null;
  }
  for (const triplet of triplets) {
    for (const api of ['webkit2gtk-4.1', 'webkitgtk-6.0', 'webkit2gtk-4.0']) {
      const path = `/usr/lib/${triplet}/${api}/MiniBrowser`;
      if (existsSync(path)) return path;
    }
  }
  return null;
}

/** True when `engine` can run here. */
export function hasEngine(engine) {
  if (engine === 'chromium') return findChrome() !== null;
  if (engine === 'firefox') return findFirefox() !== null;
  if (engine === 'webkit') return findMiniBrowser() !== null && onPath('WebKitWebDriver') !== null && onPath('Xvfb') !== null;
  throw new Error(`no engine called ${engine}`);
}

/** The variable that points at each engine's binary instead of the usual places. */
const PATH_VARIABLES = { chromium: 'CHROME_PATH', firefox: 'FIREFOX_PATH', webkit: 'WEBKIT_MINIBROWSER' };

/** The install hint of each engine of `engines` that this machine lacks, one line each. */
export function missingEngineHints(engines) {
  return engines
    .filter((engine) => !hasEngine(engine))
    .map((engine) => {
      const variable = PATH_VARIABLES[engine];
      const wrong = process.env[variable] && !existsSync(process.env[variable]);
      return `${wrong ? `${variable}=${process.env[variable]} does not exist. ` : ''}${ENGINE_HINTS[engine]}`;
    });
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const [flag, ...named] = process.argv.slice(2);
  let engines;
  try {
    engines = [...new Set([...selectedEngines(), ...(named.length ? selectedEngines(named.join(',')) : [])])];
  } catch (error) {
    console.error(error.message);
    process.exit(1);
  }
  if (flag === '--check') {
    const hints = missingEngineHints(engines);
    if (hints.length) {
      console.error(hints.join('\n'));
      process.exit(1);
    }
  } else if (flag === '--debian-packages') {
    const packages = engines.filter((engine) => !hasEngine(engine)).flatMap((engine) => DEBIAN_PACKAGES[engine]);
    if (packages.length) console.log(packages.join(' '));
  } else {
    console.error('usage: node test/support/find-browsers.mjs --check [engine...] | --debian-packages [engine...]');
    process.exit(2);
  }
}
