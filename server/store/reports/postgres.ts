/** The accounting export's pages on Postgres: each an index range of (created_at, key), no sort. */
import type pg from 'pg';
import type { PostgresContext } from '../postgres/context.ts';
import type { PaymentRow, PayoutRow } from '../rows.ts';
import { reportStatements, toReportCheckout, toReportPayment, toReportPayout, type CheckoutPageRow } from './sql.ts';
import type { ReportCursor, ReportStore } from './types.ts';

export function postgresReports({ query }: PostgresContext): ReportStore {
  const casts = { text: '::text', bigint: '::bigint' };
  const placeholder = (n: number) => (n === 3 ? `$3::bigint` : `$${n}`);
  // The first page has no cursor: its limit is the third parameter.
  const start = reportStatements((n) => (n === 5 ? '$3' : `$${n}`), true, casts);
  const next = reportStatements(placeholder, false, casts);
  const page = async <Row extends pg.QueryResultRow>(
    table: 'checkouts' | 'payments' | 'payouts',
    from: number,
    to: number,
    cursor: ReportCursor | null,
    limit: number,
  ) => (await query<Row>((cursor ? next : start)[table], cursor ? [from, to, cursor.createdAt, cursor.key, limit] : [from, to, limit])).rows;
  return {
    async checkouts(from, to, cursor, limit) {
      return (await page<CheckoutPageRow>('checkouts', from, to, cursor, limit)).map(toReportCheckout);
    },
    async payments(from, to, cursor, limit) {
      return (await page<PaymentRow & { order_id: string | null }>('payments', from, to, cursor, limit)).map(toReportPayment);
    },
    async payouts(from, to, cursor, limit) {
      return (await page<PayoutRow & { order_id: string | null }>('payouts', from, to, cursor, limit)).map(toReportPayout);
    },
  };
}
