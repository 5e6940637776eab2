/**
 * The part of puppeteer's Page that test/e2e/journey.ts uses, over W3C WebDriver classic, so that
 * the customer's journeys run unchanged in WebKit (webkit-driver.mjs), which puppeteer cannot drive.
 *
 * Clicks are WebDriver's element clicks (scrolled into view, a real pointer on the element's centre,
 * refused when something covers it), as puppeteer's are; scripts run in the page, a returned promise
 * awaited; waits poll every 50 ms until the page's answer is truthy or the timeout passes.
 */
import type { Page } from 'puppeteer-core';
import { startWebKit, type WebKitSession } from './webkit-driver.mjs';

/** How WebDriver names an element reference in JSON. */
const ELEMENT = 'element-6066-11e4-a52e-4f735466cecf';
type ElementRef = Record<typeof ELEMENT, string>;

type PageFunction = (...args: never[]) => unknown;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * A function of ours as a WebDriver script body: called with the script's arguments. `__name` is
 * what esbuild (tsx) wraps named inner functions in; the page has no such helper.
 */
const asScript = (fn: PageFunction) => `const __name = (target) => target; return (${fn.toString()}).apply(null, arguments);`;

export class WebDriverPage {
  readonly #session: WebKitSession;
  #timeoutMs = 30_000;

  constructor(session: WebKitSession) {
    this.#session = session;
  }

  /** WebKit on a display of its own, one window; close() stops it all. */
  static async launch(options?: { startTimeoutMs?: number }): Promise<WebDriverPage> {
    return new WebDriverPage(await startWebKit(options));
  }

  /** "MiniBrowser 2.50.6", as the driver reports the browser. */
  get browserVersion(): string {
    const { browserName = 'WebKit', browserVersion = '' } = this.#session.capabilities;
    return `${browserName} ${browserVersion}`.trim();
  }

  /** This page where journey.ts expects puppeteer's: it calls only what is implemented here. */
  asPuppeteerPage(): Page {
    return this as unknown as Page;
  }

  setDefaultTimeout(ms: number): void {
    this.#timeoutMs = ms;
  }

  /** Sizes the window so that the page's viewport is width x height. */
  async setViewport({ width, height }: { width: number; height: number }): Promise<void> {
    const inner = () => this.#session.execute<[number, number]>('return [window.innerWidth, window.innerHeight];');
    const rect = await this.#session.command<{ width: number; height: number }>('GET', '/window/rect');
    const [innerWidth, innerHeight] = await inner();
    await this.#session.command('POST', '/window/rect', { width: width + rect.width - innerWidth, height: height + rect.height - innerHeight });
  }

  /** Navigates and waits for the load event (the session's page load strategy). */
  async goto(url: string): Promise<null> {
    await this.#session.command('POST', '/url', { url });
    return null;
  }

  evaluate<T>(fn: PageFunction, ...args: unknown[]): Promise<T> {
    return this.#session.execute<T>(asScript(fn), args);
  }

  /** The first element matching `selector`, as a WebDriver reference, or null. */
  async $(selector: string): Promise<ElementRef | null> {
    const found = await this.#session.command<ElementRef[]>('POST', '/elements', { using: 'css selector', value: selector });
    return found[0] ?? null;
  }

  async $eval<T>(selector: string, fn: PageFunction, ...args: unknown[]): Promise<T> {
    const element = await this.$(selector);
    if (!element) throw new Error(`Error: failed to find element matching selector "${selector}"`);
    return this.#session.execute<T>(asScript(fn), [element, ...args]);
  }

  waitForSelector(selector: string, options: { timeout?: number } = {}): Promise<ElementRef> {
    return this.#poll(`selector "${selector}"`, options.timeout, () => this.$(selector));
  }

  waitForFunction<T>(fn: PageFunction, options: { timeout?: number } = {}, ...args: unknown[]): Promise<T> {
    return this.#poll(`function ${fn.toString().slice(0, 80)}`, options.timeout, () => this.evaluate<T>(fn, ...args));
  }

  async click(selector: string): Promise<void> {
    const element = await this.$(selector);
    if (!element) throw new Error(`Error: failed to find element matching selector "${selector}"`);
    await this.#session.command('POST', `/element/${element[ELEMENT]}/click`, {});
  }

  /** Selects the option of `value` in a <select> and tells the page, as puppeteer's select does. */
  async select(selector: string, value: string): Promise<string[]> {
    await this.$eval(
      selector,
      (select: HTMLSelectElement, chosen: string) => {
        select.value = chosen;
        select.dispatchEvent(new Event('input', { bubbles: true }));
        select.dispatchEvent(new Event('change', { bubbles: true }));
      },
      value,
    );
    return [value];
  }

  /** Forgets the current site's cookies (a new customer, as puppeteer's new browser context gives). */
  async deleteCookies(): Promise<void> {
    await this.#session.command('DELETE', '/cookie');
  }

  close(): Promise<void> {
    return this.#session.close();
  }

  async #poll<T>(what: string, timeout = this.#timeoutMs, check: () => Promise<T | null | undefined | false>): Promise<T> {
    const deadline = Date.now() + timeout;
    for (;;) {
      const value = await check();
      if (value) return value;
      if (Date.now() > deadline) throw new Error(`TimeoutError: waiting for ${what} failed: timeout ${timeout}ms exceeded`);
      await sleep(50);
    }
  }
}
