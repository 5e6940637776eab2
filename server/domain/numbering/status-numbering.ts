/**
 * Whether each configured status code (PIX_STATUS_CODES, PIX_TRANSFER_STATUS_CODES) may decide: none does until it proves itself from
 * an observation no other plausible code explains, and a contradiction stops only the codes involved. The rulebook is
 * server/partner/ASSUMPTIONS.md ("When a status code decides"); the operator's guide, docs/partner-status-codes.md.
 */
import type { Logger } from '../../log.ts';
import type { PartnerStatus } from '../../partner/read-fields.ts';
import {
  DEFAULT_TRANSFER_STATUS_CODES,
  asStatusCodes,
  type AnyStatusCodes,
  STATUS_MEANINGS,
  formatStatusCodes,
  wordMeaning,
  type StatusCodes,
  type StatusMeaning,
} from '../../partner/status-codes.ts';
import type { TokenStore } from '../../partner/token-store.ts';
import { CodeBook, type BookReport } from './code-book.ts';
import { iso, proofWindows, type PaymentTimes } from './proof-windows.ts';
import { KeptVerdicts, type NumberingKind } from './verdicts.ts';
import { REAL_CLOCK } from '../../runtime/runtime.ts';

export type { CodeState, NumberingKind } from './verdicts.ts';
export type { BookReport, CodeReport, CodeVerdict, NumberingState } from './code-book.ts';
export { APPROVED_MARGIN_MS, CANCELED_MARGIN_MS, PARTNER_DEFAULT_EXPIRATION_MS, proofWindows } from './proof-windows.ts';

export interface NumberingReport extends BookReport {
  /** The first mismatch of the payments' codes, as one line: for a reader of /ready that takes one problem, not the list. */
  problem?: string;
  /** The transfers' own book. */
  transfers: BookReport;
  /** Set while a transfer code is a mismatch. */
  transfers_problem?: string;
}

/** What is known of the payment whose status is observed: the spec's cancellation rule needs its times. */
export interface Observation extends PaymentTimes {
  reference: string;
  /** Epoch ms, the proxy's clock when the answer arrived. */
  now: number;
  /** Epoch ms, when the read was sent (the partner's state is at least this late). Absent: `now`. */
  askedAt?: number;
  /** The payment is recorded paid (a read after approval: a return's code). */
  paid?: boolean;
}

/** How often the kept verdicts are read again: another instance sharing the store may have reached one. */
const RELOAD_MS = 2000;

/** The meanings an outcome may follow: a code read with one of them while words say the outcome is a read that has not caught up (not a contradiction). */
const WAITS_FOR: Record<'approved' | 'canceled', readonly StatusMeaning[]> = {
  approved: ['pending', 'expired', 'failed', 'returned'],
  canceled: ['pending', 'expired', 'failed'],
};

export { asStatusCodes, type AnyStatusCodes } from '../../partner/status-codes.ts';

export interface NumberingOptions {
  /** The transfers' own numbering (PIX_TRANSFER_STATUS_CODES); the sandbox's by default, never the payments'. */
  transferCodes?: AnyStatusCodes | undefined;
  /** Epoch ms, for the evidence's times and resets (createServices' clock). */
  now?: () => number;
  /** A monotonic clock in ms, for how often the store is read again. */
  monotonic?: () => number;
}

export class StatusNumbering {
  readonly codes: StatusCodes;
  readonly transferCodes: StatusCodes;
  private readonly payments: CodeBook;
  private readonly transfers: CodeBook;
  private loaded: Promise<void> | null = null;
  private loadedAt = 0;
  private readonly monotonic: () => number;
  private readonly now: () => number;

  /** `scope` names the partner service and account (tokenStoreKey): a verdict about one says nothing of another. */
  constructor(
    codes: AnyStatusCodes,
    private readonly log: Logger,
    memory?: TokenStore,
    scope = '',
    options: NumberingOptions = {},
  ) {
    this.codes = asStatusCodes(codes);
    this.transferCodes = asStatusCodes(options.transferCodes ?? DEFAULT_TRANSFER_STATUS_CODES);
    this.now = options.now ?? REAL_CLOCK.now;
    this.monotonic = options.monotonic ?? REAL_CLOCK.monotonic;
    this.payments = new CodeBook('payment', this.codes, log, new KeptVerdicts(memory, scope, 'payment', formatStatusCodes(this.codes)), this.now);
    this.transfers = new CodeBook(
      'transfer',
      this.transferCodes,
      log,
      new KeptVerdicts(memory, scope, 'transfer', formatStatusCodes(this.transferCodes)),
      this.now,
    );
  }

  private book(kind: NumberingKind): CodeBook {
    return kind === 'payment' ? this.payments : this.transfers;
  }

  /** Reads the verdicts kept by an earlier run, or by another instance sharing the store: once, and again every few seconds. */
  load(): Promise<void> {
    if (this.loaded && this.monotonic() - this.loadedAt >= RELOAD_MS) this.loaded = null;
    if (!this.loaded) this.loadedAt = this.monotonic();
    this.loaded ??= (async () => {
      for (const book of [this.payments, this.transfers]) {
        const kept = await book.verdicts.read();
        book.absorb(kept.book, kept.legacyVerified, kept.legacyProblem);
      }
    })().catch(() => undefined);
    return this.loaded;
  }

  /** Reads the kept verdicts now, not at the next RELOAD_MS (another instance may know a code already). Concurrent calls share one read. */
  reload(): Promise<void> {
    if (!this.reloading) {
      this.loaded = null;
      this.reloading = this.load().finally(() => (this.reloading = null));
    }
    return this.reloading;
  }
  private reloading: Promise<void> | null = null;

  report(): NumberingReport {
    const payments = this.payments.report();
    const transfers = this.transfers.report();
    const problem = payments.code_states.find((c) => c.state === 'mismatch');
    const transfersProblem = transfers.code_states.find((c) => c.state === 'mismatch');
    return {
      ...payments,
      ...(problem ? { problem: `status code ${problem.code}: ${problem.evidence.at(-1) ?? 'see the log'}` } : {}),
      transfers,
      ...(transfersProblem ? { transfers_problem: `transfer status code ${transfersProblem.code}: ${transfersProblem.evidence.at(-1) ?? 'see the log'}` } : {}),
    };
  }

  /** Forgets every verdict (after the setting was fixed): `pix-checkout numbering reset`. Instances sharing the store drop theirs at their next read. */
  async reset(): Promise<void> {
    const at = this.now();
    for (const book of [this.payments, this.transfers]) {
      await book.verdicts.reset(at);
      book.absorb({ configured: book.configured, codes: {}, fresh: [], reset_at: at }, [], null);
    }
  }

  /**
   * A numbering the partner itself states (only the project's own sandbox can): each code listed with
   * the stated meaning is verified; one listed with another meaning is a mismatch (for this run).
   */
  stated(kind: NumberingKind, stated: StatusCodes, source: string): void {
    const book = this.book(kind);
    for (const meaning of STATUS_MEANINGS)
      for (const code of stated[meaning]) {
        const listed = book.listed(code);
        if (listed === meaning) book.verify(code, `${source}: ${code} is ${meaning}`);
        else if (listed !== null) book.contradict(code, `${source}: ${code} is ${meaning}, not ${listed}`, false, '');
      }
  }

  /** Whether a payment code listed for `meaning` decides now (one of them proved itself). */
  decides(meaning: StatusMeaning, kind: NumberingKind = 'payment'): boolean {
    return this.book(kind).hasVerified(meaning);
  }

  /** True until a pending code is known (verified, or seen on a create's answer): then one read after a create is worth its cost. */
  needsFreshRead(): boolean {
    // Not while the partner contradicts the setting: the pending code cannot verify then, and a read per create would be spent for nothing.
    return !this.payments.hasVerified('pending') && !this.payments.doubtful();
  }

  /**
   * The status of a payment or transfer just created (pending by definition), from the create's
   * answer: verifies a listed pending code; a code listed otherwise is a mismatch of that code.
   * `background`: from a read sent after the create, which the customer's payment may have overtaken
   * (a race of our own, never a mismatch): only a pending code counts, any other is judged as a read.
   */
  async observeFresh(status: PartnerStatus, reference: string, kind: NumberingKind = 'payment', background?: Omit<Observation, 'reference'>): Promise<void> {
    await this.load();
    const book = this.book(kind);
    if (status.word !== null || status.code === null) return;
    const code = status.code;
    const listed = book.listed(code);
    // A read that may have overtaken the customer's payment proves nothing of a new payment, not even pending: it is judged as any read.
    if (background) {
      if (kind === 'payment') await this.observe(status, { ...background, reference });
      return;
    }
    if (listed === 'pending') {
      if (book.verify(code, `a new ${kind} (${reference}) had it`)) await this.save(book);
      return;
    }
    // Pending at the partner: the setting is wrong about it (listed otherwise), or misses the partner's pending code.
    let changed = book.freshCode(code);
    const setting = kind === 'payment' ? 'PIX_STATUS_CODES' : 'PIX_TRANSFER_STATUS_CODES';
    const why =
      listed === null
        ? `a new ${kind} (${reference}) has status ${code}: it is pending at the partner, but ${setting} lists pending as ${book.codes.pending.join('|')} (configured ${book.configured})`
        : `a new ${kind} (${reference}) has status ${code}, so it is pending, not ${listed} (configured ${book.configured})`;
    changed = book.contradict(code, why, true, reference) || changed;
    if (changed) await this.save(book);
  }

  /**
   * A payment's status as read from the partner (a read of our own, or a notification's
   * confirmation), before it is decided on: its time in the payment's life may verify a code or
   * prove one wrong (the rulebook: ASSUMPTIONS.md).
   */
  async observe(status: PartnerStatus | null, at: Observation): Promise<void> {
    await this.load();
    if (!status || status.word !== null || status.code === null) return;
    const book = this.payments;
    const code = status.code;
    const { reference } = at;
    const listed = book.listed(code);
    const state = book.state(code);
    if (book.knownPending(code)) return;
    const { approvedBefore, canceledFrom } = proofWindows(at);
    const askedAt = at.askedAt ?? at.now;
    const seen = `${iso(at.now)} on payment ${reference}`;
    let changed = false;
    if (at.paid) {
      // A payment recorded paid is never canceled (spec 3): another code now is a return.
      if (book.codes.approved.includes(code)) return;
      if (listed === 'returned') changed = book.verify(code, `read ${seen}, recorded paid`);
      else if (listed === 'pending' || listed === 'canceled' || listed === 'expired')
        changed = book.contradict(code, `read ${seen}, which was recorded paid: it can only be a return, not ${listed}`, true, reference);
      else if (listed === null) changed = book.unknown(code, `read ${seen}, recorded paid (a return?)`, reference);
      if (changed) await this.save(book);
      return;
    }
    if (listed === 'pending') return;
    // Another instance sharing the store may have verified the pending code a moment ago: read the
    // verdicts now rather than at the next reload, or this read's evidence is lost.
    if (!book.hasVerified('pending') && !book.doubtful()) await this.reload();
    // Until a listed pending code is verified, a "change" cannot be told: a code seen may be the partner's pending.
    if (!book.hasVerified('pending')) return;
    if (at.now < approvedBefore) {
      // Before the partner can have expired the code: approved, a failed attempt or a return; never canceled nor expired.
      const why = `read ${seen}, before the partner can have expired it (${iso(approvedBefore)})`;
      if (listed === 'approved') changed = book.verify(code, `${why}: so ${code} is approved`);
      else if (listed === 'canceled' || listed === 'expired')
        changed = book.contradict(code, `${why}: it can be approved, failed or returned, never ${listed}`, true, reference);
      else if (listed === null) changed = book.unknown(code, `${why}: approved, failed or returned; not listed`, reference);
      if (changed) await this.save(book);
      return;
    }
    // After the earliest expiry: an expired code seen now verifies once this payment reads canceled.
    if (listed === 'expired' && state === 'unverified') book.rememberExpired(reference, code);
    if (askedAt < canceledFrom) {
      if (listed === null) changed = book.unknown(code, `read ${seen}, past its expiration: unknown, not paid`, reference);
      if (changed) await this.save(book);
      return;
    }
    // Well past the cancellation hour: an unpaid payment is canceled; this may still be a slow cancellation, a return or a failed attempt.
    if (!book.hasVerified('approved') || book.codes.approved.includes(code) || state === 'mismatch') return;
    const why = `read ${seen} by a request sent at ${iso(askedAt)}, well past its cancellation hour (${iso(canceledFrom)})`;
    if (listed === 'canceled') {
      changed = book.verify(code, `${why}, neither pending nor approved`);
      const expired = book.takeExpired(reference);
      if (expired !== undefined && book.state(code) === 'verified')
        changed = book.verify(expired, `read on payment ${reference} past its expiration, which the verified canceled code ${code} followed`) || changed;
    } else if (listed === null) changed = book.unknown(code, `${why}: not listed (a slow cancellation, a return?)`, reference);
    if (changed) await this.save(book);
  }

  /**
   * What a status read from the partner means, for deciding: a word always; a code only once it is
   * verified and no mismatch. Null means "decide nothing from it".
   */
  meaning(status: PartnerStatus | null, kind: NumberingKind = 'payment'): StatusMeaning | null {
    if (!status) return null;
    if (status.word !== null) return wordMeaning(status.word);
    if (status.code === null) return null;
    return this.book(kind).decidingMeaning(status.code);
  }

  /** Whether a code listed `expired` may still be paid (the setting's `expired` vs `expired_unpayable`). */
  expiredPayable(kind: NumberingKind = 'payment'): boolean {
    return this.book(kind).codes.expiredPayable;
  }

  /**
   * An explicit outcome, in words, from an authenticated notification, checked against the status
   * the partner reports now. True when it may be applied (the rulebook: ASSUMPTIONS.md). `kind` picks
   * the book.
   */
  confirmExplicit(outcome: 'approved' | 'canceled', status: PartnerStatus | null, reference: string, kind: NumberingKind = 'payment'): boolean {
    if (!status) return false;
    const book = this.book(kind);
    if (status.word !== null) {
      const said = wordMeaning(status.word);
      if (said !== outcome && (said === 'approved' || said === 'canceled')) this.contradicted.add(reference);
      return said === outcome;
    }
    const code = status.code;
    if (code === null) return false;
    // "No longer pending" needs a pending code known, and this one not among them.
    if (!book.pendingKnown() || book.knownPending(code)) return false;
    const listed = book.listed(code);
    const state = book.state(code);
    const verified = book.decidingMeaning(code);
    if (verified === outcome) return true;
    const said = `an authenticated notification said ${outcome} for ${kind} ${reference}`;
    // Words settled this code the other way before (where no code could decide): never both ways.
    const before = book.wordsSaid.get(code);
    if (before !== undefined && before !== outcome) return false;
    if (listed === outcome && state === 'unverified' && !book.doubtful()) {
      // Words agreeing with the setting corroborate the code (not while the partner has contradicted the setting elsewhere); a payment's canceled only once approved
      // is known (the spec's order); a transfer's either way (no time rule proves its codes).
      if (outcome === 'canceled' && kind === 'payment' && !book.hasVerified('approved')) return false;
      if (book.verify(code, `${said}, whose status is ${code}`)) void this.save(book);
      return true;
    }
    // What the code is taken to mean here: verified; else as listed, unless it is a mismatch or the setting is in doubt.
    const known = verified ?? (state === 'mismatch' || book.doubtful() ? null : listed);
    if (known !== null) {
      // A state the outcome may follow: the partner's reads have not caught up with its notification yet.
      if (WAITS_FOR[outcome].includes(known)) return false;
      // The partner's own notification contradicts what the code is said (or proved) to mean: neither wins.
      this.contradicted.add(reference);
      const why = `${said}, whose status is ${code}, which ${verified !== null ? 'was verified as' : 'the setting calls'} ${known}`;
      if (book.contradict(code, why, false, reference)) void this.save(book);
      return false;
    }
    // The code cannot decide (not listed, a mismatch, a setting in doubt): the words decide, as far as
    // they can be told apart from what is known of the codes.
    let applies: boolean;
    if (outcome === 'approved') {
      // While no approved code is verified, words teach one approved code; another code is never made approved by words (it may be the canceled one).
      const learned = [...book.wordsSaid].filter(([, said]) => said === 'approved').map(([c]) => c);
      applies =
        !(book.hasVerified('canceled') && book.codes.canceled.includes(code)) &&
        (book.hasVerified('approved') || learned.length === 0 || learned.includes(code));
    } else {
      // Canceled only for a code known to be no approved one (verified, or one words settled approved).
      const approvedKnown = book.hasVerified('approved') || [...book.wordsSaid.values()].includes('approved');
      const maybeApproved = book.codes.approved.includes(code) && !book.doubtful();
      applies = approvedKnown && !maybeApproved;
    }
    if (applies && before === undefined) {
      book.wordsSaid.set(code, outcome);
      this.log.warn(
        { reference, status: code, kind },
        `status ${code} taken as ${outcome}, from an authenticated notification the partner confirmed is no longer pending`,
      );
    }
    return applies;
  }

  /** Payments whose authenticated words the partner's status contradicted in this run. */
  private readonly contradicted = new Set<string>();

  /** Whether authenticated words about this payment were contradicted by the partner's status (not another payment's doing). */
  wasContradicted(reference: string): boolean {
    return this.contradicted.has(reference);
  }

  private async save(book: CodeBook): Promise<void> {
    await book.verdicts.save(book.book());
  }
}
