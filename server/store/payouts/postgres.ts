/**
 * Payouts, refunds and the transfers that carry them out, on Postgres. What decides money is in
 * domain/ (refunds.ts, payout-link.ts, final-state.ts); here are the statements, the transactions
 * and the row locks that make several instances decide one at a time.
 */
import { PAYOUT_STATES_AWAITING_OUTCOME, statusWrite } from '../../money/final-state.ts';
import { linkTransactionId, settleTransfer } from '../../money/payout-link.ts';
import { decideRefund, REFUND_STATES_WITHOUT_MONEY } from '../../money/refunds.ts';
import type { OutcomeEvent } from '../../../src/shared/contract.ts';
import { addOutcome } from '../outbox/postgres.ts';
import type { PostgresContext, Query } from '../postgres/context.ts';
import { toPayout, toTransfer, type PayoutRow, type TransferRow, type WithOrder } from '../rows.ts';
import { sqlWords } from '../sql.ts';
import type { PayoutStore, TransferOutcomeOf, TransferRecord, TransferStore } from './types.ts';

const transferByReference = async (q: Query, reference: string, lock = false) =>
  (await q<TransferRow>(`SELECT * FROM transfers WHERE reference = $1${lock ? ' FOR UPDATE' : ''}`, [reference])).rows[0];
const payoutById = async (q: Query, id: string) => (await q<PayoutRow>('SELECT * FROM payouts WHERE id = $1', [id])).rows[0];

// Known transfers keep what they have; a transaction_id read later is added.
const trackTransfer = (q: Query, t: TransferRecord) =>
  q(
    `INSERT INTO transfers (reference, partner_status, final, value_cents, created_at, updated_at, transaction_id) VALUES ($1, $2, $3, $4, $5, $6, $7)
     ON CONFLICT (reference) DO UPDATE SET transaction_id = EXCLUDED.transaction_id WHERE transfers.transaction_id IS NULL AND EXCLUDED.transaction_id IS NOT NULL`,
    [t.reference, t.partnerStatus, t.final, t.valueCents, t.createdAt, t.updatedAt, t.transactionId ?? null],
  );

/**
 * A final transfer's outcome, with the payout it belongs to (if the proxy started it: by the
 * partner's reference, or, before its create's answer gave it one, by our transaction_id), which
 * takes the outcome too. `restate`: the payout was just linked, so an event written without it is
 * written again, naming it, unless it was delivered already.
 */
async function transferOutcome(q: Query, reference: string, at: number, outcomeOf: TransferOutcomeOf, restate = false): Promise<OutcomeEvent | null> {
  const transfer = toTransfer((await transferByReference(q, reference))!);
  const payout = (
    await q<WithOrder<PayoutRow>>(
      `SELECT p.*, c.order_id AS order_id FROM payouts p LEFT JOIN checkouts c ON c.id = p.checkout_id
       WHERE p.reference = $1 OR ($2::text IS NOT NULL AND p.transaction_id = $2 AND p.reference IS NULL) ORDER BY p.reference IS NULL LIMIT 1`,
      [reference, transfer.transactionId ?? null],
    )
  ).rows[0];
  const settled = settleTransfer(transfer, payout ? { record: toPayout(payout), orderId: payout.order_id } : null, outcomeOf);
  const told = await addOutcome(q, settled.outcome, reference, at, restate, settled.relinked);
  if (payout && settled.payoutState) {
    // Its reference, when the outcome came first.
    await q(
      `UPDATE payouts SET state = $1, updated_at = $2, reference = COALESCE(reference, $4), customer_document = NULL
       WHERE id = $3 AND state IN (${sqlWords(PAYOUT_STATES_AWAITING_OUTCOME)})`,
      [settled.payoutState, at, payout.id, reference],
    );
  }
  return told;
}

export function postgresTransfers({ query, tx }: PostgresContext): TransferStore {
  return {
    async track(transfer) {
      await trackTransfer(query, transfer);
      return toTransfer((await transferByReference(query, transfer.reference))!);
    },
    async get(reference) {
      const row = await transferByReference(query, reference);
      return row ? toTransfer(row) : null;
    },
    async updateStatus(reference, partnerStatus, final, updatedAt, outcomeOf) {
      return tx(async (q) => {
        const { rowCount } = await q('UPDATE transfers SET partner_status = $2, final = $3, updated_at = $4 WHERE reference = $1 AND NOT final', [
          reference,
          partnerStatus,
          final,
          updatedAt,
        ]);
        const write = statusWrite(rowCount === 1, final);
        if (write !== 'made_final') return { changed: write === 'changed', outcome: null };
        return { changed: true, outcome: await transferOutcome(q, reference, updatedAt, outcomeOf) };
      });
    },
    async nonFinal(limit) {
      return (await query<TransferRow>('SELECT * FROM transfers WHERE NOT final ORDER BY created_at LIMIT $1', [limit])).rows.map(toTransfer);
    },
    async due(now, limit, everyMs) {
      const { rows } = await query<TransferRow>(
        `SELECT * FROM (SELECT t.*, GREATEST(t.updated_at, COALESCE(t.checked_at, 0)) + $3::bigint AS due_at FROM transfers t WHERE NOT t.final) due
         WHERE due_at <= $1::bigint ORDER BY due_at, created_at, reference LIMIT $2`,
        [now, limit, everyMs],
      );
      return rows.map(toTransfer);
    },
    async markChecked(references, at) {
      if (references.length === 0) return;
      await query('UPDATE transfers SET checked_at = $1 WHERE reference = ANY($2) AND NOT final', [at, [...references]]);
    },
  };
}

export function postgresPayouts({ query, tx }: PostgresContext): PayoutStore {
  return {
    async create(payout, paidStatus) {
      return tx(async (q) => {
        const byKey = async () => (await q<PayoutRow>('SELECT * FROM payouts WHERE idempotency_key = $1', [payout.idempotencyKey])).rows[0];
        const existing = await byKey();
        if (existing) return { payout: toPayout(existing), created: false };
        let valueCents = payout.valueCents;
        if (payout.checkoutId !== null) {
          // The checkout's row lock: refunds of one checkout (from any instance) are decided one at a time.
          await q('SELECT id FROM checkouts WHERE id = $1 FOR UPDATE', [payout.checkoutId]);
          const again = await byKey();
          if (again) return { payout: toPayout(again), created: false };
          const cents = async (text: string, values: unknown[]) => (await q<{ cents: number }>(text, values)).rows[0]!.cents;
          const paid = await cents('SELECT COALESCE(SUM(value_cents), 0) AS cents FROM payments WHERE checkout_id = $1 AND final AND partner_status = $2', [
            payout.checkoutId,
            paidStatus,
          ]);
          const returned = await cents(
            'SELECT COALESCE(SUM(returned_cents), 0) AS cents FROM payments WHERE checkout_id = $1 AND final AND partner_status = $2',
            [payout.checkoutId, paidStatus],
          );
          const refunded = await cents(
            `SELECT COALESCE(SUM(value_cents), 0) AS cents FROM payouts WHERE checkout_id = $1 AND state NOT IN (${sqlWords(REFUND_STATES_WITHOUT_MONEY)})`,
            [payout.checkoutId],
          );
          const decision = decideRefund(valueCents, Number(paid), Number(refunded), Number(returned));
          if ('problem' in decision) return decision;
          valueCents = decision.valueCents;
        }
        const inserted = (
          await q<PayoutRow>(
            `INSERT INTO payouts (id, idempotency_key, request_hash, kind, checkout_id, value_cents, pix_key, pix_key_type, customer_document, merchant_reference, transaction_id, state, created_at, updated_at)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14) ON CONFLICT (idempotency_key) DO NOTHING RETURNING *`,
            [
              payout.id,
              payout.idempotencyKey,
              payout.requestHash,
              payout.kind,
              payout.checkoutId,
              valueCents,
              payout.pixKey,
              payout.pixKeyType,
              payout.customerDocument,
              payout.merchantReference,
              payout.transactionId,
              payout.state,
              payout.createdAt,
              payout.updatedAt,
            ],
          )
        ).rows[0];
        // Another instance stored the same key meanwhile: its payout is the one.
        if (!inserted) return { payout: toPayout((await byKey())!), created: false };
        return { payout: toPayout(inserted), created: true };
      });
    },
    async get(id) {
      const row = await payoutById(query, id);
      return row ? toPayout(row) : null;
    },
    async markSent(id, transfer, outcomeOf) {
      return tx(async (q) => {
        const { reference, updatedAt: at } = transfer;
        await q(`UPDATE payouts SET state = 'pending', reference = $1, customer_document = NULL, updated_at = $2 WHERE id = $3 AND state = 'sending'`, [
          reference,
          at,
          id,
        ]);
        const stored = await payoutById(q, id);
        await trackTransfer(q, { ...transfer, updatedAt: at, transactionId: linkTransactionId(stored ? toPayout(stored) : null, transfer) });
        // Locked: a webhook making it final now (another transaction) is waited for and seen.
        const followed = toTransfer((await transferByReference(q, reference, true))!);
        // Its webhook came before its answer: the outcome is already known (its event is not written twice, but
        // written again naming this payout when it was written without it and is not delivered yet).
        const outcome = followed.final ? await transferOutcome(q, reference, at, outcomeOf, true) : null;
        return { payout: toPayout((await payoutById(q, id))!), outcome };
      });
    },
    async markRefused(id, reason, message, at, outcomeOf) {
      return tx(async (q) => {
        await q(
          `UPDATE payouts SET state = 'refused', reason = $1, reason_message = $2, customer_document = NULL, updated_at = $3 WHERE id = $4 AND state = 'sending'`,
          [reason, message, at, id],
        );
        const row = (
          await q<WithOrder<PayoutRow>>('SELECT p.*, c.order_id AS order_id FROM payouts p LEFT JOIN checkouts c ON c.id = p.checkout_id WHERE p.id = $1', [id])
        ).rows[0]!;
        const outcome = outcomeOf(toPayout(row), row.order_id);
        await addOutcome(q, outcome, row.id, at);
        return { payout: toPayout(row), outcome };
      });
    },
    async markUnknown(id, at) {
      await query(
        `UPDATE payouts SET state = 'unknown', reason = 'answer_lost', customer_document = NULL, updated_at = $1 WHERE id = $2 AND state = 'sending'`,
        [at, id],
      );
      return toPayout((await payoutById(query, id))!);
    },
    async discard(id) {
      await query(`DELETE FROM payouts WHERE id = $1 AND state = 'sending'`, [id]);
    },
    async list({ states, before, limit }) {
      const where: string[] = [];
      const args: unknown[] = [];
      if (states && states.length > 0) {
        args.push([...states]);
        where.push(`state = ANY($${args.length})`);
      }
      if (before !== undefined) {
        args.push(before);
        where.push(`seq < $${args.length}`);
      }
      args.push(limit);
      const { rows } = await query<PayoutRow>(
        `SELECT * FROM payouts ${where.length > 0 ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY seq DESC LIMIT $${args.length}`,
        args,
      );
      return { payouts: rows.map(toPayout) };
    },
    async ofCheckout(checkoutId) {
      return (await query<PayoutRow>('SELECT * FROM payouts WHERE checkout_id = $1 ORDER BY seq', [checkoutId])).rows.map(toPayout);
    },
    async expireSending(before, at) {
      // Each row goes to one instance: the UPDATE's row locks decide who reports it.
      const { rows } = await query<PayoutRow>(
        `UPDATE payouts SET state = 'unknown', reason = 'answer_lost', customer_document = NULL, updated_at = $2
         WHERE state = 'sending' AND created_at < $1 RETURNING *`,
        [before, at],
      );
      return rows.map(toPayout).sort((a, b) => a.seq - b.seq);
    },
  };
}
