/**
 * `npx tsx bench/widget-timing.ts`: the widget's timings against the dev stack on loopback, in
 * headless Chromium (docs/performance.md's budgets; figures to read, never asserted):
 *   - element connected -> QR painted (Performance marks in the element), goal p50 <= 80 ms, in
 *     the two flows: a checkout whose payment the merchant's server issued at creation
 *     (`issue_payment`, the page's first call is a store read) and an open-amount page, whose first
 *     call creates the payment at the partner;
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
 * connected -> QR painted, cut at the element's marks (markOnce, src/marks.ts): each phase runs from the
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

type Flow = 'checkout' | 'open';
let orders = 0;

/**
 * One page load. `checkout`: the merchant's server has just created the checkout with
 * `issue_payment` (as the demo shop does when the order is placed), so the page's first call reads
 * the payment from the proxy's store. `open`: an open-amount page, whose first call creates the
 * payment at the partner (a round trip to the sandbox).
 */
async function run(flow: Flow, stream: boolean): Promise<{ qr: number; paid: number; phases: Record<Phase, number> }> {
  const page = await browser.newPage();
  try {
    const query = new URLSearchParams();
    if (!stream) query.set('stream', '0');
    let checkoutReference: string | undefined;
    if (flow === 'checkout') {
      const created = await fetch(`${stack.apiUrl}/checkouts`, {
        method: 'POST',
        headers: { authorization: `Bearer ${stack.apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ value: 12.34, order_id: `bench-${process.pid}-${++orders}`, issue_payment: true }),
      });
      const checkout = (await created.json()) as { checkout_id: string; payment?: { reference: string } };
      if (created.status !== 201 || !checkout.payment) throw new Error(`checkout not created with its payment: ${created.status} ${JSON.stringify(checkout)}`);
      query.set('checkout', checkout.checkout_id);
      checkoutReference = checkout.payment.reference;
    }
    await page.goto(`${stack.url}/bench${query.size ? `?${query}` : ''}`);
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
    const reference = checkoutReference ?? (await page.evaluate(() => (window as unknown as { reference: string }).reference));
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
  const modes = [
    ['checkout', true, 'checkout, issued at creation (stream)'],
    ['open', true, 'open amount, created by the page (stream)'],
    ['open', false, 'open amount, created by the page (polling)'],
  ] as const;
  const results = modes.map(() => ({
    qr: [] as number[],
    paid: [] as number[],
    phases: Object.fromEntries(PHASES.map(([name]) => [name, [] as number[]])) as Record<Phase, number[]>,
  }));
  for (let i = 0; i < RUNS; i++) {
    for (const [m, [flow, stream]] of modes.entries()) {
      const r = await run(flow, stream);
      results[m]!.qr.push(r.qr);
      results[m]!.paid.push(r.paid);
      for (const [name] of PHASES) results[m]!.phases[name].push(r.phases[name]);
    }
  }
  const [checkout, open, polling] = results as [(typeof results)[0], (typeof results)[0], (typeof results)[0]];
  console.log(`<pix-checkout> timings, headless Chromium, dev stack on loopback (${RUNS} runs per mode)
connected -> QR painted (goal p50 <= 80 ms):
  checkout, issued at creation   ${fmt(checkout.qr)}
  open amount, page creates it   ${fmt([...open.qr, ...polling.qr])}
paid -> "paid" shown:
  with the stream                ${fmt([...checkout.paid, ...open.paid])}   budget p50 < 200 ms
  polling                        ${fmt(polling.paid)}   budget: within one interval (2000 ms)`);
  for (const [m, [, , label]] of modes.entries()) {
    if (m === 2) continue;
    const phases = m === 1 ? Object.fromEntries(PHASES.map(([name]) => [name, [...open.phases[name], ...polling.phases[name]]])) : results[m]!.phases;
    console.log(`where connected -> QR painted goes, ${m === 1 ? 'open amount (both modes)' : label} ("script" comes before connected):
${PHASES.map(([name, phaseLabel]) => `  ${phaseLabel.padEnd(38)} ${fmt((phases as Record<Phase, number[]>)[name])}`).join('\n')}`);
  }
} finally {
  await browser.close();
  await stack.close();
}
