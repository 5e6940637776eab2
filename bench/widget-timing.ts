/**
 * `npx tsx bench/widget-timing.ts`: the widget's timings against the dev stack on loopback, in
 * headless Chromium (issue 7's budgets; figures to read, never asserted):
 *   - element connected -> QR painted (Performance marks in the element), p50 under 100 ms;
 *   - sandbox marks the payment paid -> "paid" screen, with the stream (p50 under 200 ms) and with
 *     polling (within one polling interval, 2 s in the first minute).
 * Builds dist/ first. Drives Chromium with puppeteer-core (already installed with the test runner).
 */
import { build } from 'vite';
import puppeteer from 'puppeteer-core';
import { CHROME_ARGS, findChrome } from '../test/support/find-chrome.mjs';
import { startDevStack } from '../server/dev-stack.ts';
import { mountWidgetPages } from '../test/support/widget-page.ts';

const RUNS = Number(process.env.RUNS ?? 15);

await build({ logLevel: 'warn' });
const stack = await startDevStack({ mount: mountWidgetPages });
const browser = await puppeteer.launch({
  executablePath: findChrome() ?? '/usr/bin/chromium',
  headless: true,
  args: CHROME_ARGS,
});

const p50 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const fmt = (xs: number[]) => `p50 ${p50(xs).toFixed(0)} ms  (min ${Math.min(...xs).toFixed(0)}, max ${Math.max(...xs).toFixed(0)}, n=${xs.length})`;

/**
 * connected -> QR painted, cut at the element's marks (src/pix-checkout.ts): each phase runs from the
 * previous mark to its own. `script` is before connected: navigation start -> element connected
 * (HTML, the bundle's fetch, parse and evaluation, the element's upgrade).
 */
const PHASES = [
  ['script', 'navigation start -> connected'],
  ['request', 'connected -> request sent'],
  ['rendered', 'request -> first render (loading)'],
  ['payment', 'first render -> payment answered'],
  ['check', 'answered -> BR Code check starts'],
  ['checked', 'BR Code check'],
  ['encode', 'checked -> QR encoding starts'],
  ['encoded', 'QR encoding'],
  ['qr', 'encoded -> QR painted (next frame)'],
] as const;
type Phase = (typeof PHASES)[number][0];

async function run(stream: boolean): Promise<{ qr: number; paid: number; phases: Record<Phase, number> }> {
  const page = await browser.newPage();
  try {
    await page.goto(`${stack.url}/bench${stream ? '' : '?stream=0'}`);
    await page.waitForFunction(() => performance.getEntriesByName('pix-checkout:qr').length > 0, { timeout: 10_000 });
    const qr = await page.evaluate(
      () => performance.getEntriesByName('pix-checkout:qr')[0]!.startTime - performance.getEntriesByName('pix-checkout:connected')[0]!.startTime,
    );
    // The marks' times; computed here, not in the page (tsx's helpers are not defined there).
    const marks = await page.evaluate(() => performance.getEntriesByType('mark').map((m) => [m.name, m.startTime] as const));
    const at = (name: string) => marks.find(([n]) => n === `pix-checkout:${name}`)?.[1] ?? NaN;
    const phases = { script: at('connected') } as Record<Phase, number>;
    let previous = at('connected');
    for (const [name] of PHASES.slice(1)) {
      phases[name] = at(name) - previous;
      previous = at(name);
    }
    const reference = await page.evaluate(() => (window as unknown as { reference: string }).reference);
    // Let the stream (or the polling) settle into its steady state, as a customer's page would be.
    await new Promise((resolve) => setTimeout(resolve, stream ? 300 : 1000 + Math.random() * 1000));
    const paidAt = Date.now();
    await fetch(`${stack.url}/sandbox/_sandbox/payments/${encodeURIComponent(reference)}/pay`, { method: 'POST' });
    await page.waitForFunction(() => performance.getEntriesByName('pix-checkout:paid').length > 0, { timeout: 15_000 });
    const shown = await page.evaluate(() => performance.timeOrigin + performance.getEntriesByName('pix-checkout:paid')[0]!.startTime);
    return { qr, paid: shown - paidAt, phases };
  } finally {
    await page.close();
  }
}

try {
  const results: Record<string, { qr: number[]; paid: number[] }> = { stream: { qr: [], paid: [] }, polling: { qr: [], paid: [] } };
  const phases = Object.fromEntries(PHASES.map(([name]) => [name, [] as number[]])) as Record<Phase, number[]>;
  for (let i = 0; i < RUNS; i++) {
    for (const mode of ['stream', 'polling'] as const) {
      const r = await run(mode === 'stream');
      results[mode]!.qr.push(r.qr);
      results[mode]!.paid.push(r.paid);
      for (const [name] of PHASES) phases[name].push(r.phases[name]);
    }
  }
  const qr = [...results.stream!.qr, ...results.polling!.qr];
  console.log(`<pix-checkout> timings, headless Chromium, dev stack on loopback (${RUNS} runs per mode)
  connected -> QR painted      ${fmt(qr)}   goal p50 <= 80 ms
  paid -> "paid" (stream)      ${fmt(results.stream!.paid)}   budget p50 < 200 ms
  paid -> "paid" (polling)     ${fmt(results.polling!.paid)}   budget: within one interval (2000 ms)
where connected -> QR painted goes (per phase, both modes; "script" comes before connected):
${PHASES.map(([name, label]) => `  ${label.padEnd(38)} ${fmt(phases[name])}`).join('\n')}`);
} finally {
  await browser.close();
  await stack.close();
}
