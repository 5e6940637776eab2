/** The accounting export's pages on SQLite: each an index range of (created_at, key), no sort. */
import type { PaymentRow, PayoutRow } from '../rows.ts';
import type { SqliteContext } from '../sqlite/context.ts';
import { reportStatements, toReportCheckout, toReportPayment, toReportPayout, type CheckoutPageRow } from './sql.ts';
import type { ReportStore } from './types.ts';

export function sqliteReports({ db }: SqliteContext): ReportStore {
  const prepare = (first: boolean) => {
    const text = reportStatements((n) => `?${n}`, first);
    return { checkouts: db.prepare(text.checkouts), payments: db.prepare(text.payments), payouts: db.prepare(text.payouts) };
  };
  const start = prepare(true);
  const next = prepare(false);
  return {
    async checkouts(from, to, cursor, limit) {
      return ((cursor ? next : start).checkouts.all(from, to, cursor?.createdAt ?? 0, cursor?.key ?? '', limit) as CheckoutPageRow[]).map(toReportCheckout);
    },
    async payments(from, to, cursor, limit) {
      return (
        (cursor ? next : start).payments.all(from, to, cursor?.createdAt ?? 0, cursor?.key ?? '', limit) as (PaymentRow & { order_id: string | null })[]
      ).map(toReportPayment);
    },
    async payouts(from, to, cursor, limit) {
      return (
        (cursor ? next : start).payouts.all(from, to, cursor?.createdAt ?? 0, cursor === null ? 0 : Number(cursor.key), limit) as (PayoutRow & {
          order_id: string | null;
        })[]
      ).map(toReportPayout);
    },
  };
}
