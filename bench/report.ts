/**
 * The accounting export of a month of 100,000 payments (BENCH_PAYMENTS), 90% of them paid, 10% of
 * them checkouts' (with their checkouts), from a real SQLite store file, through the proxy's route
 * (GET /api/reports, CSV and JSON) with the response read as a client reads it and thrown away.
 * Prints the time and the peak of memory (RSS and heap, sampled every 20 ms) against what the process
 * held before the export, and (run with --expose-gc, as `npm run bench:report` does) the heap still
 * retained after a full collection every 10 chunks: the export is streamed a page at a time, so what
 * it retains must not grow with the month (BENCH_PAYMENTS=10000 against 100000 shows it).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createApp } from '../server/app.ts';
import { createLogger } from '../server/log.ts';
import { PARTNER_STATUS } from '../server/partner/wire.ts';
import { openSqliteStore } from '../server/store/sqlite/sqlite-store.ts';
import { checkoutRecord } from '../test/support/records.ts';
import type { PartnerClient } from '../server/partner/client.ts';

const PAYMENTS = Number(process.env.BENCH_PAYMENTS ?? 100_000);
const MONTH_START = Date.UTC(2030, 0, 1, 3); // 2030-01-01 00:00 in São Paulo
const MONTH_MS = 31 * 86_400_000;
const KEY = 'bench-api-key-0123456789abcdef';

const dir = mkdtempSync(join(tmpdir(), 'pix-bench-report-'));
const store = openSqliteStore({ dataDir: dir });
try {
  const filling = performance.now();
  for (let i = 0; i < PAYMENTS; i++) {
    const at = MONTH_START + Math.floor((i / PAYMENTS) * MONTH_MS);
    const checkoutId = i % 10 === 0 ? `co_${String(i).padStart(24, '0')}` : null;
    if (checkoutId) {
      await store.checkouts.create(
        checkoutRecord({ id: checkoutId, orderId: `order-${i}`, valueCents: 1000 + (i % 5000), description: null, name: null, document: null, createdAt: at }),
      );
    }
    const paid = i % 10 !== 9;
    const payment = {
      reference: `ref-${String(i).padStart(8, '0')}`,
      checkoutId,
      valueCents: 1000 + (i % 5000),
      description: null,
      partnerStatus: paid ? PARTNER_STATUS.approved : PARTNER_STATUS.pending,
      brcode: 'x',
      qrCodeUrl: 'x',
      checkoutUrl: 'x',
      createdAt: at,
      expiresAt: at + 3_600_000,
      transactionId: `tx-${i}`,
      updatedAt: at + 60_000,
      final: paid,
    };
    if (checkoutId) await store.checkouts.attachPayment(checkoutId, payment, 0, null);
    else await store.payments.insert(payment);
  }
  console.log(
    `store: ${PAYMENTS.toLocaleString('en')} payments, ${Math.ceil(PAYMENTS / 10).toLocaleString('en')} checkouts, filled in ${((performance.now() - filling) / 1000).toFixed(1)} s`,
  );

  const partner = {} as PartnerClient; // never called: the export reads the store only
  const app = createApp({ partner, store, apiKey: KEY, logger: createLogger({ level: 'silent' }) });

  for (const format of ['csv', 'json'] as const) {
    globalThis.gc?.();
    const before = process.memoryUsage();
    let peakRss = before.rss;
    let peakHeap = before.heapUsed;
    const sampler = setInterval(() => {
      const m = process.memoryUsage();
      peakRss = Math.max(peakRss, m.rss);
      peakHeap = Math.max(peakHeap, m.heapUsed);
    }, 20);
    const started = performance.now();
    const res = await app.request(`/api/reports?from=2030-01-01&to=2030-01-31&format=${format}`, { headers: { authorization: `Bearer ${KEY}` } });
    if (res.status !== 200) throw new Error(`report answered ${res.status}: ${await res.text()}`);
    let bytes = 0;
    let lines = 0;
    let chunks = 0;
    let retained = 0;
    const reader = res.body!.getReader();
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      bytes += value.byteLength;
      for (const b of value) if (b === 10) lines++;
      if (globalThis.gc && ++chunks % 10 === 0) {
        globalThis.gc();
        retained = Math.max(retained, process.memoryUsage().heapUsed - before.heapUsed);
      }
      const m = process.memoryUsage();
      peakRss = Math.max(peakRss, m.rss);
      peakHeap = Math.max(peakHeap, m.heapUsed);
    }
    const seconds = (performance.now() - started) / 1000;
    clearInterval(sampler);
    const mb = (n: number) => `${(n / 1048576).toFixed(1)} MB`;
    console.log(
      `${format}: ${PAYMENTS.toLocaleString('en')} payments in ${seconds.toFixed(2)} s (${Math.round(PAYMENTS / seconds).toLocaleString('en')} rows/s), ` +
        `${mb(bytes)} written, ${lines.toLocaleString('en')} lines; ` +
        `peak RSS ${mb(peakRss)} (+${mb(peakRss - before.rss)} over ${mb(before.rss)} before), peak heap ${mb(peakHeap)} (+${mb(peakHeap - before.heapUsed)})` +
        (globalThis.gc ? `; retained after GC at most +${mb(retained)} (${chunks} chunks)` : ''),
    );
  }
} finally {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
}
