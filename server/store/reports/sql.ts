/** The accounting export's statements, one text for SQLite (?n) and Postgres ($n): a page of one table, its joins by primary key. */
import type { CheckoutRow, PaymentRow, PayoutRow } from '../rows.ts';
import { toCheckout, toPayment, toPayout } from '../rows.ts';
import type { CurrentPayment } from './types.ts';

type Placeholder = (n: number) => string;

/**
 * Rows of `table` (alias t) created in [p1, p2) after the cursor (p3 time, p4 key), in index order,
 * at most p5; `first`: the first page, no cursor. The cursor is a row value, which both databases
 * read as a range of the (created_at, key) index: each page starts where the last ended.
 */
function page(table: string, key: string, select: string, join: string, p: Placeholder, first: boolean, cast = ''): string {
  const after = first ? `t.created_at >= ${p(1)}` : `(t.created_at, t.${key}) > (${p(3)}, ${p(4)}${cast})`;
  return `SELECT ${select} FROM ${table} t ${join}
    WHERE ${after} AND t.created_at < ${p(2)}${first ? '' : ` AND t.created_at >= ${p(1)}`}
    ORDER BY t.created_at, t.${key} LIMIT ${p(5)}`;
}

export function reportStatements(p: Placeholder, first: boolean, casts: { text: string; bigint: string } = { text: '', bigint: '' }) {
  return {
    checkouts: page(
      'checkouts',
      'id',
      't.*, cp.partner_status AS cp_status, cp.final AS cp_final, cp.expires_at AS cp_expires_at, cp.updated_at AS cp_updated_at',
      'LEFT JOIN payments cp ON cp.reference = t.payment_reference',
      p,
      first,
      casts.text,
    ),
    payments: page('payments', 'reference', 't.*, c.order_id AS order_id', 'LEFT JOIN checkouts c ON c.id = t.checkout_id', p, first, casts.text),
    payouts: page('payouts', 'seq', 't.*, c.order_id AS order_id', 'LEFT JOIN checkouts c ON c.id = t.checkout_id', p, first, casts.bigint),
  };
}

type CheckoutPageRow = CheckoutRow & {
  cp_status: number | null;
  cp_final: number | boolean | null;
  cp_expires_at: number | string | null;
  cp_updated_at: number | string | null;
};

export const toReportCheckout = (r: CheckoutPageRow) => {
  const payment: CurrentPayment | null =
    r.cp_status === null
      ? null
      : {
          partnerStatus: Number(r.cp_status),
          final: r.cp_final === 1 || r.cp_final === true,
          expiresAt: Number(r.cp_expires_at),
          updatedAt: Number(r.cp_updated_at),
        };
  return { ...toCheckout(r), payment };
};
export const toReportPayment = (r: PaymentRow & { order_id: string | null }) => ({ ...toPayment(r), orderId: r.order_id });
export const toReportPayout = (r: PayoutRow & { order_id: string | null }) => ({ ...toPayout(r), orderId: r.order_id });
export type { CheckoutPageRow };
