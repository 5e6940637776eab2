/**
 * The first payment of a new database across two instances (test/support/first-payment.ts),
 * BENCH_RUNS times (default 30), each on a fresh database: a checkout at A, its payment issued at B
 * (which verifies the status numbering), the customer pays at once, the partner's notification lands
 * at A. Prints each run's times to B's stream and to the merchant, and how many runs had both within
 * 2 s. `npm run bench:first-payment`.
 */
import { startSandbox } from '../server/dev-stack.ts';
import { firstPayment } from '../test/support/first-payment.ts';
import { startPostgres } from '../test/support/postgres.ts';

const runs = Number(process.env.BENCH_RUNS ?? 30);
const [postgres, sandbox] = await Promise.all([startPostgres(), startSandbox()]);
let within = 0;
const fmt = (ms: number | null) => (ms === null ? 'never' : `${Math.round(ms)} ms`);
try {
  for (let run = 1; run <= runs; run++) {
    const times = await firstPayment(sandbox, await postgres.createDatabase());
    const ok = times.streamMs !== null && times.streamMs < 2000 && times.merchantMs !== null && times.merchantMs < 2000;
    if (ok) within++;
    console.log(
      `run ${String(run).padStart(2)}: stream at B ${fmt(times.streamMs).padStart(8)}, merchant ${fmt(times.merchantMs).padStart(8)}${ok ? '' : '  LATE'}`,
    );
  }
  console.log(`${within} of ${runs} first payments reached the stream and the merchant within 2 s`);
} finally {
  await sandbox.close();
  await postgres.stop();
}
