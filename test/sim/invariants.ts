/**
 * The money rules, checked against the simulated partner's truth after every step (and, for the
 * liveness of outcomes and the extra payments, at the end of a run, once the partner is healthy
 * and the clock has moved past every cancellation). Each check counts how often it ran, so a long
 * run prints what it proved; a violation carries a sentence naming the record and the truth.
 */
import type { Sim } from './harness.ts';
import type { Meaning, SimViolation } from './world.ts';

export const INVARIANTS = {
  paid: '1 shown or told paid only if the partner approved it in full; never canceled if paid',
  refunds: '2 refunds never exceed what was paid; no payout sent twice',
  delivered: '3 every final outcome reaches the merchant, once per event id',
  newCode: '4 no new code while an earlier one of the checkout may be paid',
  final: '5 a final state never changes; an extra payment is never silently kept',
  numbering: '6 a numbering that cannot be trusted is reported, not guessed',
  unknown: '7 a code the setting does not list (an expired, failed or returned one) never decides anything',
} as const;
export type InvariantKey = keyof typeof INVARIANTS;

export class SimViolationError extends Error {
  override readonly name = 'SimViolationError';
  constructor(readonly violation: SimViolation) {
    super(`invariant ${violation.invariant} violated: ${violation.message}`);
  }
}

/** How many times each invariant was checked, over the runs of one simulation (runSimulation resets it). */
export const counts: Record<InvariantKey, number> = { paid: 0, refunds: 0, delivered: 0, newCode: 0, final: 0, numbering: 0, unknown: 0 };

export interface CheckOptions {
  /** Check that an extra payment shows (`overpaid`, `checkout.overpaid`): switch off until that lands. */
  overpaid: boolean;
  /**
   * A check of the caller's own after every step, beside the invariants: a hypothesis to try (can a
   * run reach this?). A message fails the run, which is shrunk and reported like any violation.
   */
  own?: (sim: Sim) => string | null;
}

/** Throws when the caller's own check (CheckOptions.own) says the run broke it. */
export function checkOwn(sim: Sim, options: CheckOptions): void {
  const broken = options.own?.(sim);
  if (broken) throw new SimViolationError({ invariant: "the caller's own check", message: broken });
}

const meaningOfStatus = (status: string): Meaning | null =>
  status === 'paid' ? 'approved' : status === 'canceled' ? 'canceled' : status === 'pending' || status === 'expired' ? 'pending' : null;

function fail(key: InvariantKey, message: string): never {
  throw new SimViolationError({ invariant: INVARIANTS[key], message });
}

/** What the proxy has shown or told as final, per reference: a final state never changes. */
export class FinalMemory {
  private readonly seen = new Map<string, { status: Meaning; where: string }>();
  private readonly delivered = new Set<string>();

  /** A delivery recorded delivered stays delivered (another instance's late failure never overwrites it). */
  noteDelivery(eventId: string, state: string): void {
    counts.delivered++;
    if (state === 'delivered') this.delivered.add(eventId);
    else if (this.delivered.has(eventId)) fail('delivered', `event ${eventId} was delivered and is now ${state}`);
  }

  note(reference: string, status: Meaning | null, where: string): void {
    if (status === null || status === 'pending') return;
    counts.final++;
    const before = this.seen.get(reference);
    if (!before) {
      this.seen.set(reference, { status, where });
      return;
    }
    if (before.status !== status) fail('final', `${reference} was ${before.status} (${before.where}) and is now ${status} (${where})`);
  }
}

/** A payment view (browser or merchant) as shown: paid only if the truth is approved in full, canceled only if canceled. */
export function checkShownPayment(
  sim: Sim,
  memory: FinalMemory,
  view: { reference?: unknown; status?: unknown; value?: unknown; amount_mismatch?: unknown; paid_value?: unknown },
  where: string,
): void {
  if (typeof view.reference !== 'string' || typeof view.status !== 'string') return;
  const truth = sim.world.payments.get(view.reference);
  counts.paid++;
  if (!truth) fail('paid', `${where} shows ${view.reference}, which the partner does not know`);
  const meaning = meaningOfStatus(view.status);
  if (meaning === 'approved') {
    if (truth.status !== 'approved') fail('paid', `${where} shows ${truth.reference} paid, but the partner says ${truth.status}`);
    // Paid less than asked: shown paid only with the difference flagged (never as paid in full).
    const flagged = Boolean(view.amount_mismatch) || (typeof view.paid_value === 'number' && typeof view.value === 'number' && view.paid_value < view.value);
    if ((truth.paidCents ?? 0) < truth.valueCents && !flagged)
      fail('paid', `${where} shows ${truth.reference} paid, but the customer paid ${truth.paidCents} of ${truth.valueCents} cents`);
  }
  if (meaning === 'canceled' && truth.status !== 'canceled') fail('paid', `${where} shows ${truth.reference} canceled, but the partner says ${truth.status}`);
  // 7: the partner shows a code the setting does not list (or a state beyond the three): it decided
  // nothing, so what is shown final is the truth's, whichever code was read (checked by 1 above).
  const shown = sim.world.shown(truth);
  const code = sim.world.behaviour.codes[shown];
  const { setting } = sim.world.behaviour;
  if (shown !== 'pending' && (code === undefined || !Object.values(setting).some((list) => Array.isArray(list) && list.includes(code)))) {
    counts.unknown++;
    if (meaning !== null && meaning !== 'pending' && meaning !== truth.status)
      fail('unknown', `${where} shows ${truth.reference} ${view.status}, from the partner's unlisted ${shown} code`);
  }
  memory.note(truth.reference, meaning, where);
}

/**
 * A code shown to the customer for the first time: no earlier code of its checkout may have been
 * paid (in the truth) before this one was created.
 */
export function checkNewCode(sim: Sim, tag: string, reference: string): void {
  const fresh = sim.world.payments.get(reference);
  if (!fresh) return;
  counts.newCode++;
  for (const earlier of sim.world.payments.values()) {
    if (earlier.tag !== tag || earlier.reference === reference || earlier.createdOrder > fresh.createdOrder) continue;
    if (earlier.status === 'approved' && earlier.paidOrder !== null && earlier.paidOrder < fresh.createdOrder) {
      fail(
        'newCode',
        `${reference} was shown for "${tag}", created after ${earlier.reference} had been paid (at ${new Date(earlier.paidAt ?? 0).toISOString()})`,
      );
    }
  }
}

/** After every step: the store's records, the outbox's events, the payouts against the truth. */
export async function checkStep(sim: Sim, memory: FinalMemory): Promise<void> {
  const { world, observer } = sim;
  for (const violation of world.violations) throw new SimViolationError(violation);

  // 1 and 5: what a read would show now, from what is stored (the view is a function of the record and the clock).
  const app = sim.instance(0).app;
  for (const checkout of sim.checkouts) {
    for (const record of await observer.checkouts.payments(checkout.id)) {
      let view;
      try {
        view = app.pix.payments.views.view(record);
      } catch {
        continue;
      }
      checkShownPayment(sim, memory, view, 'the stored record');
    }
  }

  // 1, 3 and 5: what the merchant was told (or will be: the outbox).
  const outbox = await observer.outbox.list({ limit: 100_000 });
  const ids = new Set<string>();
  const told = new Map<string, string>();
  for (const entry of outbox) {
    counts.delivered++;
    if (ids.has(entry.eventId)) fail('delivered', `event ${entry.eventId} is in the outbox twice`);
    ids.add(entry.eventId);
    memory.noteDelivery(entry.eventId, entry.state);
    // The receiver answered 2xx to it: it is delivered, whatever another attempt did after.
    if (sim.receiver.received.has(entry.eventId) && entry.state !== 'delivered')
      fail('delivered', `event ${entry.eventId} was received by the merchant (2xx) but is ${entry.state} in the outbox (${entry.lastError ?? 'no error'})`);
    counts.paid++;
    if (entry.type === 'payment.paid' || entry.type === 'payment.canceled') {
      const truth = world.payments.get(entry.reference);
      if (!truth) fail('paid', `${entry.type} told for ${entry.reference}, which the partner does not know`);
      if (entry.type === 'payment.paid') {
        if (truth.status !== 'approved') fail('paid', `payment.paid told for ${entry.reference}, but the partner says ${truth.status}`);
        if ((truth.paidCents ?? 0) < truth.valueCents)
          fail('paid', `payment.paid told for ${entry.reference}, but the customer paid ${truth.paidCents} of ${truth.valueCents} cents`);
      } else if (truth.status !== 'canceled') fail('paid', `payment.canceled told for ${entry.reference}, but the partner says ${truth.status}`);
      const before = told.get(entry.reference);
      counts.final++;
      if (before && before !== entry.type) fail('final', `${entry.reference} was told ${before} and then ${entry.type}`);
      told.set(entry.reference, entry.type);
    }
    if (entry.type === 'transfer.approved' || entry.type === 'transfer.canceled') {
      const truth = world.transfers.get(entry.reference);
      const expected = entry.type === 'transfer.approved' ? 'approved' : 'canceled';
      if (truth && truth.status !== expected) fail('paid', `${entry.type} told for ${entry.reference}, but the partner says ${truth.status}`);
    }
  }

  // 2: payouts against the transfers the partner really made.
  const payouts = await observer.payouts.list({ limit: 100_000 });
  const byTx = new Map(payouts.payouts.map((p) => [p.transactionId, p]));
  for (const [tx, creates] of world.transferCreates) {
    counts.refunds++;
    if (creates > 1) fail('refunds', `transaction ${tx} was sent to the partner ${creates} times`);
    if (!byTx.has(tx)) fail('refunds', `the partner made transfer ${tx}, which no payout of the proxy names (money out, forgotten)`);
  }
  for (const payout of payouts.payouts) {
    counts.refunds++;
    const made = [...world.transfers.values()].find((t) => t.transactionId === payout.transactionId);
    if ((payout.state === 'refused' || payout.state === 'canceled') && made && made.status !== 'canceled') {
      fail('refunds', `payout ${payout.id} is ${payout.state}, but the partner made its transfer (${made.reference}, ${made.status}): its money is out`);
    }
    if (payout.reference !== null) {
      for (const entry of outbox) {
        if (entry.reference !== payout.reference || !entry.type.startsWith('transfer.')) continue;
        counts.delivered++;
        const data = (JSON.parse(entry.body) as { data?: { transfer_id?: unknown; checkout_id?: unknown } }).data ?? {};
        if (data.transfer_id !== payout.id || (payout.checkoutId !== null && data.checkout_id !== payout.checkoutId)) {
          fail(
            'delivered',
            `${entry.type} of ${payout.reference} names transfer ${String(data.transfer_id)} and checkout ${String(data.checkout_id)}, not payout ${payout.id} of ${payout.checkoutId}`,
          );
        }
      }
    }
    if (payout.state === 'approved' && made?.status !== 'approved')
      fail('paid', `payout ${payout.id} is approved, but the partner says ${made?.status ?? 'no transfer'}`);
  }
  for (const checkout of sim.checkouts) {
    const paid = [...world.payments.values()].filter((p) => p.tag === checkout.tag && p.status === 'approved').reduce((sum, p) => sum + (p.paidCents ?? 0), 0);
    const refunds = payouts.payouts.filter((p) => p.checkoutId === checkout.id);
    const out = refunds
      .map((p) => [...world.transfers.values()].find((t) => t.transactionId === p.transactionId))
      .filter((t) => t !== undefined && t.status !== 'canceled')
      .reduce((sum, t) => sum + t!.valueCents, 0);
    counts.refunds++;
    if (out > paid) fail('refunds', `checkout ${checkout.tag} was refunded ${out} cents by the partner but paid ${paid}`);
  }
}

/**
 * At the end, after the healing phase: every outcome the partner knows reached the merchant (when
 * the numbering can be known at all), extra payments were reported, and a numbering proved wrong is
 * reported.
 */
export async function checkEnd(sim: Sim, memory: FinalMemory, options: CheckOptions): Promise<void> {
  const { world, observer } = sim;
  const { behaviour } = world;
  const { codes, setting } = behaviour;
  const byCode = behaviour.statusForm === 'code';
  // The setting reads the partner's three required codes right (what liveness needs; a missing optional code only makes it wait).
  const requiredRight =
    setting.pending.length === 1 &&
    setting.pending[0] === codes.pending &&
    setting.approved.length === 1 &&
    setting.approved[0] === codes.approved &&
    setting.canceled.length === 1 &&
    setting.canceled[0] === codes.canceled;

  // 6: once the evidence exists, the proxy says so: a new payment's code not listed pending, or a paid
  // code read before any expiry that the setting calls canceled or expired.
  if (byCode && !requiredRight) {
    counts.numbering++;
    const listedAs = (code: number) => (['pending', 'approved', 'canceled', 'expired'] as const).find((m) => setting[m].includes(code)) ?? null;
    const evidence =
      (!setting.pending.includes(codes.pending) && world.freshSeen && behaviour.createStatus) ||
      // (a paid code proves something only once the listed pending code is verified: a new payment showed it)
      (setting.pending.includes(codes.pending) &&
        world.pendingSeen &&
        world.approvedReadEarly.size > 0 &&
        (listedAs(codes.approved) === 'canceled' || listedAs(codes.approved) === 'expired'));
    if (evidence) {
      const ready = await sim.request(0, 'GET', '/ready');
      const checks = (ready.body?.checks ?? {}) as { status_codes?: string };
      const logged = sim.errors.some((line) => /does not match PIX_STATUS_CODES/i.test(line));
      if (checks.status_codes !== 'mismatch' && !logged) {
        fail(
          'numbering',
          `the partner numbers ${JSON.stringify(codes)}, the setting says ${JSON.stringify(setting)}, the evidence was read, and /ready says ${checks.status_codes}`,
        );
      }
    }
  }

  // 3: liveness, where the proxy can know: statuses in words, or codes it could verify (a setting
  // that reads the three required codes right, a new payment's code seen, and a paid code read on a
  // payment strictly before its earliest plausible expiry, which verifies approved; canceled is then
  // verified by a read well past the latest plausible cancellation). With the right setting a payment
  // paid on time is shown paid, whatever else expired before it.
  const knowable = behaviour.statusForm === 'word' || (byCode && requiredRight && world.approvedReadEarly.size > 0 && world.pendingSeen);
  const outbox = await observer.outbox.list({ limit: 100_000 });
  const events = new Map(outbox.map((e) => [`${e.type}|${e.reference}`, e]));
  if (knowable) {
    for (const checkout of sim.checkouts) {
      for (const record of await observer.checkouts.payments(checkout.id)) {
        const truth = world.payments.get(record.reference);
        // A payment given back after approval is the returns' business (a return decides nothing here).
        if (!truth || truth.status === 'pending' || truth.returnedAt !== null) continue;
        counts.delivered++;
        // Paid another amount: flagged to the merchant (payment.amount_mismatch), or, paid more, recorded paid.
        if (truth.status === 'approved' && truth.paidCents !== truth.valueCents) {
          const flag = events.get(`payment.amount_mismatch|${record.reference}`);
          if (flag?.state === 'delivered') continue;
          if ((truth.paidCents ?? 0) < truth.valueCents)
            fail('delivered', `${record.reference} was paid ${truth.paidCents} of ${truth.valueCents} cents, and the merchant was not told the difference`);
        }
        if (!record.final) fail('delivered', `${record.reference} is ${truth.status} at the partner, but the proxy never learned it`);
        const type = truth.status === 'approved' ? 'payment.paid' : 'payment.canceled';
        const event = events.get(`${type}|${record.reference}`);
        if (!event) fail('delivered', `${record.reference} is ${truth.status}, but no ${type} event was recorded`);
        if (event.state !== 'delivered') fail('delivered', `${type} of ${record.reference} is ${event.state} after the receiver came back`);
        if (!sim.receiver.received.has(event.eventId)) fail('delivered', `the merchant never received ${event.eventId}`);
      }
    }
  }
  for (const entry of outbox) {
    counts.delivered++;
    if (entry.state !== 'delivered') fail('delivered', `event ${entry.eventId} (${entry.type}) is ${entry.state} at the end, the receiver healthy`);
  }

  // 3, transfers: with the transfers' own setting right, a payout the partner settled is settled in
  // the proxy once it can know (statuses in words, or an authenticated notification naming the
  // outcome in words, which verifies the transfer code: a fresh install settles its payouts).
  const wordsHeard = behaviour.intake === 'secret' && behaviour.notifyFormat !== 'old';
  const ts = behaviour.transferSetting;
  const tc = behaviour.transferCodes;
  const transferSettingRight = ts.pending[0] === tc.pending && ts.approved[0] === tc.approved && ts.canceled[0] === tc.canceled;
  if (behaviour.statusForm === 'word' || (byCode && transferSettingRight && wordsHeard)) {
    for (const payout of (await observer.payouts.list({ limit: 100_000 })).payouts) {
      const made = [...world.transfers.values()].find((t) => t.transactionId === payout.transactionId);
      // Judged too: a transfer notified before its create answered (linked by our transaction_id,
      // applied on the processor's try again, which fires as the run's clock moves) and one whose
      // check failed while its words were confirmed.
      if (!made || made.status === 'pending' || payout.state === 'unknown') continue;
      // By codes it can know only once a notification's words were heard (its own, or an earlier transfer's, which verified the code).
      if (behaviour.statusForm !== 'word' && !world.heardAuthenticated.has(made.reference)) continue;
      counts.delivered++;
      if (payout.state !== made.status)
        fail('delivered', `payout ${payout.id}'s transfer is ${made.status} at the partner, but the proxy says ${payout.state}`);
    }
  }

  // 5: an extra payment is never silently kept (where the proxy can know the payments were paid at all;
  // otherwise they stay open and /ready reports them parked).
  if (options.overpaid && knowable) {
    for (const checkout of sim.checkouts) {
      const paid = [...world.payments.values()].filter((p) => p.tag === checkout.tag && p.status === 'approved');
      const total = paid.reduce((sum, p) => sum + (p.paidCents ?? 0), 0);
      if (paid.length < 2 && total <= checkout.valueCents) continue;
      counts.final++;
      const view = await sim.api(0, 'GET', `/api/checkouts/${checkout.id}`);
      const flagged = view.body?.overpaid !== undefined && view.body.overpaid !== null && view.body.overpaid !== false;
      // A code paid another amount is told as that payment's amount mismatch (the merchant then knows its money came in).
      const told = outbox.some(
        (e) =>
          (e.type === 'checkout.overpaid' && e.body.includes(checkout.id)) ||
          (e.type === 'payment.amount_mismatch' && paid.some((p) => p.reference === e.reference && p.paidCents !== p.valueCents)),
      );
      if (!flagged && !told)
        fail(
          'final',
          `checkout ${checkout.tag} was paid ${paid.length} times (${total} cents for ${checkout.valueCents}); neither its view nor an event says so`,
        );
    }
  }
  void memory;
}
