/**
 * Whether the configured meaning of the partner's status codes (PIX_STATUS_CODES for payments,
 * PIX_TRANSFER_STATUS_CODES for transfers) can be trusted, code by code. A guess never decides money,
 * so a code decides nothing until it has proved itself from an observation no other plausible code
 * explains (docs/partner-status-codes.md has the rules for the operator):
 *
 * - pending: a payment (or transfer) just created is pending by definition. The code of a create's
 *   answer verifies a code listed pending; any other code there (listed otherwise, or not at all: the
 *   setting misses the partner's pending code) is a mismatch of that code; so is the code of a read
 *   made before the code is shown to anyone. A read after it is shown is no such proof, not even of
 *   pending (the customer may have paid meanwhile: a race of our own is never a mismatch): it is
 *   judged as any read is.
 * - approved: once a listed pending code is verified, a code other than it seen on a payment strictly before the
 *   earliest moment the partner can have expired it (our send time plus the shorter of the expiration
 *   we asked for and the spec's default, 3600 s, since a partner may ignore what we asked; less a
 *   margin) can only be approved, or a failed attempt, or a return after approval. So a code listed
 *   approved verifies; one listed canceled or expired there is a mismatch of that code; one listed
 *   failed or returned, or one not listed at all, proves nothing (an unlisted one is noted `unknown`).
 * - canceled: once approved is verified, a code that is neither a pending nor an approved one, read on
 *   a payment by a request sent well past its cancellation hour (our send time plus the longer of the
 *   expiration asked and the default, plus the spec's hour, plus a margin; counted from our own send
 *   time, since the partner counts a duration) verifies a code listed canceled. Anything else there
 *   (an expired code the partner is slow to cancel, a return, a failed attempt) proves nothing.
 * - expired: a code listed expired, read on a payment past its expiration, verifies once that same
 *   payment is read later with a verified canceled code.
 * - returned: a code listed returned, read on a payment recorded paid, verifies (the spec: a paid
 *   payment is never canceled); a code listed pending, canceled or expired there is a mismatch.
 * - failed: never final, decides nothing, and needs no proof.
 * - A code not listed decides nothing, ever, and is not by itself a mismatch: it is noted (`unknown`,
 *   with what was seen) for `/ready` and `pix-checkout numbering show`.
 * - A mismatch stops only the codes involved: each decides nothing until `pix-checkout numbering
 *   reset` (after the setting is fixed) or a changed setting; the other codes keep deciding. It is
 *   logged at error, shown by /ready, and kept in the store (one from words lasts this run).
 * - Authenticated words (a notification through a secret path or from the partner's source address)
 *   are checked against the code the partner reports now. Words agreeing with the code listed for
 *   their meaning verify it (canceled once approved is known); words contradicting a code's listed
 *   meaning make it a mismatch (this run). Where no code can decide (not listed, not verified, or a
 *   mismatch) the words are applied when the partner no longer reports a pending code ("canceled"
 *   only for a code known to be no approved one).
 * - Transfers keep their own book, verified the same way by their own creates and authenticated
 *   words: the payments' codes never settle a transfer. A fresh install settles its first payout from
 *   the partner's authenticated notification that names the outcome in words (the new format).
 * - Verdicts are kept per partner service and account and per setting, shared by the instances
 *   sharing the store (each reads them again every few seconds).
 * - A status given as a word (`paid`) means what it says and needs no numbering; failure words mean
 *   `failed` (never final).
 */
import { LIMITS } from '../../../src/shared/limits.ts';
import type { Logger } from '../../log.ts';
import type { PartnerStatus } from '../../partner/read-fields.ts';
import {
  DEFAULT_TRANSFER_STATUS_CODES,
  asStatusCodes,
  type AnyStatusCodes,
  REQUIRED_MEANINGS,
  STATUS_MEANINGS,
  codeMeaning,
  formatStatusCodes,
  listedCodes,
  wordMeaning,
  type StatusCodes,
  type StatusMeaning,
} from '../../partner/status-codes.ts';
import type { TokenStore } from '../../partner/token-store.ts';
import { EVIDENCE_KEPT, KeptVerdicts, type CodeState, type KeptBook, type KeptCode, type NumberingKind } from './verdicts.ts';
import { REAL_CLOCK } from '../../runtime/runtime.ts';

export type { CodeState, NumberingKind } from './verdicts.ts';
export type NumberingState = 'unverified' | 'verified' | 'mismatch';
export type CodeVerdict = 'unverified' | 'verified' | 'mismatch';

/** One code as `/ready` and `pix-checkout numbering show` print it. */
export interface CodeReport {
  code: number;
  /** What the setting says it means; null for a code it does not list. */
  listed: StatusMeaning | null;
  state: CodeState;
  evidence: string[];
}

export interface BookReport {
  /** `verified` once pending, approved and canceled each have a verified code; `mismatch` while any code is one. */
  state: NumberingState;
  /** The configured numbering, as the setting spells it. */
  configured: string;
  /** Per meaning the setting lists: verified once one of its codes is; mismatch when one of its codes is and none is verified. */
  codes: Partial<Record<StatusMeaning, CodeVerdict>>;
  /** Every listed code, and every unlisted one seen. */
  code_states: CodeReport[];
  /** One line per code that is a mismatch or unknown: for /ready's warnings. */
  problems: string[];
}

export interface NumberingReport extends BookReport {
  /** The first mismatch of the payments' codes, for the older readers of /ready. */
  problem?: string;
  /** The transfers' own book. */
  transfers: BookReport;
  /** Set while a transfer code is a mismatch. */
  transfers_problem?: string;
}

/** What is known of the payment whose status is observed: the spec's cancellation rule needs its times. */
export interface Observation {
  reference: string;
  /** Epoch ms: when the code stops being payable, as we count it (our send time + the expiration we asked). */
  expiresAt: number;
  /** Epoch ms: our send time of the create (the record's created_at). Absent: expiresAt less the default expiration. */
  createdAt?: number;
  /** Epoch ms, the proxy's clock when the answer arrived. */
  now: number;
  /** Epoch ms, when the read was sent (the partner's state is at least this late). Absent: `now`. */
  askedAt?: number;
  /** The payment is recorded paid (a read after approval: a return's code). */
  paid?: boolean;
}

/** The spec: a payment not paid is canceled one hour after its expiration, never sooner. */
const CANCEL_AFTER_EXPIRY_MS = LIMITS.cancelAfterExpirationSeconds * 1000;
/** The spec's default expiration (4.3): what a partner that ignores the one asked for uses. */
export const PARTNER_DEFAULT_EXPIRATION_MS = 3600 * 1000;
/** The approved side's margin: at most this, and at most a fifth of the shortest plausible expiration. */
export const APPROVED_MARGIN_MS = 5 * 60_000;
/** The canceled side's margin past the latest plausible cancellation hour (a partner slow to cancel, clocks counting apart). */
export const CANCELED_MARGIN_MS = 15 * 60_000;

/** How often the kept verdicts are read again: another instance sharing the store may have reached one. */
const RELOAD_MS = 2000;

/** The two windows of a payment's life in which a code proves something, on our clock. */
export function proofWindows(at: Pick<Observation, 'expiresAt' | 'createdAt'>): { approvedBefore: number; canceledFrom: number } {
  const sentAt = at.createdAt ?? at.expiresAt - PARTNER_DEFAULT_EXPIRATION_MS;
  const asked = Math.max(0, at.expiresAt - sentAt);
  const earliest = Math.min(asked, PARTNER_DEFAULT_EXPIRATION_MS);
  const latest = Math.max(asked, PARTNER_DEFAULT_EXPIRATION_MS);
  return {
    approvedBefore: sentAt + earliest - Math.min(APPROVED_MARGIN_MS, earliest / 5),
    canceledFrom: sentAt + latest + CANCEL_AFTER_EXPIRY_MS + CANCELED_MARGIN_MS,
  };
}

/** Each code of one kind (payments or transfers): its listed meaning, its state and its evidence. */
class CodeBook {
  private states = new Map<number, KeptCode>();
  /** Codes seen on new payments (or transfers), from create answers: pending in fact. */
  private readonly fresh = new Set<number>();
  private resetAt = 0;
  /** Per payment: an unverified expired-listed code read past its expiry (verified by a canceled read after it). */
  private readonly expiredSeen = new Map<string, number>();
  readonly configured: string;

  constructor(
    readonly kind: NumberingKind,
    readonly codes: StatusCodes,
    private readonly log: Logger,
    readonly verdicts: KeptVerdicts,
    private readonly now: () => number,
  ) {
    this.configured = formatStatusCodes(codes);
  }

  private get setting(): string {
    return this.kind === 'payment' ? 'PIX_STATUS_CODES' : 'PIX_TRANSFER_STATUS_CODES';
  }

  listed(code: number): StatusMeaning | null {
    return codeMeaning(this.codes, code);
  }

  state(code: number): CodeState {
    return this.states.get(code)?.state ?? (this.listed(code) === null ? 'unknown' : 'unverified');
  }

  /** The meaning a code decides with: its listed one, once verified and not contradicted. */
  decidingMeaning(code: number): StatusMeaning | null {
    return this.state(code) === 'verified' ? this.listed(code) : null;
  }

  hasVerified(meaning: StatusMeaning): boolean {
    return this.codes[meaning].some((code) => this.state(code) === 'verified');
  }

  /** A code known to be pending: a verified pending one, or one a create's answer carried. */
  knownPending(code: number): boolean {
    return this.fresh.has(code) || (this.listed(code) === 'pending' && this.state(code) === 'verified');
  }

  /** The outcome authenticated words settled each code with, where no code could decide (this run). */
  readonly wordsSaid = new Map<number, 'approved' | 'canceled'>();

  /** Whether the partner contradicted the setting anywhere (a code in mismatch, a new payment's code not listed pending): then its unverified meanings are all in doubt. */
  doubtful(): boolean {
    return [...this.fresh].some((code) => this.listed(code) !== 'pending') || this.isMismatch();
  }

  /** Whether any pending code is known: "no longer pending" can be told. */
  pendingKnown(): boolean {
    return this.fresh.size > 0 || this.hasVerified('pending');
  }

  isMismatch(): boolean {
    return [...this.states.values()].some((s) => s.state === 'mismatch');
  }

  /** Merges what the store kept (another instance's verdicts, a reset). */
  absorb(book: KeptBook | null, legacyVerified: readonly StatusMeaning[], legacyProblem: string | null): void {
    if (book && (book.reset_at ?? 0) > this.resetAt) {
      const knew = this.resetAt > 0 || this.states.size > 0 || this.fresh.size > 0;
      this.resetAt = book.reset_at!;
      for (const [code, kept] of this.states) if (kept.at <= this.resetAt) this.states.delete(code);
      this.fresh.clear();
      this.expiredSeen.clear();
      // The audit line of each running instance (the command keeps its own in the store).
      if (knew)
        this.log.warn(
          { status_codes: this.configured, kind: this.kind, reset_at: iso(this.resetAt) },
          `${this.setting}: status code verdicts reset (pix-checkout numbering reset); every code proves itself again`,
        );
    }
    for (const meaning of legacyVerified)
      for (const code of this.codes[meaning])
        if (!this.states.has(code)) this.states.set(code, { state: 'verified', evidence: ['verified by an earlier release'], at: 0 });
    if (legacyProblem !== null)
      for (const code of listedCodes(this.codes))
        if (this.states.get(code)?.state !== 'mismatch')
          this.states.set(code, {
            state: 'mismatch',
            evidence: [`kept by an earlier release, which stopped every code: ${legacyProblem} (fix the setting, then pix-checkout numbering reset)`],
            at: 0,
            kept: true,
          });
    if (!book) return;
    for (const code of book.fresh) this.fresh.add(code);
    for (const [text, kept] of Object.entries(book.codes)) {
      const code = Number(text);
      if (!Number.isInteger(code) || kept.at <= this.resetAt) continue;
      const mine = this.states.get(code);
      if (!mine || RANK[kept.state] > RANK[mine.state]) {
        if (kept.state === 'mismatch' && mine?.state !== 'mismatch')
          this.log.error(
            { status_codes: this.configured, kind: this.kind, code },
            `status code ${code} is a mismatch (found by another instance): ${kept.evidence.at(-1) ?? ''}`,
          );
        this.states.set(code, kept);
      }
    }
  }

  book(): KeptBook {
    const codes: Record<string, KeptCode> = {};
    for (const [code, kept] of this.states) if (kept.state !== 'mismatch' || kept.kept !== false) codes[String(code)] = kept;
    return { configured: this.configured, codes, fresh: [...this.fresh], ...(this.resetAt > 0 ? { reset_at: this.resetAt } : {}) };
  }

  private note(code: number, state: CodeState, line: string, kept = true): boolean {
    const before = this.states.get(code);
    if (before?.state === 'mismatch' && state !== 'mismatch') return false;
    if (before?.state === 'verified' && state === 'unknown') return false;
    const evidence = [...(before?.evidence ?? []), line].filter((l, i, all) => all.indexOf(l) === i).slice(-EVIDENCE_KEPT);
    const changed = before?.state !== state;
    this.states.set(code, { state, evidence, at: this.now(), ...(state === 'mismatch' ? { kept: kept || before?.kept === true } : {}) });
    return changed || before?.evidence.at(-1) !== line;
  }

  /** Verifies a listed code; false when it is a mismatch already (or verified). */
  verify(code: number, why: string): boolean {
    if (this.state(code) === 'mismatch' || this.state(code) === 'verified') return false;
    const meaning = this.listed(code);
    if (meaning === null) return false;
    this.note(code, 'verified', why);
    this.log.info({ status_codes: this.configured, kind: this.kind, code }, `${this.kind} status code ${code} verified as ${meaning}: ${why}`);
    return true;
  }

  /** A contradiction of one code: it decides nothing from now on. True when it is news. */
  contradict(code: number, why: string, keep: boolean, reference: string): boolean {
    const first = this.state(code) !== 'mismatch';
    this.note(code, 'mismatch', why, keep);
    if (first)
      this.log.error(
        { reference, status_codes: this.configured, kind: this.kind, code },
        `${this.kind} status code ${code} does not match ${this.setting}: ${why}; code ${code} decides nothing until the setting is fixed and pix-checkout numbering reset is run`,
      );
    return first;
  }

  /** An unlisted code seen: it decides nothing; noted once per kind of observation. */
  unknown(code: number, why: string, reference: string): boolean {
    const first = !this.states.has(code);
    const changed = this.note(code, 'unknown', why);
    if (first)
      this.log.warn(
        { reference, status_codes: this.configured, kind: this.kind, code },
        `${this.kind} status code ${code} is not in ${this.setting}: it decides nothing (${why}); name it in the setting if the partner documents it`,
      );
    return changed;
  }

  freshCode(code: number): boolean {
    if (this.fresh.has(code)) return false;
    this.fresh.add(code);
    return true;
  }

  rememberExpired(reference: string, code: number): void {
    if (this.expiredSeen.size > 10_000) this.expiredSeen.clear();
    this.expiredSeen.set(reference, code);
  }

  takeExpired(reference: string): number | undefined {
    const code = this.expiredSeen.get(reference);
    this.expiredSeen.delete(reference);
    return code;
  }

  report(): BookReport {
    const codes: Partial<Record<StatusMeaning, CodeVerdict>> = {};
    for (const meaning of STATUS_MEANINGS) {
      const listed = this.codes[meaning];
      if (listed.length === 0) continue;
      const states = listed.map((c) => this.state(c));
      codes[meaning] = states.includes('verified') ? 'verified' : states.includes('mismatch') ? 'mismatch' : 'unverified';
    }
    const seen = new Set([...listedCodes(this.codes), ...this.states.keys(), ...this.fresh]);
    const codeStates: CodeReport[] = [...seen]
      .sort((a, b) => a - b)
      .map((code) => {
        const listed = this.listed(code);
        const evidence = [...(this.states.get(code)?.evidence ?? [])];
        if (this.fresh.has(code) && !evidence.some((l) => l.includes('new '))) evidence.unshift(`seen on a new ${this.kind} (pending by definition)`);
        return { code, listed, state: this.state(code), evidence };
      });
    const problems = codeStates
      .filter((c) => c.state === 'mismatch' || (c.state === 'unknown' && c.evidence.length > 0))
      .map((c) =>
        c.state === 'mismatch'
          ? `${this.setting}: ${this.kind} status code ${c.code} (listed ${c.listed ?? 'nowhere'}) is a mismatch and decides nothing: ${c.evidence.at(-1) ?? 'see the log'} (fix the setting, then pix-checkout numbering reset)`
          : `${this.setting}: ${this.kind} status code ${c.code} is not listed and decides nothing: ${c.evidence.at(-1)} (name it in the setting if the partner documents it)`,
      );
    const state: NumberingState = this.isMismatch() ? 'mismatch' : REQUIRED_MEANINGS.every((m) => this.hasVerified(m)) ? 'verified' : 'unverified';
    return { state, configured: this.configured, codes, code_states: codeStates, problems };
  }
}

const RANK: Record<CodeState, number> = { unverified: 0, unknown: 1, verified: 2, mismatch: 3 };

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
   * prove one wrong (see the rules at the top).
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
   * the partner reports now. True when it may be applied (see the rules at the top). `kind` (or the
   * older boolean `learn`: true for payments, false for transfers) picks the book.
   */
  confirmExplicit(
    outcome: 'approved' | 'canceled',
    status: PartnerStatus | null,
    reference: string,
    kindOrLearn: NumberingKind | boolean = 'payment',
  ): boolean {
    if (!status) return false;
    const kind: NumberingKind = kindOrLearn === true ? 'payment' : kindOrLearn === false ? 'transfer' : kindOrLearn;
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

const iso = (ms: number) => (Number.isFinite(ms) ? new Date(ms).toISOString() : String(ms));
