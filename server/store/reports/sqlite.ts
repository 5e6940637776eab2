/** The accounting export's pages on SQLite: each an index range of (created_at, key), no sort. */
import type { PaymentRow, PayoutRow } from '../rows.ts';
import type { SqliteContext } from '../sqlite/context.ts';
import { reportStatements, toReportCheckout, toReportPayment, toReportPayout, type CheckoutPageRow } from './sql.ts';
import type { ReportStore } from './types.ts';

export function sqliteReports({ db }: SqliteContext): ReportStore {
  const text = reportStatements((n) => `?${n}`);
  const sql = { checkouts: db.prepare(text.checkouts), payments: db.prepare(text.payments), payouts: db.prepare(text.payouts) };
  return {
    async checkouts(from, to, cursor, limit) {
      return (sql.checkouts.all(from, to, cursor?.createdAt ?? 0, cursor?.key ?? null, limit) as CheckoutPageRow[]).map(toReportCheckout);
    },
    async payments(from, to, cursor, limit) {
      return (sql.payments.all(from, to, cursor?.createdAt ?? 0, cursor?.key ?? null, limit) as (PaymentRow & { order_id: string | null })[]).map(
        toReportPayment,
      );
    },
    async payouts(from, to, cursor, limit) {
      const after = cursor === null ? null : Number(cursor.key);
      return (sql.payouts.all(from, to, cursor?.createdAt ?? 0, after, limit) as (PayoutRow & { order_id: string | null })[]).map(toReportPayout);
    },
  };
}
