/**
 * The steps of a simulated run, as fast-check commands: the merchant, the customer's page, the
 * customer's bank, the partner (its notifications, its faults, its cancellations), the clock, the
 * proxy's passes and its crashes. Each step drives the proxy through its HTTP API or createApp's
 * parts and checks what it answered; the invariants run after every one (run.ts). Which steps a
 * run may draw follows the behaviours enabled (BEHAVIOURS), so a failure can be narrowed down.
 */
import fc from 'fast-check';
import { EXPIRATION_SECONDS, LONG_EXPIRATION_SECONDS, SECRET_PATH, type Sim } from './harness.ts';
import { checkNewCode, checkShownPayment, type FinalMemory } from './invariants.ts';
import { DEFAULT_STATUS_CODES, statusCodes, type StatusCodes } from '../../server/partner/status-codes.ts';
import { PAYMENT_FAULTS, READ_FAULTS, TRANSFER_FAULTS, type Behaviour, type Fault, type FaultOp, type PartnerCodes } from './world.ts';

/** Behaviours a run may draw; SIM_BEHAVIOURS (or --behaviours) restricts them. */
export const BEHAVIOURS = [
  /** The partner's codes in any order, and a wrong PIX_STATUS_CODES. */
  'numbering',
  /** Statuses as words, or none at all. */
  'words',
  /** Notifications dropped, repeated, resent late, spoofed. */
  'notifications',
  /** Lost answers, 4xx, 5xx, timeouts, on creates and reads. */
  'faults',
  /** Paying after the expiry (before the partner cancels). */
  'late',
  /** Renewals, and paying an earlier code after one. */
  'twice',
  /** Paying another amount than asked. */
  'amounts',
  /** The process dies between steps, or in the middle of a partner call. */
  'crash',
  /** Two instances on one SQLite file. */
  'instances',
  /** Refunds and transfers, with every outcome. */
  'payouts',
  /** The merchant's receiver failing. */
  'merchant',
  /** Steps inside a partner call: paid just after the proxy's check, a transfer's notification before its create's answer. */
  'interleavings',
  /**
   * A partner wider than our model: 3 to 6 codes (expired, returned, failed or not;
   * payable after expiry or not), transfers numbered apart, its clock ±10 min, the requested
   * expiration ignored, failed attempts (in words), returns after approval, a read in flight
   * across the customer's payment; the proxy set right, incompletely, or not at all.
   */
  'partner',
] as const;
export type BehaviourName = (typeof BEHAVIOURS)[number];

export interface RunConfig {
  behaviour: Behaviour;
  twoInstances: boolean;
}

export interface SimContext {
  sim: Sim;
  memory: FinalMemory;
}

export type SimCommand = fc.AsyncCommand<object, SimContext>;

const PERMUTATIONS = [
  [1, 2, 3],
  [1, 3, 2],
  [2, 1, 3],
  [2, 3, 1],
  [3, 1, 2],
  [3, 2, 1],
].map(([pending, approved, canceled]) => ({ pending: pending!, approved: approved!, canceled: canceled! }));

export function configArbitrary(enabled: ReadonlySet<BehaviourName>): fc.Arbitrary<RunConfig> {
  const wide = enabled.has('partner');
  const numbering = enabled.has('numbering');
  // The partner's codes: the spec's three in any order (numbering), and (partner) an expired, a
  // returned and a failed code or not, all drawn from 0..9.
  const partnerCodes: fc.Arbitrary<PartnerCodes> = wide
    ? fc
        .tuple(
          fc.shuffledSubarray([0, 1, 2, 3, 4, 5, 6, 7, 8, 9], { minLength: 6, maxLength: 6 }),
          fc.constantFrom('ours' as const, 'expiredThird' as const, 'expiredSecond' as const, 'drawn' as const),
          fc.boolean(),
          fc.boolean(),
          fc.boolean(),
        )
        .map(([drawn, layout, expired, returned, failed]): PartnerCodes => {
          // The issue's numberings: 1 pending, 2 approved, 3 expired, 4 canceled; 1 pending, 2 expired, 3 approved, 4 canceled.
          if (layout === 'expiredThird')
            return { pending: 1, approved: 2, expired: 3, canceled: 4, ...(returned ? { returned: 6 } : {}), ...(failed ? { failed: 7 } : {}) };
          if (layout === 'expiredSecond')
            return { pending: 1, expired: 2, approved: 3, canceled: 4, ...(returned ? { returned: 6 } : {}), ...(failed ? { failed: 7 } : {}) };
          // Else the spec's three are the sandbox's 1, 2, 3 (the default setting then reads them right), the others after them; or all drawn.
          const list = layout === 'ours' ? [1, 2, 3, ...drawn.filter((c) => c > 3 || c === 0)] : drawn;
          const [pending, approved, canceled, ...rest] = list as [number, number, number, ...number[]];
          const codes: PartnerCodes = { pending, approved, canceled };
          if (expired) codes.expired = rest.shift()!;
          if (returned) codes.returned = rest.shift()!;
          if (failed) codes.failed = rest.shift()!;
          return codes;
        })
    : numbering
      ? fc.constantFrom(...PERMUTATIONS)
      : fc.constant(PERMUTATIONS[0]!);
  const statusForm = enabled.has('words') ? fc.constantFrom('code' as const, 'word' as const, 'none' as const) : fc.constant('code' as const);
  const settingKind =
    numbering || wide ? fc.constantFrom('right' as const, 'incomplete' as const, 'none' as const, 'wrong' as const) : fc.constant('right' as const);
  return fc
    .record({
      codes: partnerCodes,
      expiredPayable: fc.boolean(),
      transfersApart: wide ? fc.boolean() : fc.constant(false),
      transferSettingRight: fc.boolean(),
      settingKind,
      swap: fc.constantFrom(...PERMUTATIONS.slice(1)),
      drop: fc.tuple(fc.boolean(), fc.boolean(), fc.boolean()),
      clockOffsetMs: wide ? fc.integer({ min: -600_000, max: 600_000 }) : fc.constant(0),
      ignoresExpiration: wide ? fc.boolean() : fc.constant(false),
      expirationSeconds: wide ? fc.constantFrom(EXPIRATION_SECONDS, LONG_EXPIRATION_SECONDS) : fc.constant(EXPIRATION_SECONDS),
      failureWords: wide ? fc.boolean() : fc.constant(false),
      statusForm,
      createStatus: fc.boolean(),
      notifyFormat: enabled.has('notifications')
        ? fc.constantFrom('old' as const, 'new' as const, 'wrapped' as const)
        : fc.constantFrom('old' as const, 'new' as const),
      intake: fc.constantFrom('secret' as const, 'open' as const),
      renewals: enabled.has('twice') ? fc.integer({ min: 0, max: 2 }) : fc.constant(0),
      twoInstances: enabled.has('instances') ? fc.boolean() : fc.constant(false),
    })
    .map((d): RunConfig => {
      // Apart: the payments' own numbers, approved and canceled the other way round (a payments' code would settle a transfer wrongly).
      const transferCodes: PartnerCodes = d.transfersApart
        ? { pending: d.codes.pending, approved: d.codes.canceled, canceled: d.codes.approved }
        : { pending: d.codes.pending, approved: d.codes.approved, canceled: d.codes.canceled };
      const behaviour: Behaviour = {
        codes: d.codes,
        expiredPayable: d.expiredPayable,
        transferCodes,
        clockOffsetMs: d.clockOffsetMs,
        ignoresExpiration: d.ignoresExpiration,
        expirationSeconds: d.expirationSeconds,
        failureWords: d.failureWords,
        settingKind: d.settingKind,
        setting: settingFor(d.codes, d.expiredPayable, d.settingKind, d.swap, d.drop),
        transferSetting: d.transferSettingRight ? settingFor(transferCodes, true, 'right', d.swap, d.drop) : DEFAULT_STATUS_CODES,
        statusForm: d.statusForm,
        createStatus: d.createStatus,
        notifyFormat: d.notifyFormat,
        intake: d.intake,
        renewals: d.renewals,
      };
      return { behaviour, twoInstances: d.twoInstances };
    });
}

/** The proxy's setting against a partner: every code right, the required right and optional ones left out, the default, or the required three in another order. */
function settingFor(
  codes: PartnerCodes,
  expiredPayable: boolean,
  kind: Behaviour['settingKind'],
  swap: { pending: number; approved: number; canceled: number },
  drop: readonly [boolean, boolean, boolean],
): StatusCodes {
  if (kind === 'none') return DEFAULT_STATUS_CODES;
  const required = [codes.pending, codes.approved, codes.canceled];
  if (kind === 'wrong')
    return statusCodes({ pending: required[swap.pending - 1]!, approved: required[swap.approved - 1]!, canceled: required[swap.canceled - 1]! });
  const keep = (code: number | undefined, i: number) => (code === undefined || (kind === 'incomplete' && drop[i]) ? undefined : code);
  const expired = keep(codes.expired, 0);
  const returned = keep(codes.returned, 1);
  const failed = keep(codes.failed, 2);
  // Incomplete with nothing left out is still incomplete only if it lists less than the partner has; else it is right.
  return statusCodes({
    pending: codes.pending,
    approved: codes.approved,
    canceled: codes.canceled,
    ...(expired !== undefined ? { expired } : {}),
    ...(returned !== undefined ? { returned } : {}),
    ...(failed !== undefined ? { failed } : {}),
    expiredPayable,
  });
}

export function command(name: string, args: unknown[], run: (context: SimContext) => Promise<void>): SimCommand {
  const label = `${name}(${args.map((a) => JSON.stringify(a)).join(', ')})`;
  return {
    check: () => true,
    run: async (_model, context) => {
      context.sim.step++;
      context.sim.log.push(label);
      await run(context);
    },
    toString: () => label,
  };
}

const VALUES = [1000, 2550, 9999];
const via = (enabled: ReadonlySet<BehaviourName>) => (enabled.has('instances') ? fc.integer({ min: 0, max: 1 }) : fc.constant(0));
const index = fc.nat({ max: 7 });

/** Crashes the instance when a call of it hung (a partner call that never answered). */
function crashIfHung(sim: Sim, at: number): void {
  if (sim.instance(at).hung) sim.crash(at);
}

/** The checkout's payment as the page asks for it; what it answers is checked as shown. */
async function page({ sim, memory }: SimContext, ci: number, renew: boolean, at: number): Promise<void> {
  const checkout = sim.checkouts[ci % Math.max(1, sim.checkouts.length)];
  if (!checkout) return;
  const res = await sim.request(at, 'POST', `/api/checkouts/${checkout.id}/payment`, renew ? { renew: true } : undefined);
  crashIfHung(sim, at);
  if (res.status === 200 || res.status === 201) {
    const reference = res.body?.reference;
    if (typeof reference === 'string' && !checkout.shown.includes(reference)) {
      checkout.shown.push(reference);
      checkNewCode(sim, checkout.tag, reference);
    }
    checkShownPayment(sim, memory, res.body ?? {}, `the page of ${checkout.tag}`);
  } else if (res.status === 500 || res.status > 504) {
    throw new Error(`the page of ${checkout.tag} got HTTP ${res.status}: ${JSON.stringify(res.body)}`);
  }
}

const intakePath = (sim: Sim, authenticated: boolean) =>
  authenticated && sim.world.behaviour.intake === 'secret' ? `/api/webhooks/partner/${SECRET_PATH}` : '/api/webhooks/partner';

export async function deliver(sim: Sim, body: string, authenticated: boolean, at = 0): Promise<void> {
  const res = await sim.request(at, 'POST', intakePath(sim, authenticated), body);
  crashIfHung(sim, at);
  // The partner's own notification, acknowledged at the authenticated intake: its words can be heard.
  if (authenticated && sim.world.behaviour.intake === 'secret' && res.status >= 200 && res.status < 300) sim.world.heard(body);
}

export function commandArbitraries(enabled: ReadonlySet<BehaviourName>): fc.Arbitrary<SimCommand>[] {
  const on = (name: BehaviourName) => enabled.has(name);
  const list: fc.Arbitrary<SimCommand>[] = [];

  list.push(
    fc
      .tuple(fc.constantFrom(...VALUES), fc.boolean(), via(enabled))
      .map(([cents, issueNow, at]) => command('newCheckout', [cents, issueNow, at], (context) => newCheckout(context, cents, issueNow, at))),
  );
  const pageCommand = fc
    .tuple(index, fc.boolean(), via(enabled))
    .map(([ci, renew, at]) => command('page', [ci, renew && on('twice'), at], (c) => page(c, ci, renew && on('twice'), at)));
  list.push(pageCommand, pageCommand);

  // The customer pays a code shown: the last one, or (twice) an earlier one; on time, or (late) after its expiry.
  const amounts = on('amounts') ? fc.constantFrom('full', 'full', 'less', 'more') : fc.constant('full');
  const payCommand = fc.tuple(index, on('twice') ? fc.nat({ max: 2 }) : fc.constant(0), amounts).map(([ci, back, amount]) =>
    command('pay', [ci, back, amount], async ({ sim }) => {
      const checkout = sim.checkouts[ci % Math.max(1, sim.checkouts.length)];
      if (!checkout || checkout.shown.length === 0) return;
      const reference = checkout.shown[Math.max(0, checkout.shown.length - 1 - back)]!;
      const truth = sim.world.payments.get(reference)!;
      if (!on('late') && sim.clock >= truth.expiresAt) return;
      const cents = amount === 'less' ? truth.valueCents - 100 : amount === 'more' ? truth.valueCents + 100 : truth.valueCents;
      sim.world.pay(reference, cents);
    }),
  );
  list.push(payCommand, payCommand);

  const steps = on('late') ? fc.constantFrom(1_000, 30_000, 5 * 60_000, 15 * 60_000, 3_600_000, 65 * 60_000) : fc.constantFrom(1_000, 30_000, 2 * 60_000);
  const clockCommand = steps.map((ms) => command('clock', [ms], async ({ sim }) => await sim.advance(ms)));
  list.push(clockCommand, clockCommand);

  // The partner's notifications: the oldest waiting, or another (reordered); through the intake the partner uses.
  const deliverCommand = fc
    .tuple(on('notifications') ? index : fc.constant(0), on('notifications') ? fc.boolean() : fc.constant(false), via(enabled))
    .map(([ni, keep, at]) =>
      command('deliver', [ni, keep, at], async ({ sim }) => {
        const { outgoing } = sim.world;
        if (outgoing.length === 0) return;
        const notice = outgoing[ni % outgoing.length]!;
        if (!keep) outgoing.splice(ni % outgoing.length, 1);
        await deliver(sim, notice.body, true, at);
      }),
    );
  list.push(deliverCommand, deliverCommand);
  list.push(
    via(enabled).map((at) =>
      command('reconcile', [at], async ({ sim }) => {
        await sim
          .instance(at)
          .app.pix.reconciler.runOnce()
          .catch(() => undefined);
        await sim.settle();
      }),
    ),
  );
  list.push(
    via(enabled).map((at) =>
      command('deliveries', [at], async ({ sim }) => {
        await sim.instance(at).app.pix.notifier?.runOnce();
      }),
    ),
  );
  // The merchant's server and the customer's page read the checkout and its payment.
  list.push(
    fc.tuple(index, via(enabled)).map(([ci, at]) =>
      command('poll', [ci, at], async ({ sim, memory }) => {
        const checkout = sim.checkouts[ci % Math.max(1, sim.checkouts.length)];
        if (!checkout) return;
        const view = await sim.api(at, 'GET', `/api/checkouts/${checkout.id}`);
        crashIfHung(sim, at);
        if (view.status === 200 && view.body?.payment) checkShownPayment(sim, memory, view.body.payment, `the merchant's view of ${checkout.tag}`);
        const last = checkout.shown.at(-1);
        if (!last) return;
        const res = await sim.request(at, 'GET', `/api/payments/${last}`);
        crashIfHung(sim, at);
        if (res.status === 200) checkShownPayment(sim, memory, res.body ?? {}, `the browser's read of ${last}`);
      }),
    ),
  );

  if (on('notifications')) {
    list.push(
      index.map((ni) =>
        command('drop', [ni], async ({ sim }) => {
          const { outgoing } = sim.world;
          if (outgoing.length > 0) outgoing.splice(ni % outgoing.length, 1);
        }),
      ),
    );
    list.push(
      index.map((ni) =>
        command('resend', [ni], async ({ sim }) => {
          const { sent } = sim.world;
          if (sent.length > 0) await deliver(sim, sent[ni % sent.length]!.body, true);
        }),
      ),
    );
    // Anyone may call an open intake: words that lie, about a real reference.
    list.push(
      fc.tuple(index, fc.constantFrom('approved', 'paid', 'canceled', 'cancelled')).map(([pi, word]) =>
        command('spoof', [pi, word], async ({ sim }) => {
          const references = [...sim.world.payments.keys()];
          if (references.length === 0) return;
          const reference = references[pi % references.length]!;
          const kind = word.startsWith('cancel') ? 'canceled' : 'approved';
          await deliver(sim, JSON.stringify({ event: `payment.${kind}`, data: { type: 'payment', external_reference: reference, status: word } }), false);
        }),
      ),
    );
  }

  if (on('faults')) {
    const ops: [FaultOp, readonly Fault[]][] = [
      ['createPayment', PAYMENT_FAULTS.filter((f) => f !== 'hang')],
      ['getPayment', READ_FAULTS],
    ];
    if (on('payouts')) {
      ops.push(['createTransfer', TRANSFER_FAULTS.filter((f) => f !== 'hang')], ['checkTransfer', READ_FAULTS]);
    }
    const faultCommand = fc
      .constantFrom(...ops)
      .chain(([op, faults]) => fc.tuple(fc.constant(op), fc.constantFrom(...faults), fc.integer({ min: 1, max: 3 })))
      .map(([op, fault, n]) =>
        command('fault', [op, fault, n], async ({ sim }) => {
          // The next n calls of that operation (a fault that lasts a while).
          for (let i = 0; i < n; i++) sim.world.arm(op, fault);
        }),
      );
    list.push(faultCommand, faultCommand);
  }

  if (on('crash')) {
    list.push(via(enabled).map((at) => command('crash', [at], async ({ sim }) => sim.crash(at))));
    // Dies in the middle of a partner call: the partner acted, the proxy never heard.
    list.push(
      fc.tuple(index, fc.constantFrom(...(on('payouts') ? (['issue', 'refund'] as const) : (['issue'] as const)))).map(([ci, what]) =>
        command('crashDuring', [ci, what], async (context) => {
          const { sim } = context;
          if (what === 'issue') {
            sim.world.arm('createPayment', 'hang');
            await page(context, ci, on('twice'), 0);
          } else {
            sim.world.arm('createTransfer', 'hang');
            await refund(context, ci, 'all', false);
          }
          sim.world.faults.splice(0); // an armed hang left unused is no fault of a later step
          sim.crash(0);
        }),
      ),
    );
  }

  if (on('payouts')) {
    list.push(
      fc
        .tuple(index, fc.constantFrom('all', 'half', 'over'), fc.boolean())
        .map(([ci, how, reuse]) => command('refund', [ci, how, reuse], (context) => refund(context, ci, how, reuse))),
    );
    list.push(
      fc.tuple(fc.constantFrom(500, 1250), fc.boolean()).map(([cents, reuse]) =>
        command('transfer', [cents, reuse], async ({ sim }) => {
          const key = reuse && sim.keys.length > 0 ? sim.keys.at(-1)! : sim.newKey();
          const res = await sim.api(0, 'POST', '/api/transfers', { value: cents / 100, pix_key: 'supplier@example.com' }, { 'Idempotency-Key': key });
          crashIfHung(sim, 0);
          if (res.status === 500 || res.status > 504) throw new Error(`a transfer answered HTTP ${res.status}: ${JSON.stringify(res.body)}`);
        }),
      ),
    );
    list.push(
      fc.tuple(index, fc.constantFrom('approved' as const, 'canceled' as const)).map(([ti, outcome]) =>
        command('settleTransfer', [ti, outcome], async ({ sim }) => {
          const pending = [...sim.world.transfers.values()].filter((t) => t.status === 'pending');
          if (pending.length > 0) sim.world.settleTransfer(pending[ti % pending.length]!.reference, outcome);
        }),
      ),
    );
  }

  if (on('interleavings') && on('twice')) {
    // Interleaving: the customer pays a code just after the proxy asked the partner about it (the
    // check before a new code), so the new code would be created after the old one was paid.
    list.push(
      fc.tuple(index, fc.boolean()).map(([ci, notified]) =>
        command('payAfterNextRead', [ci, notified], async ({ sim }) => {
          const checkout = sim.checkouts[ci % Math.max(1, sim.checkouts.length)];
          const last = checkout?.shown.at(-1);
          if (last)
            sim.world.payAfterRead = {
              reference: last,
              notified: notified ? (notice) => sim.postOnly(0, intakePath(sim, true), notice.body).then(() => undefined) : null,
            };
        }),
      ),
    );
  }
  if (on('interleavings') && on('payouts')) {
    // Interleaving: the partner approves a transfer at once and its notification is handled before the create's answer.
    list.push(
      via(enabled).map((at) =>
        command('settleDuringCreate', [at], async ({ sim }) => {
          sim.world.settleDuringCreate = async (notice) => {
            await deliver(sim, notice.body, true, at);
          };
        }),
      ),
    );
  }

  if (on('interleavings') && on('merchant') && on('instances')) {
    // Interleaving: a delivery outlives its claim; the other instance delivers meanwhile, then this one's attempt fails.
    list.push(
      via(enabled).map((at) =>
        command('slowDelivery', [at], async ({ sim }) => {
          if (sim.instances.length < 2) return;
          sim.receiver.duringNext = async () => {
            sim.clock += 31_000;
            await sim.instance(at + 1).app.pix.notifier?.runOnce();
            return false;
          };
          await sim.instance(at).app.pix.notifier?.runOnce();
          sim.receiver.duringNext = undefined;
        }),
      ),
    );
  }

  if (on('interleavings')) {
    // Two things at once (two pages, a page and a notification, a pass and a refund): the event
    // loop interleaves them at every await, the same way each time.
    const action = fc.oneof(
      fc.tuple(fc.constant('page' as const), index, fc.boolean(), via(enabled)),
      fc.tuple(fc.constant('deliver' as const), index, fc.constant(false), via(enabled)),
      fc.tuple(fc.constant('reconcile' as const), index, fc.constant(false), via(enabled)),
      ...(on('payouts') ? [fc.tuple(fc.constant('refund' as const), index, fc.constant(false), fc.constant(0))] : []),
    );
    list.push(
      fc.tuple(action, action).map(([a, b]) =>
        command('together', [a, b], async (context) => {
          const run = async ([kind, i, flag, at]: [string, number, boolean, number]) => {
            const { sim } = context;
            if (kind === 'page') return page(context, i, flag && on('twice'), at);
            if (kind === 'refund') return refund(context, i, 'all', false);
            if (kind === 'reconcile') {
              await sim
                .instance(at)
                .app.pix.reconciler.runOnce()
                .catch(() => undefined);
              return;
            }
            const { outgoing } = sim.world;
            if (outgoing.length === 0) return;
            const notice = outgoing.splice(i % outgoing.length, 1)[0]!;
            await deliver(sim, notice.body, true, at);
          };
          await Promise.all([run(a), run(b)]);
          await context.sim.settle();
        }),
      ),
    );
  }

  if (on('merchant')) {
    list.push(fc.integer({ min: 1, max: 3 }).map((n) => command('merchantDown', [n], async ({ sim }) => void (sim.receiver.failNext += n))));
  }

  if (on('partner')) {
    const lastShown = (sim: Sim, ci: number, back = 0) => {
      const checkout = sim.checkouts[ci % Math.max(1, sim.checkouts.length)];
      return checkout?.shown[Math.max(0, checkout.shown.length - 1 - back)];
    };
    // A failed attempt to pay a code shown (it stays payable); the partner may say "payment.failed".
    list.push(
      index.map((ci) =>
        command('failAttempt', [ci], async ({ sim }) => {
          const reference = lastShown(sim, ci);
          if (reference) sim.world.failAttempt(reference);
        }),
      ),
    );
    // The partner gives a paid code's money back (a return after approval).
    list.push(
      fc.tuple(index, fc.nat({ max: 2 })).map(([ci, back]) =>
        command('giveBack', [ci, back], async ({ sim }) => {
          const reference = lastShown(sim, ci, back);
          if (reference) sim.world.giveBack(reference);
        }),
      ),
    );
    // Our own race: the customer pays a new code while the proxy's read right after its create is in flight.
    list.push(fc.constant(null).map(() => command('payDuringFirstRead', [], async ({ sim }) => void (sim.world.payDuringFirstRead = true))));
    // A read in flight across the customer's payment: the customer pays while the proxy's next read of the code is on its way.
    list.push(
      fc.tuple(index, via(enabled)).map(([ci, at]) =>
        command('payDuringRead', [ci, at], async (context) => {
          const reference = lastShown(context.sim, ci);
          if (!reference) return;
          context.sim.world.payBeforeRead = { reference };
          const res = await context.sim.request(at, 'GET', `/api/payments/${reference}`);
          crashIfHung(context.sim, at);
          context.sim.world.payBeforeRead = null;
          if (res.status === 200) checkShownPayment(context.sim, context.memory, res.body ?? {}, `the browser's read of ${reference} across its payment`);
        }),
      ),
    );
  }
  return list;
}

/** The merchant's server creates a checkout (issuing its first code now, or on the page's first call). */
export async function newCheckout({ sim, memory }: SimContext, cents: number, issueNow: boolean, at: number): Promise<void> {
  const tag = `sim order ${sim.checkouts.length + 1}`;
  const res = await sim.api(at, 'POST', '/api/checkouts', {
    value: cents / 100,
    order_id: `order-${sim.checkouts.length + 1}`,
    description: tag,
    ...(issueNow ? { issue_payment: true } : {}),
  });
  crashIfHung(sim, at);
  if (res.status !== 201 && res.status !== 200) {
    if (res.status === 0) return;
    throw new Error(`creating a checkout answered HTTP ${res.status}: ${JSON.stringify(res.body)}`);
  }
  const id = String(res.body?.checkout_id);
  const checkout = { id, tag, valueCents: cents, shown: [] as string[] };
  sim.checkouts.push(checkout);
  const payment = res.body?.payment as { reference?: string } | undefined;
  if (payment?.reference) {
    checkout.shown.push(payment.reference);
    checkNewCode(sim, tag, payment.reference);
    checkShownPayment(sim, memory, payment, `the new checkout ${tag}`);
  }
}

async function refund({ sim }: SimContext, ci: number, how: 'all' | 'half' | 'over', reuse: boolean): Promise<void> {
  const checkout = sim.checkouts[ci % Math.max(1, sim.checkouts.length)];
  if (!checkout) return;
  const key = reuse && sim.keys.length > 0 ? sim.keys.at(-1)! : sim.newKey();
  const value = how === 'all' ? undefined : how === 'half' ? Math.floor(checkout.valueCents / 2) / 100 : (checkout.valueCents + 100) / 100;
  const res = await sim.api(
    0,
    'POST',
    `/api/checkouts/${checkout.id}/refunds`,
    { pix_key: 'customer@example.com', ...(value !== undefined ? { value } : {}) },
    { 'Idempotency-Key': key },
  );
  crashIfHung(sim, 0);
  if (res.status === 500 || res.status > 504) throw new Error(`a refund answered HTTP ${res.status}: ${JSON.stringify(res.body)}`);
}

/**
 * The end of every run: the partner heals, every notification still waiting arrives, the clock
 * passes every cancellation, the reconciler and the deliveries run until nothing is left.
 */
export async function heal(sim: Sim): Promise<void> {
  sim.world.healAll();
  sim.receiver.failNext = 0;
  sim.receiver.duringNext = undefined;
  for (const at of sim.instances.keys()) crashIfHung(sim, at);
  for (const notice of sim.world.outgoing.splice(0)) await deliver(sim, notice.body, true);
  // A few passes seconds apart first, as the proxy's own loops would run before an hour goes by.
  for (let pass = 0; pass < 3; pass++) {
    sim.clock += 10_000;
    await sim.fireTimers();
    for (const instance of sim.instances) {
      await instance.app.pix.reconciler.runOnce().catch(() => undefined);
      await sim.settle();
    }
  }
  await sim.advance(sim.world.behaviour.expirationSeconds * 1000 + 2 * 3_600_000);
  for (const notice of sim.world.outgoing.splice(0)) await deliver(sim, notice.body, true);
  for (let pass = 0; pass < 4; pass++) {
    await sim.advance(2 * 3_600_000);
    for (const instance of sim.instances) {
      await instance.app.pix.reconciler.runOnce().catch(() => undefined);
      await sim.settle();
      await instance.app.pix.notifier?.runOnce();
    }
  }
}
