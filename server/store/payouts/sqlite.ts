/**
 * Payouts, refunds and the transfers that carry them out, on SQLite. What decides money is in
 * domain/ (refunds.ts, payout-link.ts, final-state.ts); here are the statements and the transactions.
 */
import { PAYOUT_STATES_AWAITING_OUTCOME, statusWrite } from '../../money/final-state.ts';
import { linkTransactionId, settleTransfer } from '../../money/payout-link.ts';
import { decideRefund, REFUND_STATES_WITHOUT_MONEY } from '../../money/refunds.ts';
import type { OutcomeEvent } from '../../../src/shared/contract.ts';
import type { SqliteOutboxWriter } from '../outbox/sqlite.ts';
import type { StatusChange } from '../payments/types.ts';
import { toPayout, toTransfer, type CheckoutRow, type PayoutRow, type TransferRow, type WithOrder } from '../rows.ts';
import { sqlWords } from '../sql.ts';
import { flag, type SqliteContext } from '../sqlite/context.ts';
import type { PayoutRecord, PayoutStore, RefusalOutcomeOf, TransferOutcomeOf, TransferRecord, TransferStore } from './types.ts';

export function sqlitePayoutsAndTransfers({ db }: SqliteContext, outbox: SqliteOutboxWriter): { transfers: TransferStore; payouts: PayoutStore } {
  const sql = {
    // Known transfers keep what they have; a transaction_id read later is added.
    trackTransfer: db.prepare(
      `INSERT INTO transfers (reference, partner_status, final, value_cents, created_at, updated_at, transaction_id)
       VALUES (@reference, @partner_status, @final, @value_cents, @created_at, @updated_at, @transaction_id)
       ON CONFLICT(reference) DO UPDATE SET transaction_id = excluded.transaction_id WHERE transfers.transaction_id IS NULL AND excluded.transaction_id IS NOT NULL`,
    ),
    getTransfer: db.prepare('SELECT * FROM transfers WHERE reference = ?'),
    updateTransfer: db.prepare('UPDATE transfers SET partner_status = ?, final = ?, updated_at = ? WHERE reference = ? AND final = 0'),
    nonFinalTransfers: db.prepare('SELECT * FROM transfers WHERE final = 0 ORDER BY created_at LIMIT ?'),
    dueTransfers: db.prepare(
      `SELECT * FROM (SELECT t.*, max(t.updated_at, COALESCE(t.checked_at, 0)) + ?3 AS due_at FROM transfers t WHERE t.final = 0)
       WHERE due_at <= ?1 ORDER BY due_at, created_at, reference LIMIT ?2`,
    ),
    markTransferChecked: db.prepare('UPDATE transfers SET checked_at = ? WHERE reference = ? AND final = 0'),
    insertPayout: db.prepare(
      `INSERT INTO payouts (id, idempotency_key, request_hash, kind, checkout_id, value_cents, pix_key, pix_key_type, customer_document, merchant_reference, transaction_id, state, reference, reason, reason_message, created_at, updated_at)
       VALUES (@id, @idempotency_key, @request_hash, @kind, @checkout_id, @value_cents, @pix_key, @pix_key_type, @customer_document, @merchant_reference, @transaction_id, @state, NULL, NULL, NULL, @created_at, @updated_at)
       ON CONFLICT(idempotency_key) DO NOTHING`,
    ),
    getPayout: db.prepare('SELECT * FROM payouts WHERE id = ?'),
    payoutByKey: db.prepare('SELECT * FROM payouts WHERE idempotency_key = ?'),
    getCheckout: db.prepare('SELECT order_id FROM checkouts WHERE id = ?'),
    // By the partner's reference, or, before its create's answer gave it one, by our transaction_id.
    payoutOfTransfer: db.prepare(
      `SELECT p.*, c.order_id AS order_id FROM payouts p LEFT JOIN checkouts c ON c.id = p.checkout_id
       WHERE p.reference = ?1 OR (?2 IS NOT NULL AND p.transaction_id = ?2 AND p.reference IS NULL) ORDER BY p.reference IS NULL LIMIT 1`,
    ),
    paidCents: db.prepare('SELECT COALESCE(SUM(value_cents), 0) AS cents FROM payments WHERE checkout_id = ? AND final = 1 AND partner_status = ?'),
    returnedCents: db.prepare('SELECT COALESCE(SUM(returned_cents), 0) AS cents FROM payments WHERE checkout_id = ? AND final = 1 AND partner_status = ?'),
    refundedCents: db.prepare(
      `SELECT COALESCE(SUM(value_cents), 0) AS cents FROM payouts WHERE checkout_id = ? AND state NOT IN (${sqlWords(REFUND_STATES_WITHOUT_MONEY)})`,
    ),
    sentPayout: db.prepare(`UPDATE payouts SET state = 'pending', reference = ?, customer_document = NULL, updated_at = ? WHERE id = ? AND state = 'sending'`),
    // Its transfer's outcome; its reference, when the outcome came first.
    payoutOutcome: db.prepare(
      `UPDATE payouts SET state = ?1, updated_at = ?2, reference = COALESCE(reference, ?4), customer_document = NULL
       WHERE id = ?3 AND state IN (${sqlWords(PAYOUT_STATES_AWAITING_OUTCOME)})`,
    ),
    refusedPayout: db.prepare(
      `UPDATE payouts SET state = 'refused', reason = ?, reason_message = ?, customer_document = NULL, updated_at = ? WHERE id = ? AND state = 'sending'`,
    ),
    unknownPayout: db.prepare(
      `UPDATE payouts SET state = 'unknown', reason = 'answer_lost', customer_document = NULL, updated_at = ? WHERE id = ? AND state = 'sending'`,
    ),
    discardPayout: db.prepare(`DELETE FROM payouts WHERE id = ? AND state = 'sending'`),
    payoutsOfCheckout: db.prepare('SELECT * FROM payouts WHERE checkout_id = ? ORDER BY seq'),
    staleSending: db.prepare(`SELECT * FROM payouts WHERE state = 'sending' AND created_at < ? ORDER BY seq`),
  };
  const track = (t: TransferRecord): void =>
    void sql.trackTransfer.run({
      reference: t.reference,
      partner_status: t.partnerStatus,
      final: flag(t.final),
      value_cents: t.valueCents,
      created_at: t.createdAt,
      updated_at: t.updatedAt,
      transaction_id: t.transactionId ?? null,
    });
  const payoutById = (id: string) => sql.getPayout.get(id) as PayoutRow | undefined;

  /**
   * A final transfer's outcome, with the payout it belongs to (if the proxy started it), which takes
   * the outcome too. `restate`: the payout was just linked (its answer came after the outcome), so an
   * event written without it is written again, naming it, unless it was delivered already.
   */
  const transferOutcome = (reference: string, at: number, outcomeOf: TransferOutcomeOf, restate = false): OutcomeEvent | null => {
    const transfer = toTransfer(sql.getTransfer.get(reference) as TransferRow);
    const payout = sql.payoutOfTransfer.get(reference, transfer.transactionId ?? null) as WithOrder<PayoutRow> | undefined;
    const settled = settleTransfer(transfer, payout ? { record: toPayout(payout), orderId: payout.order_id } : null, outcomeOf);
    const told = outbox.add(settled.outcome, reference, at, restate, settled.relinked);
    if (payout && settled.payoutState) sql.payoutOutcome.run(settled.payoutState, at, payout.id, reference);
    return told;
  };
  const updateTransfer = db.transaction(
    (reference: string, partnerStatus: number, final: boolean, updatedAt: number, outcomeOf: TransferOutcomeOf): StatusChange => {
      const write = statusWrite(sql.updateTransfer.run(partnerStatus, flag(final), updatedAt, reference).changes === 1, final);
      if (write !== 'made_final') return { changed: write === 'changed', outcome: null };
      return { changed: true, outcome: transferOutcome(reference, updatedAt, outcomeOf) };
    },
  );
  // Immediate: a refund's check of what is left and its insert hold the write lock together, so two
  // refunds (in this process or another one on the same file) cannot both take the last of it.
  const createPayout = db.transaction((payout: PayoutRecord, paidStatus: number) => {
    const existing = sql.payoutByKey.get(payout.idempotencyKey) as PayoutRow | undefined;
    if (existing) return { payout: toPayout(existing), created: false };
    let valueCents = payout.valueCents;
    if (payout.checkoutId !== null) {
      const paid = (sql.paidCents.get(payout.checkoutId, paidStatus) as { cents: number }).cents;
      const refunded = (sql.refundedCents.get(payout.checkoutId) as { cents: number }).cents;
      const returned = (sql.returnedCents.get(payout.checkoutId, paidStatus) as { cents: number }).cents;
      const decision = decideRefund(valueCents, paid, refunded, returned);
      if ('problem' in decision) return decision;
      valueCents = decision.valueCents;
    }
    const { changes } = sql.insertPayout.run({
      id: payout.id,
      idempotency_key: payout.idempotencyKey,
      request_hash: payout.requestHash,
      kind: payout.kind,
      checkout_id: payout.checkoutId,
      value_cents: valueCents,
      pix_key: payout.pixKey,
      pix_key_type: payout.pixKeyType,
      customer_document: payout.customerDocument,
      merchant_reference: payout.merchantReference,
      transaction_id: payout.transactionId,
      state: payout.state,
      created_at: payout.createdAt,
      updated_at: payout.updatedAt,
    });
    return { payout: toPayout(sql.payoutByKey.get(payout.idempotencyKey) as PayoutRow), created: changes === 1 };
  });
  const markSent = db.transaction((id: string, transfer: TransferRecord, outcomeOf: TransferOutcomeOf) => {
    const { reference, updatedAt: at } = transfer;
    sql.sentPayout.run(reference, at, id);
    const stored = payoutById(id);
    track({ ...transfer, updatedAt: at, transactionId: linkTransactionId(stored ? toPayout(stored) : null, transfer) });
    const followed = toTransfer(sql.getTransfer.get(reference) as TransferRow);
    // Its webhook came before its answer: the outcome is already known (its event is not written twice, but
    // written again naming this payout when it was written without it and is not delivered yet).
    const outcome = followed.final ? transferOutcome(reference, at, outcomeOf, true) : null;
    return { payout: toPayout(payoutById(id)!), outcome };
  });
  const markRefused = db.transaction((id: string, reason: string, message: string | null, at: number, outcomeOf: RefusalOutcomeOf) => {
    sql.refusedPayout.run(reason, message, at, id);
    const row = payoutById(id)!;
    const orderId = row.checkout_id ? ((sql.getCheckout.get(row.checkout_id) as Pick<CheckoutRow, 'order_id'> | undefined)?.order_id ?? null) : null;
    const outcome = outcomeOf(toPayout(row), orderId);
    outbox.add(outcome, row.id, at);
    return { payout: toPayout(row), outcome };
  });
  const markTransfersChecked = db.transaction((references: readonly string[], at: number) => {
    for (const reference of references) sql.markTransferChecked.run(at, reference);
  });

  const transfers: TransferStore = {
    async track(transfer) {
      track(transfer);
      return toTransfer(sql.getTransfer.get(transfer.reference) as TransferRow);
    },
    async get(reference) {
      const row = sql.getTransfer.get(reference) as TransferRow | undefined;
      return row ? toTransfer(row) : null;
    },
    async updateStatus(reference, partnerStatus, final, updatedAt, outcomeOf) {
      return updateTransfer(reference, partnerStatus, final, updatedAt, outcomeOf);
    },
    async nonFinal(limit) {
      return (sql.nonFinalTransfers.all(limit) as TransferRow[]).map(toTransfer);
    },
    async due(now, limit, everyMs) {
      return (sql.dueTransfers.all(now, limit, everyMs) as TransferRow[]).map(toTransfer);
    },
    async markChecked(references, at) {
      markTransfersChecked(references, at);
    },
  };
  const payouts: PayoutStore = {
    async create(payout, paidStatus) {
      return createPayout.immediate(payout, paidStatus);
    },
    async get(id) {
      const row = payoutById(id);
      return row ? toPayout(row) : null;
    },
    async markSent(id, transfer, outcomeOf) {
      return markSent.immediate(id, transfer, outcomeOf);
    },
    async markRefused(id, reason, message, at, outcomeOf) {
      return markRefused.immediate(id, reason, message, at, outcomeOf);
    },
    async markUnknown(id, at) {
      sql.unknownPayout.run(at, id);
      return toPayout(payoutById(id)!);
    },
    async discard(id) {
      sql.discardPayout.run(id);
    },
    async list({ states, before, limit }) {
      const where: string[] = [];
      const args: (string | number)[] = [];
      if (states && states.length > 0) {
        // A handful of fixed words: the placeholders are built from their count only.
        where.push(`state IN (${states.map(() => '?').join(', ')})`);
        args.push(...states);
      }
      if (before !== undefined) {
        where.push('seq < ?');
        args.push(before);
      }
      const rows = db
        .prepare(`SELECT * FROM payouts ${where.length > 0 ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY seq DESC LIMIT ?`)
        .all(...args, limit) as PayoutRow[];
      return { payouts: rows.map(toPayout) };
    },
    async ofCheckout(checkoutId) {
      return (sql.payoutsOfCheckout.all(checkoutId) as PayoutRow[]).map(toPayout);
    },
    async expireSending(before, at) {
      const rows = sql.staleSending.all(before) as PayoutRow[];
      for (const row of rows) sql.unknownPayout.run(at, row.id);
      return rows.map((row) => toPayout(payoutById(row.id)!));
    },
  };
  return { transfers, payouts };
}
