/** The accounting export's pages on Postgres: each an index range of (created_at, key), no sort. */
import type { PostgresContext } from '../postgres/context.ts';
import type { PaymentRow, PayoutRow } from '../rows.ts';
import { reportStatements, toReportCheckout, toReportPayment, toReportPayout, type CheckoutPageRow } from './sql.ts';
import type { ReportStore } from './types.ts';

export function postgresReports({ query }: PostgresContext): ReportStore {
  const sql = reportStatements((n) => (n === 3 ? `$3::bigint` : `$${n}`), { text: '::text', bigint: '::bigint' });
  return {
    async checkouts(from, to, cursor, limit) {
      return (await query<CheckoutPageRow>(sql.checkouts, [from, to, cursor?.createdAt ?? 0, cursor?.key ?? null, limit])).rows.map(toReportCheckout);
    },
    async payments(from, to, cursor, limit) {
      return (await query<PaymentRow & { order_id: string | null }>(sql.payments, [from, to, cursor?.createdAt ?? 0, cursor?.key ?? null, limit])).rows.map(
        toReportPayment,
      );
    },
    async payouts(from, to, cursor, limit) {
      return (await query<PayoutRow & { order_id: string | null }>(sql.payouts, [from, to, cursor?.createdAt ?? 0, cursor?.key ?? null, limit])).rows.map(
        toReportPayout,
      );
    },
  };
}
