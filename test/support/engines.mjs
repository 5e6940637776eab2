/**
 * The browser engines of web-test-runner.config.mjs: Chromium (Android's Chrome), Firefox (desktop)
 * and WebKit (iPhones' Safari), all from Debian's packages, nothing downloaded (find-browsers.mjs).
 *
 * - Chromium: @web/test-runner-chrome over puppeteer-core.
 * - Firefox: the same launcher with puppeteer-core driving `firefox-esr` over WebDriver BiDi.
 * - WebKit: WebKitGTK's MiniBrowser through WebKitWebDriver on an Xvfb display of its own
 *   (webkit-driver.mjs), behind a launcher of ours.
 *
 * `ENGINES=firefox,webkit` picks engines (default: all three).
 */
import { chromeLauncher, puppeteerCore } from '@web/test-runner-chrome';
import './bidi-compat.mjs';
import { findFirefox, findFirefoxes } from './find-browsers.mjs';
import { CHROME_ARGS, findChrome } from './find-chrome.mjs';
import { startWebKit } from './webkit-driver.mjs';

/** Chromium headless, with the flags every launch here uses (find-chrome.mjs). */
export function chromiumLauncher({ executablePath = findChrome() } = {}) {
  const launcher = chromeLauncher({ launchOptions: { executablePath, headless: true, args: CHROME_ARGS } });
  // @web/test-runner-chrome calls a local Chromium "Chrome".
  launcher.name = 'Chromium';
  return launcher;
}

/**
 * Firefox through puppeteer-core over WebDriver BiDi: @web/test-runner-chrome's launcher with a custom
 * puppeteer, which is all @web/test-runner-puppeteer adds (without the full puppeteer package, which
 * downloads browsers). Its pages are real puppeteer pages, so sendKeys, setViewport and the dev-stack
 * plugin's commands reach them as they reach Chromium's.
 */
export function firefoxLauncher({ executablePath = findFirefox(), prefs = {}, name = 'Firefox' } = {}) {
  const launcher = chromeLauncher({
    puppeteer: puppeteerCore,
    launchOptions: {
      browser: 'firefox',
      executablePath,
      headless: true,
      // Its start's limit (puppeteer's default is 30 s): about 7 s on 2 idle cores, more when busy.
      timeout: 90_000,
      // Firefox's defaults: it has no clipboard permissions to grant, and needs none here (writeText
      // after a key press, which BiDi input makes a real user activation; readText of what the same
      // origin wrote, which Firefox answers without its "Paste" pop-up).
      extraPrefsFirefox: prefs,
    },
  });
  launcher.name = name;
  return launcher;
}

const WEBDRIVER_KEYS = {
  Cancel: '\uE001',
  Help: '\uE002',
  Backspace: '\uE003',
  Tab: '\uE004',
  Clear: '\uE005',
  Enter: '\uE007',
  NumpadEnter: '\uE007',
  Shift: '\uE008',
  ShiftLeft: '\uE008',
  ShiftRight: '\uE050',
  Control: '\uE009',
  ControlLeft: '\uE009',
  ControlRight: '\uE051',
  Alt: '\uE00A',
  AltLeft: '\uE00A',
  AltRight: '\uE052',
  Pause: '\uE00B',
  Escape: '\uE00C',
  Space: ' ',
  ' ': ' ',
  PageUp: '\uE00E',
  PageDown: '\uE00F',
  End: '\uE010',
  Home: '\uE011',
  ArrowLeft: '\uE012',
  ArrowUp: '\uE013',
  ArrowRight: '\uE014',
  ArrowDown: '\uE015',
  Insert: '\uE016',
  Delete: '\uE017',
  Meta: '\uE03D',
  MetaLeft: '\uE03D',
  MetaRight: '\uE053',
  F1: '\uE031',
  F2: '\uE032',
  F3: '\uE033',
  F4: '\uE034',
  F5: '\uE035',
  F6: '\uE036',
  F7: '\uE037',
  F8: '\uE038',
  F9: '\uE039',
  F10: '\uE03A',
  F11: '\uE03B',
  F12: '\uE03C',
};

/** A puppeteer key name ('Enter', 'Shift', 'KeyA', 'Digit1', 'a') as a WebDriver key value. */
export function webdriverKey(key) {
  if (key in WEBDRIVER_KEYS) return WEBDRIVER_KEYS[key];
  if ([...key].length === 1) return key;
  const letter = /^Key([A-Z])$/.exec(key);
  if (letter) return letter[1].toLowerCase();
  const digit = /^(?:Digit|Numpad)(\d)$/.exec(key);
  if (digit) return digit[1];
  throw new Error(`WebKit launcher: no WebDriver key for "${key}"`);
}

/**
 * WebKitGTK for web-test-runner: one MiniBrowser (one WebDriver session) for the whole run, navigated
 * to each test file's page in turn; the page reports to web-test-runner over its own websocket.
 *
 * `type` is 'puppeteer' and `getPage()` answers a small puppeteer-shaped page over WebDriver, because
 * @web/test-runner-commands dispatches on `type` and has no setViewport, nor key down/up, for
 * 'webdriver' launchers: this way sendKeys, setViewport, sendMouse and the dev-stack plugin's
 * grant-clipboard reach WebKit unchanged. Anything else a plugin asks of the page throws, naming it.
 */
export class WebKitLauncher {
  name = 'WebKit';
  type = 'puppeteer';
  concurrency = 1;

  #options;
  /** @type {import('./webkit-driver.mjs').WebKitSession | null} */
  #session = null;
  #starting = null;
  #active = new Map();
  #pages = new Map();
  #warned = new Set();

  /**
   * @param {{ binary?: string, args?: string[], clipboard?: boolean, startTimeoutMs?: number }} [options]
   *   clipboard (default true): MiniBrowser's `--javascript-can-access-clipboard=true`, the one switch
   *   WebKitGTK has for what Chromium grants as clipboard-read/clipboard-write (WebKitWebDriver has no
   *   permissions command); without it navigator.clipboard.readText() always rejects.
   *   startTimeoutMs (default 60 s): the limit of each step of the start (display, driver, browser).
   */
  constructor(options = {}) {
    this.#options = { args: [], clipboard: true, startTimeoutMs: 60_000, ...options };
  }

  async initialize() {}

  async startSession(sessionId, url) {
    if (this.#active.size > 0) throw new Error('WebKit launcher runs one test page at a time (concurrency 1)');
    await this.#ensureBrowser();
    this.#active.set(sessionId, url);
    try {
      await this.#setViewport({ width: 800, height: 600 });
      await this.#navigate(url);
    } catch (error) {
      // A browser that no longer answers is replaced for the next test file.
      this.#active.delete(sessionId);
      await this.stop();
      throw error;
    }
  }

  isActive(sessionId) {
    return this.#active.has(sessionId);
  }

  async getBrowserUrl(sessionId) {
    if (!this.#active.has(sessionId)) return undefined;
    try {
      return await this.#command('GET', '/url');
    } catch {
      return this.#active.get(sessionId);
    }
  }

  async stopSession(sessionId) {
    if (!this.#active.has(sessionId)) throw new Error(`No page for session ${sessionId}`);
    try {
      // Releases keys and buttons a test left down, then stops the page's code (timers, streams).
      await this.#command('DELETE', '/actions').catch(() => {});
      await this.#navigate('about:blank');
    } finally {
      this.#active.delete(sessionId);
      this.#pages.delete(sessionId);
    }
    return {};
  }

  startDebugSession() {
    throw new Error('The WebKit launcher has no debug mode: run MiniBrowser yourself to debug.');
  }

  getPage(sessionId) {
    if (!this.#active.has(sessionId)) throw new Error(`Could not find a page for session ${sessionId}`);
    let page = this.#pages.get(sessionId);
    if (!page) {
      page = this.#pageFor(sessionId);
      this.#pages.set(sessionId, page);
    }
    return page;
  }

  /** Closes the browser and stops its driver and display (web-test-runner calls it once at the end). */
  async stop() {
    const session = this.#session;
    this.#session = null;
    this.#starting = null;
    await session?.close();
  }

  async #ensureBrowser() {
    if (this.#session) return;
    const { binary, args, clipboard, startTimeoutMs } = this.#options;
    this.#starting ??= startWebKit({
      binary,
      args: [...(clipboard ? ['--javascript-can-access-clipboard=true'] : []), ...args],
      // The navigation answers at once: the test page reports its own progress to web-test-runner.
      capabilities: { pageLoadStrategy: 'none' },
      startTimeoutMs,
    }).finally(() => (this.#starting = null));
    this.#session = await this.#starting;
  }

  async #command(method, path, body) {
    if (!this.#session) throw new Error('WebKit launcher: no browser session');
    // The previous test page may still be unloading when the next file starts: WebKitWebDriver then
    // answers `no such frame` ("Callback was not called before the unload event"). The page is
    // gone a moment later, so the command is asked again, a few times, before it counts.
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.#session.command(method, path, body);
      } catch (error) {
        if (attempt >= 5 || error?.error !== 'no such frame' || path === '/url') throw error;
        await new Promise((resolve) => setTimeout(resolve, 200 * attempt));
      }
    }
  }

  #navigate(url) {
    return this.#command('POST', '/url', { url });
  }

  #execute(script, args = []) {
    return this.#command('POST', '/execute/sync', { script, args });
  }

  #actions(actions) {
    return this.#command('POST', '/actions', { actions });
  }

  /** Sizes the window so that the page's viewport is width x height (as near as the window allows). */
  async #setViewport({ width, height }) {
    const inner = () => this.#execute('return [window.innerWidth, window.innerHeight]');
    const rect = await this.#command('GET', '/window/rect');
    const [innerWidth, innerHeight] = await inner();
    await this.#command('POST', '/window/rect', { width: width + (rect.width - innerWidth), height: height + (rect.height - innerHeight) });
    const [gotWidth, gotHeight] = await inner();
    const key = `${width}x${height}`;
    if ((gotWidth !== width || gotHeight !== height) && !this.#warned.has(key)) {
      this.#warned.add(key);
      console.warn(`WebKit launcher: asked for a ${key} viewport, MiniBrowser's window gives ${gotWidth}x${gotHeight}`);
    }
  }

  #pageFor(sessionId) {
    const key = (type) => (value) => this.#actions([{ type: 'key', id: 'keyboard', actions: [{ type, value: webdriverKey(value) }] }]);
    const pointer = (actions) => this.#actions([{ type: 'pointer', id: 'mouse', parameters: { pointerType: 'mouse' }, actions }]);
    const BUTTONS = { left: 0, middle: 1, right: 2 };
    const keyboard = {
      down: key('keyDown'),
      up: key('keyUp'),
      press: (value) => {
        const k = webdriverKey(value);
        return this.#actions([
          {
            type: 'key',
            id: 'keyboard',
            actions: [
              { type: 'keyDown', value: k },
              { type: 'keyUp', value: k },
            ],
          },
        ]);
      },
      type: (text) =>
        this.#actions([
          {
            type: 'key',
            id: 'keyboard',
            actions: [...text].flatMap((c) => [
              { type: 'keyDown', value: c },
              { type: 'keyUp', value: c },
            ]),
          },
        ]),
    };
    const mouse = {
      move: (x, y) => pointer([{ type: 'pointerMove', origin: 'viewport', x: Math.round(x), y: Math.round(y), duration: 0 }]),
      down: ({ button = 'left' } = {}) => pointer([{ type: 'pointerDown', button: BUTTONS[button] ?? 0 }]),
      up: ({ button = 'left' } = {}) => pointer([{ type: 'pointerUp', button: BUTTONS[button] ?? 0 }]),
    };
    const clipboardNames = new Set(['clipboard-read', 'clipboard-write', 'clipboard-sanitized-write']);
    const context = {
      overridePermissions: async (_origin, permissions) => {
        const other = permissions.filter((name) => !clipboardNames.has(name));
        if (other.length) throw new Error(`WebKit launcher cannot grant ${other.join(', ')}: WebKitWebDriver has no permissions command`);
        if (!this.#options.clipboard) throw new Error('WebKit launcher: started without clipboard access (clipboard: false)');
        // Granted at launch (--javascript-can-access-clipboard=true), for every origin.
      },
    };
    const page = {
      keyboard,
      mouse,
      url: () => this.#active.get(sessionId),
      browserContext: () => context,
      setViewport: (viewport) => this.#setViewport(viewport),
      evaluate: (fn, ...args) => this.#execute(`return (${fn.toString()})(...arguments)`, args),
      screenshot: async () => Buffer.from(await this.#command('GET', '/screenshot'), 'base64'),
      isClosed: () => !this.#active.has(sessionId),
    };
    return new Proxy(page, {
      get(target, prop) {
        if (typeof prop === 'symbol' || prop === 'then' || prop in target) return target[prop];
        throw new Error(`The WebKit launcher's page has no "${prop}" (a puppeteer Page method a plugin asked for)`);
      },
    });
  }
}

export function webkitLauncher(options) {
  return new WebKitLauncher(options);
}

/** A launcher for each engine named, in that order. */
export function launchersFor(engines) {
  const launchers = {
    chromium: () => [chromiumLauncher()],
    // One launcher per Firefox found (find-browsers.mjs): named with its major version when there are several.
    firefox: () => {
      const firefoxes = findFirefoxes();
      return firefoxes.map(({ path, version }) =>
        firefoxLauncher({ executablePath: path, name: firefoxes.length > 1 ? `Firefox ${version.split('.')[0]}` : 'Firefox' }),
      );
    },
    webkit: () => [webkitLauncher()],
  };
  return engines.flatMap((engine) => launchers[engine]());
}

/**
 * A reporter line per engine once the run ends: files, tests passed/failed/skipped, and the engine's
 * wall time from its first page opening (browser start included) to its last page closing.
 */
export function engineSummaryReporter(launchers) {
  const times = new Map();
  for (const launcher of launchers) {
    const entry = { first: 0, last: 0 };
    times.set(launcher, entry);
    const start = launcher.startSession.bind(launcher);
    const stop = launcher.stopSession.bind(launcher);
    launcher.startSession = (...args) => {
      entry.first ||= Date.now();
      return start(...args);
    };
    launcher.stopSession = async (...args) => {
      try {
        return await stop(...args);
      } finally {
        entry.last = Date.now();
      }
    };
  }
  const count = (suite, into) => {
    if (!suite) return into;
    for (const test of suite.tests) into[test.skipped ? 'skipped' : test.passed ? 'passed' : 'failed']++;
    for (const child of suite.suites) count(child, into);
    return into;
  };
  return {
    onTestRunFinished({ sessions }) {
      const lines = ['', 'Per engine:'];
      for (const launcher of launchers) {
        const mine = sessions.filter((session) => session.browser === launcher);
        const totals = { passed: 0, failed: 0, skipped: 0 };
        for (const session of mine) count(session.testResults, totals);
        const broken = mine.filter((session) => !session.passed && session.errors?.length).length;
        const { first, last } = times.get(launcher);
        const seconds = first && last ? ((last - first) / 1000).toFixed(1) : '-';
        lines.push(
          `  ${launcher.name.padEnd(Math.max(9, ...launchers.map((l) => l.name.length)))} ${mine.length} files  ${totals.passed} passed  ${totals.failed} failed  ${totals.skipped} skipped` +
            `${broken ? `  ${broken} files with errors outside tests` : ''}  ${seconds} s`,
        );
      }
      console.log(lines.join('\n'));
    },
  };
}
