/** The accounting export's statements, one text for SQLite (?n) and Postgres ($n): a page of one table, its joins by primary key. */
import type { CheckoutRow, PaymentRow, PayoutRow } from '../rows.ts';
import { toCheckout, toPayment, toPayout } from '../rows.ts';
import type { CurrentPayment } from './types.ts';

type Placeholder = (n: number) => string;

/**
 * Rows of `table` (alias t) created in [p1, p2) after the cursor (p3 time, p4 key; p4 null: from the
 * start), in index order, at most p5. `cast` types the key for Postgres.
 */
function page(table: string, key: string, select: string, join: string, p: Placeholder, cast = ''): string {
  return `SELECT ${select} FROM ${table} t ${join}
    WHERE t.created_at >= ${p(1)} AND t.created_at < ${p(2)}
      AND (${p(4)}${cast} IS NULL OR t.created_at > ${p(3)} OR (t.created_at = ${p(3)} AND t.${key} > ${p(4)}${cast}))
    ORDER BY t.created_at, t.${key} LIMIT ${p(5)}`;
}

export function reportStatements(p: Placeholder, casts: { text: string; bigint: string } = { text: '', bigint: '' }) {
  return {
    checkouts: page(
      'checkouts',
      'id',
      't.*, cp.partner_status AS cp_status, cp.final AS cp_final, cp.expires_at AS cp_expires_at, cp.updated_at AS cp_updated_at',
      'LEFT JOIN payments cp ON cp.reference = t.payment_reference',
      p,
      casts.text,
    ),
    payments: page('payments', 'reference', 't.*, c.order_id AS order_id', 'LEFT JOIN checkouts c ON c.id = t.checkout_id', p, casts.text),
    payouts: page('payouts', 'seq', 't.*, c.order_id AS order_id', 'LEFT JOIN checkouts c ON c.id = t.checkout_id', p, casts.bigint),
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
