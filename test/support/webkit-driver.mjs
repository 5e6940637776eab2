/**
 * WebKit for the tests: WebKitGTK's MiniBrowser (the engine of Safari, not Safari itself) driven
 * through WebKitWebDriver (W3C WebDriver classic over HTTP) on an Xvfb display of its own, all from
 * Debian's packages (webkit2gtk-driver, xvfb). Used by the browser tests' WebKit launcher
 * (engines.mjs) and by the end-to-end journeys' page (webdriver-page.ts).
 *
 * `startWebKit()` starts Xvfb on the first free display and the driver on a free port, each in a
 * process group of its own, and opens one browser session. `close()` ends the session and stops both
 * groups (and with the driver's group the browser and its web processes). Whatever is still running
 * when Node ends is killed then: at exit, and on SIGINT, SIGTERM and SIGHUP.
 */
import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { ENGINE_HINTS, findMiniBrowser, onPath } from './find-browsers.mjs';

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** A port free now; whoever takes it a moment later may lose a race, which callers retry. */
export const freePort = () =>
  new Promise((resolve, reject) => {
    const server = createServer();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });

// ---- Process groups, and their end whatever happens ----------------------------------------------

const liveGroups = new Set();
let hooksInstalled = false;

function killLiveGroups() {
  for (const child of liveGroups) {
    try {
      process.kill(-child.pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
  liveGroups.clear();
}

/**
 * Kills the groups, then lets the signal do what it would have done: Node ends as it would have,
 * unless something else listens for it (web-test-runner stops itself on SIGINT and exits).
 */
function onSignal(signal) {
  killLiveGroups();
  for (const name of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.removeListener(name, onSignal);
  hooksInstalled = false;
  process.removeListener('exit', killLiveGroups);
  if (process.listenerCount(signal) === 0) process.kill(process.pid, signal);
}

function track(child) {
  liveGroups.add(child);
  void child.exited.then(() => liveGroups.delete(child));
  if (hooksInstalled) return;
  hooksInstalled = true;
  process.once('exit', killLiveGroups);
  for (const name of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(name, onSignal);
}

/** A child in its own process group, so that stopping it stops whatever it started (the browser). */
function startGroup(command, args, options) {
  const child = spawn(command, args, { ...options, detached: true });
  child.ended = false;
  child.exited = new Promise((resolve) => {
    child.once('exit', (code, signal) => resolve({ code, signal }));
    child.once('error', (error) => resolve({ code: null, signal: null, error }));
  }).finally(() => (child.ended = true));
  if (child.pid !== undefined) track(child);
  return child;
}

/** SIGTERM to the group, SIGKILL after `graceMs`; SIGKILL again for anything it left in the group. */
async function stopGroup(child, graceMs = 3000) {
  if (!child || child.pid === undefined) return;
  const signal = (name) => {
    try {
      process.kill(-child.pid, name);
    } catch {
      // already gone
    }
  };
  if (!child.ended) {
    signal('SIGTERM');
    const exited = await Promise.race([child.exited.then(() => true), sleep(graceMs).then(() => false)]);
    if (!exited) {
      signal('SIGKILL');
      await child.exited;
    }
  }
  // The leader may go first and leave a web process behind in its group.
  signal('SIGKILL');
  liveGroups.delete(child);
}

/** Xvfb on the first free display (-displayfd), resolved when it accepts clients. */
async function startXvfb(timeoutMs) {
  const xvfb = startGroup('Xvfb', ['-displayfd', '3', '-screen', '0', '1920x1080x24', '-nolisten', 'tcp', '-nolisten', 'unix-abstract'], {
    stdio: ['ignore', 'ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  xvfb.stderr.on('data', (chunk) => (stderr = (stderr + chunk).slice(-2000)));
  let timer;
  try {
    const display = await new Promise((resolve, reject) => {
      let out = '';
      xvfb.stdio[3]?.on('data', (chunk) => {
        out += chunk;
        if (out.includes('\n')) resolve(`:${out.trim()}`);
      });
      void xvfb.exited.then(({ code, error }) =>
        reject(new Error(`Xvfb ${error ? `did not start: ${error.message}` : `exited with ${code}`} ${stderr.trim()}`)),
      );
      timer = setTimeout(() => reject(new Error(`Xvfb gave no display within ${timeoutMs} ms ${stderr.trim()}`)), timeoutMs);
    });
    return { xvfb, display };
  } catch (error) {
    await stopGroup(xvfb);
    throw error;
  } finally {
    clearTimeout(timer);
  }
}

// ---- The WebDriver session ------------------------------------------------------------------------

/** Thrown for a WebDriver error answer; `error` is its code ("no such element", "javascript error"...). */
export class WebDriverError extends Error {
  constructor(message, error) {
    super(message);
    this.name = 'WebDriverError';
    this.error = error;
  }
}

/** One WebKitWebDriver on its own display, with one browser session. */
export class WebKitSession {
  #xvfb;
  #driver;
  #base;
  #log;
  #id = null;
  #closing = null;
  /** Each command's limit: far above any step's need, but a hung browser fails the test, not the run. */
  commandTimeoutMs = 60_000;

  constructor(xvfb, driver, base, log) {
    this.#xvfb = xvfb;
    this.#driver = driver;
    this.#base = base;
    this.#log = log;
  }

  /** The driver's last output, for error messages. */
  get log() {
    return this.#log().trim();
  }

  /** A request to the driver (not scoped to the session); answers the reply's `value`. */
  async request(method, path, body, timeoutMs = this.commandTimeoutMs) {
    let res;
    try {
      res = await fetch(this.#base + path, {
        method,
        headers: body === undefined ? {} : { 'content-type': 'application/json; charset=utf-8' },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(timeoutMs),
      });
    } catch (error) {
      const why = error.name === 'TimeoutError' ? `no answer within ${timeoutMs} ms` : (error.cause?.message ?? error.message);
      throw new Error(`WebKitWebDriver ${method} ${path}: ${why}`, { cause: error });
    }
    const text = await res.text();
    let json;
    try {
      json = JSON.parse(text);
    } catch {
      json = { value: text };
    }
    if (!res.ok) {
      const value = json?.value ?? {};
      throw new WebDriverError(`WebKitWebDriver ${method} ${path}: ${res.status} ${value.error ?? ''} ${value.message ?? text}`.trim(), value.error);
    }
    return json?.value;
  }

  /** A command of the session: `path` is what follows /session/{id}. */
  command(method, path, body) {
    if (!this.#id) return Promise.reject(new Error('WebKit: the browser session is closed'));
    return this.request(method, `/session/${this.#id}${path}`, body);
  }

  /** What the driver said of the browser when the session opened (browserName, browserVersion...). */
  capabilities = {};

  async open(capabilities, timeoutMs) {
    const created = await this.request('POST', '/session', { capabilities: { alwaysMatch: capabilities } }, timeoutMs);
    this.#id = created.sessionId;
    this.capabilities = created.capabilities ?? {};
  }

  get isOpen() {
    return this.#id !== null;
  }

  /**
   * Runs `script` (a function body; `arguments` holds `args`) and answers what it returns, a promise
   * awaited. Errors thrown in the page come back with their message.
   */
  async execute(script, args = []) {
    const wrapped = `const done = arguments[arguments.length - 1];
      const args = Array.prototype.slice.call(arguments, 0, -1);
      Promise.resolve()
        .then(() => (function () { ${script} }).apply(null, args))
        .then((value) => done({ value: value === undefined ? null : value }), (error) => done({ error: String(error) }));`;
    const answer = await this.command('POST', '/execute/async', { script: wrapped, args });
    if (answer && 'error' in answer) throw new Error(`in WebKit's page: ${answer.error}`);
    return answer?.value ?? null;
  }

  /** Ends the session (the browser closes) and stops the driver and the display; safe to call twice. */
  close() {
    this.#closing ??= (async () => {
      const id = this.#id;
      this.#id = null;
      if (id) await this.request('DELETE', `/session/${id}`, undefined, 10_000).catch(() => {});
      await stopGroup(this.#driver);
      await stopGroup(this.#xvfb);
    })();
    return this.#closing;
  }
}

/**
 * Starts WebKit: display, driver, browser session. Each step is bounded by `startTimeoutMs` (a cold
 * start on 2 busy cores takes a few seconds); whatever started is stopped if a later step fails.
 *
 * @param {{ binary?: string | null, args?: string[], capabilities?: object, startTimeoutMs?: number }} [options]
 *   `args` go to MiniBrowser after `--automation`; `capabilities` are added to the session's.
 */
export async function startWebKit({ binary = findMiniBrowser(), args = [], capabilities = {}, startTimeoutMs = 60_000 } = {}) {
  if (!binary || !onPath('WebKitWebDriver') || !onPath('Xvfb')) throw new Error(ENGINE_HINTS.webkit);
  const { xvfb, display } = await startXvfb(startTimeoutMs);
  let session;
  try {
    // The port is free when picked and taken a moment later by the driver; a lost race is retried.
    for (let attempt = 1; !session; attempt++) {
      const port = await freePort();
      const driver = startGroup(onPath('WebKitWebDriver'), [`--port=${port}`, '--host=local'], {
        stdio: ['ignore', 'pipe', 'pipe'],
        // NO_AT_BRIDGE: no accessibility bus on this display (GTK would wait for one).
        env: { ...process.env, DISPLAY: display, NO_AT_BRIDGE: '1' },
      });
      let log = '';
      const append = (chunk) => (log = (log + chunk).slice(-4000));
      driver.stdout?.on('data', append);
      driver.stderr?.on('data', append);
      const candidate = new WebKitSession(xvfb, driver, `http://127.0.0.1:${port}`, () => log);
      if (await driverReady(candidate, driver, startTimeoutMs)) {
        session = candidate;
        break;
      }
      await stopGroup(driver);
      if (attempt === 3) throw new Error(`WebKitWebDriver did not start: ${log.trim()}`);
    }
    await session.open(
      {
        browserName: 'MiniBrowser',
        'webkitgtk:browserOptions': { binary, args: ['--automation', ...args] },
        ...capabilities,
      },
      startTimeoutMs,
    );
    return session;
  } catch (error) {
    if (session) await session.close();
    else await stopGroup(xvfb);
    throw error;
  }
}

async function driverReady(session, driver, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (driver.ended) return false;
    try {
      const status = await session.request('GET', '/status', undefined, 5000);
      if (status?.ready !== false) return true;
    } catch {
      // not listening yet
    }
    await sleep(50);
  }
  return false;
}
