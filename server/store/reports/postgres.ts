/** The accounting export's pages on Postgres: each an index range of (created_at, key), no sort. */
import type { PostgresContext } from '../postgres/context.ts';
import type { PaymentRow, PayoutRow } from '../rows.ts';
import { reportStatements, toReportCheckout, toReportPayment, toReportPayout, type CheckoutPageRow } from './sql.ts';
import type { ReportStore } from './types.ts';

export function postgresReports({ query }: PostgresContext): ReportStore {
  const casts = { text: '::text', bigint: '::bigint' };
  const placeholder = (n: number) => (n === 3 ? `$3::bigint` : `$${n}`);
  // The first page has no cursor: its limit is the third parameter.
  const start = reportStatements((n) => (n === 5 ? '$3' : `$${n}`), true, casts);
  const next = reportStatements(placeholder, false, casts);
  return {
    async checkouts(from, to, cursor, limit) {
      return (
        await query<CheckoutPageRow>((cursor ? next : start).checkouts, cursor ? [from, to, cursor.createdAt, cursor.key, limit] : [from, to, limit])
      ).rows.map(toReportCheckout);
    },
    async payments(from, to, cursor, limit) {
      return (
        await query<PaymentRow & { order_id: string | null }>(
          (cursor ? next : start).payments,
          cursor ? [from, to, cursor.createdAt, cursor.key, limit] : [from, to, limit],
        )
      ).rows.map(toReportPayment);
    },
    async payouts(from, to, cursor, limit) {
      return (
        await query<PayoutRow & { order_id: string | null }>(
          (cursor ? next : start).payouts,
          cursor ? [from, to, cursor.createdAt, cursor.key, limit] : [from, to, limit],
        )
      ).rows.map(toReportPayout);
    },
  };
}
