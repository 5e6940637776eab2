/**
 * Whether the configured meaning of the partner's status codes (PIX_STATUS_CODES) can be trusted,
 * code by code. A guess never decides money, so a code decides nothing until it has proved itself,
 * from the spec's own rules (spec 3 and 6: payments are canceled only one hour after their expiration):
 *
 * - pending: a freshly created payment is pending by definition. Its code (from the create's answer,
 *   or from one read right after it when the answer has none) verifies the configured pending code.
 *   Any other code on a payment just created (the configured approved one included) is a mismatch.
 * - approved: once pending is verified, a final (non-pending) code seen on a payment before
 *   `expires_at + 1 h - 5 min` (a margin for the partner's clock) can only mean approved: the first
 *   time that happens, it verifies the configured approved code, or proves the setting wrong.
 * - canceled: once approved is verified, the first other final code seen on a payment at or after
 *   `expires_at + 1 h` can only mean canceled: it verifies the configured canceled code, or proves
 *   the setting wrong. Before that hour a late final code may be a payment made in time and read
 *   late, so it decides nothing about canceled.
 * - A code that contradicts a verified one (a final code other than the verified approved one before
 *   the hour, another one after it than the verified canceled one) is a mismatch too. A mismatch is
 *   logged at error and shown by /ready, and from then on no code decides anything.
 * - Verdicts are kept in the store (numbering-verdicts.ts), per partner service and account, so a
 *   restart with the same setting keeps them; a changed setting or another service starts
 *   unverified. Instances sharing a store share them: each reads them again every few seconds.
 * - Authenticated words (a notification through a secret path or from the partner's source address,
 *   saying "approved" or "canceled") are checked against the code the partner reports now. Words that
 *   agree with the configured code may verify it (approved once pending is verified; canceled once
 *   approved is); words that contradict a verified code, or the setting, make a mismatch (this run
 *   only: one misread event must not disable a right setting for good). Neither overrides the other.
 * - Under a mismatch, explicit outcomes still work: authenticated words are applied when the partner
 *   reports a code other than the pending one seen. The first such approval of a payment teaches the
 *   approved code; a code other than it is never made approved by words again, and "canceled" is
 *   believed only for a code known to be neither pending nor approved.
 * - Transfers verify nothing (the spec shows neither their numbering nor that it is the payments'):
 *   they use only the codes payments verified. A transfer check that contradicts an authenticated
 *   transfer notification is a transfers mismatch (error log, /ready, kept in the store for this
 *   setting): no transfer code decides alone any more; authenticated words the check agrees with still settle.
 * - A status given as a word (`paid`) means what it says and needs no numbering.
 */
import { LIMITS } from '../../src/shared/limits.ts';
import type { Logger } from '../log.ts';
import type { PartnerStatus } from '../partner/read-fields.ts';
import { formatStatusCodes, statusMeaning, wordMeaning, type StatusCodes, type StatusMeaning } from '../partner/status-codes.ts';
import type { TokenStore } from '../partner/token-store.ts';
import { KeptVerdicts, MEANINGS } from './numbering-verdicts.ts';

export type NumberingState = 'unverified' | 'verified' | 'mismatch';
export type CodeVerdict = 'unverified' | 'verified';

export interface NumberingReport {
  /** `verified` once all three codes are; `mismatch` once any code contradicted the setting. */
  state: NumberingState;
  /** The configured numbering, as PIX_STATUS_CODES spells it. */
  configured: string;
  /** Which configured codes have proved themselves (none decides anything under a mismatch). */
  codes: Record<StatusMeaning, CodeVerdict>;
  /** What proved it wrong. */
  problem?: string;
  /** Set once a transfer check contradicted an authenticated transfer notification: no transfer code decides anything since. */
  transfers_problem?: string;
}

/** What is known of the payment whose status is observed: the spec's cancellation rule needs its expiry, and the time. */
export interface Observation {
  reference: string;
  /** Epoch ms. */
  expiresAt: number;
  /** Epoch ms, the proxy's clock when the status was read. */
  now: number;
}

/** The spec: a payment not paid is canceled one hour after its expiration, never sooner. */
const CANCEL_AFTER_EXPIRY_MS = LIMITS.cancelAfterExpirationSeconds * 1000;
/** How far the partner's clock may be ahead of ours, as far as the approved rule cares. */
const CLOCK_SKEW_MS = 5 * 60_000;

/** How often the kept verdicts are read again (real time): another instance sharing the store may have reached one. */
const RELOAD_MS = 2000;

export class StatusNumbering {
  private mismatched = false;
  private problem: string | undefined;
  private transfersProblem: string | undefined;
  /** The codes that proved themselves. */
  private readonly verified = new Set<StatusMeaning>();
  /** Under a mismatch: the code known to be pending (a fresh payment's, or the verified one). */
  private seenPending: number | null = null;
  /** The approved code, learned from an authenticated notification under a mismatch. */
  private approvedCode: number | null = null;
  private loaded: Promise<void> | null = null;
  private loadedAt = 0;
  /** Whether the mismatch is kept in the store. */
  private kept = false;

  /** Where the verdicts are remembered (the store's key-value table), per partner service and account. */
  private readonly verdicts: KeptVerdicts;

  /** `scope` names the partner service and account (tokenStoreKey): a verdict about one says nothing of another. */
  constructor(
    readonly codes: StatusCodes,
    private readonly log: Logger,
    memory?: TokenStore,
    scope = '',
  ) {
    this.verdicts = new KeptVerdicts(memory, scope, formatStatusCodes(codes));
  }

  private get configured(): string {
    return formatStatusCodes(this.codes);
  }

  /**
   * Reads the verdicts kept by an earlier run, or by another instance sharing the store: once, and
   * again every few seconds until a mismatch is known (another instance may verify a code, or find one wrong).
   */
  load(): Promise<void> {
    if (this.loaded && !this.mismatched && performance.now() - this.loadedAt >= RELOAD_MS) this.loaded = null;
    if (!this.loaded) this.loadedAt = performance.now();
    this.loaded ??= (async () => {
      const { verified, mismatch: kept, transfersProblem } = await this.verdicts.read();
      if (transfersProblem !== null && this.transfersProblem === undefined) this.transfersProblem = transfersProblem;
      if (this.mismatched) return;
      if (kept) {
        // Found by another instance sharing the store (or an earlier run): no code decides from now on, here either.
        if (this.verified.size > 0)
          this.log.error({ status_codes: this.configured, problem: kept.problem }, 'partner status codes do not match the setting (found by another instance)');
        this.mismatched = true;
        this.kept = true;
        this.seenPending = kept.seen_pending ?? null;
        this.approvedCode = kept.approved ?? null;
        this.problem = kept.problem;
        return;
      }
      for (const meaning of verified) this.verified.add(meaning);
    })().catch(() => undefined);
    return this.loaded;
  }

  /**
   * Reads the kept verdicts now, not at the next RELOAD_MS: a read whose meaning is unknown here may
   * be known already to another instance (issue 30). Concurrent calls share one read.
   */
  reload(): Promise<void> {
    if (!this.reloading) {
      if (!this.mismatched) this.loaded = null;
      this.reloading = this.load().finally(() => (this.reloading = null));
    }
    return this.reloading;
  }
  private reloading: Promise<void> | null = null;

  report(): NumberingReport {
    const state: NumberingState = this.mismatched ? 'mismatch' : this.verified.size === MEANINGS.length ? 'verified' : 'unverified';
    const codes = Object.fromEntries(MEANINGS.map((m) => [m, this.verified.has(m) ? 'verified' : 'unverified'])) as Record<StatusMeaning, CodeVerdict>;
    return {
      state,
      configured: this.configured,
      codes,
      ...(this.problem ? { problem: this.problem } : {}),
      ...(this.transfersProblem ? { transfers_problem: this.transfersProblem } : {}),
    };
  }

  /** Whether the configured code for `meaning` decides now: it proved itself, and no code contradicted the setting. */
  decides(meaning: StatusMeaning): boolean {
    return !this.mismatched && this.verified.has(meaning);
  }

  /** True until a fresh payment has verified the pending code (or a kept verdict said so): then one read after a create is worth its cost. */
  needsFreshRead(): boolean {
    return !this.mismatched && !this.verified.has('pending');
  }

  /**
   * The status of a payment just created (pending by definition): verifies the pending code, and
   * any other is a mismatch. Transfers verify nothing: their numbering is only assumed to be the payments'.
   */
  async observeFresh(status: PartnerStatus, reference: string, kind: 'payment' | 'transfer' = 'payment'): Promise<void> {
    await this.load();
    if (kind === 'transfer' || this.mismatched) return;
    if (status.word !== null) {
      const meaning = wordMeaning(status.word);
      if (meaning !== 'pending' && meaning !== null) await this.mismatch(`a new payment (${reference}) was reported "${status.word}"`, reference);
      return;
    }
    if (status.code === this.codes.pending) return this.verify('pending', `a new payment (${reference}) has the configured pending code`);
    // Not even the configured approved code is tolerated: the customer has not seen this payment's code yet.
    if (!this.verified.has('pending')) this.seenPending = status.code;
    await this.mismatch(
      `a new payment (${reference}) has status ${status.code}, but PIX_STATUS_CODES says pending is ${this.codes.pending}` +
        ` (configured ${this.configured}): set PIX_STATUS_CODES to the partner's numbering (pix-checkout doctor --create shows it)`,
      reference,
    );
  }

  /**
   * A payment's status as read from the partner (a read of our own, or a notification's
   * confirmation), before it is decided on: the spec's cancellation hour may verify the approved
   * or the canceled code, or prove the setting wrong (see the rules at the top).
   */
  async observe(status: PartnerStatus | null, at: Observation): Promise<void> {
    await this.load();
    if (this.mismatched || !status || status.word !== null || status.code === null) return;
    // Until pending is verified, "not pending" cannot be told.
    if (!this.verified.has('pending') || status.code === this.codes.pending) return;
    const code = status.code;
    const { reference } = at;
    const cancelAt = at.expiresAt + CANCEL_AFTER_EXPIRY_MS;
    const when = `at ${iso(at.now)}, ${Math.round((cancelAt - at.now) / 60_000)} min before the partner may cancel it (expires_at + 1 h)`;
    if (at.now < cancelAt - CLOCK_SKEW_MS) {
      // Too early to be canceled: this final code is approved.
      if (code === this.codes.approved) {
        if (!this.verified.has('approved')) await this.verify('approved', `payment ${reference} had status ${code} ${when}, so ${code} is approved`);
        return;
      }
      await this.mismatch(
        `payment ${reference} had status ${code} ${when}, so ${code} can only be approved, but PIX_STATUS_CODES says approved is ${this.codes.approved}` +
          ` (configured ${this.configured}; approved and canceled swapped?): set PIX_STATUS_CODES to the partner's numbering`,
        reference,
      );
      return;
    }
    // Within the margin, or a payment made in time and read late, or approved not known yet: nothing told.
    if (at.now < cancelAt || !this.verified.has('approved') || code === this.codes.approved) return;
    if (code === this.codes.canceled) {
      if (!this.verified.has('canceled'))
        await this.verify('canceled', `payment ${reference} had status ${code}, neither pending nor the verified approved code, an hour past its expiration`);
      return;
    }
    await this.mismatch(
      `payment ${reference} had status ${code} an hour past its expiration, neither pending (${this.codes.pending}) nor approved (${this.codes.approved}),` +
        ` so ${code} can only be canceled, but PIX_STATUS_CODES says canceled is ${this.codes.canceled}: set PIX_STATUS_CODES to the partner's numbering`,
      reference,
    );
  }

  /**
   * What a status read from the partner means, for deciding: a word always; a code only once it is
   * verified (or, under a mismatch, the approved code learned from words). Null means "decide nothing from it".
   */
  meaning(status: PartnerStatus | null, kind: 'payment' | 'transfer' = 'payment'): StatusMeaning | null {
    if (!status) return null;
    if (status.word !== null) return wordMeaning(status.word);
    if (kind === 'transfer' && this.transfersProblem !== undefined) return null;
    if (this.mismatched) return status.code !== null && status.code === this.approvedCode ? 'approved' : null;
    const meaning = statusMeaning(this.codes, status);
    return meaning !== null && this.verified.has(meaning) ? meaning : null;
  }

  /**
   * An explicit outcome, in words, from an authenticated notification, checked against the status
   * the partner reports now. True when it may be applied (see the rules at the top). `learn`: a
   * payment's words may verify or contradict a code; a transfer's only use what payments verified,
   * and their contradiction is a transfers mismatch.
   */
  confirmExplicit(outcome: 'approved' | 'canceled', status: PartnerStatus | null, reference: string, learn = true): boolean {
    if (!status) return false;
    const kind = learn ? 'payment' : 'transfer';
    if (status.word !== null) {
      const said = wordMeaning(status.word);
      if (said !== outcome && (said === 'approved' || said === 'canceled'))
        this.contradiction(kind, `a notification said ${outcome} for ${kind} ${reference}, but the partner reports it "${status.word}"`, reference);
      return said === outcome;
    }
    const code = status.code;
    if (code === null) return false;
    if (this.mismatched) return this.confirmUnderMismatch(outcome, code, reference, learn);
    // Until pending is verified, "no longer pending" cannot be told; still pending decides nothing.
    if (!this.verified.has('pending') || code === this.codes.pending) return false;
    const configured = statusMeaning(this.codes, status);
    const verified = configured !== null && this.verified.has(configured) ? configured : null;
    if (verified === outcome) return true;
    if (verified !== null) {
      // The partner's own notification contradicts a verified code: neither wins.
      this.contradiction(
        kind,
        `a notification said ${outcome} for ${kind} ${reference}, but the partner reports status ${code}, verified as ${verified}`,
        reference,
      );
      return false;
    }
    // A code not verified yet: a transfer's words teach nothing.
    if (!learn) return false;
    if (code === this.codes[outcome]) {
      // Words agreeing with the setting corroborate the code, in the spec's order: canceled only once approved is known.
      if (outcome === 'canceled' && !this.verified.has('approved')) return false;
      void this.verify(outcome, `an authenticated notification said ${outcome} for ${reference}, whose status is ${code}`);
      return true;
    }
    this.contradiction(
      kind,
      `a notification said ${outcome} for ${reference}, but the partner reports status ${code}, which PIX_STATUS_CODES calls ${configured ?? 'nothing'}` +
        ` (approved and canceled swapped?): set PIX_STATUS_CODES to the partner's numbering`,
      reference,
    );
    return false;
  }

  /** Payments whose authenticated words the partner's status contradicted in this run. */
  private readonly contradicted = new Set<string>();

  /** Whether authenticated words about this payment were contradicted by the partner's status (not another payment's doing). */
  wasContradicted(reference: string): boolean {
    return this.contradicted.has(reference);
  }

  /** The words-only path (a mismatch): see the rules at the top. */
  private confirmUnderMismatch(outcome: 'approved' | 'canceled', code: number, reference: string, learn: boolean): boolean {
    // The pending code is not known, so "no longer pending" cannot be told.
    if (this.seenPending === null || code === this.seenPending) return false;
    // A code proven by the spec's own rules is never taught another meaning by words: a notification
    // repeated after its contradiction would otherwise make the verified canceled code "approved".
    const provenOtherwise =
      outcome === 'approved'
        ? (this.verified.has('approved') && code !== this.codes.approved) || (this.verified.has('canceled') && code === this.codes.canceled)
        : this.verified.has('approved') && code === this.codes.approved;
    if (provenOtherwise) return false;
    if (outcome === 'approved') {
      if (this.approvedCode === null && learn) {
        this.approvedCode = code;
        this.log.warn({ reference, status: code }, `status ${code} taken as approved, from a notification the partner confirmed is no longer pending`);
        void this.keepMismatch();
      }
      return code === this.approvedCode;
    }
    // Canceled only for a code known to be neither pending nor approved.
    return this.approvedCode !== null && code !== this.approvedCode;
  }

  /** Authenticated words contradicting the partner's status: a mismatch of the payments' numbering (this run only), or of the transfers'. */
  private contradiction(kind: 'payment' | 'transfer', problem: string, reference: string): void {
    if (kind === 'payment') {
      this.contradicted.add(reference);
      void this.mismatch(problem, reference, false);
      return;
    }
    if (this.transfersProblem !== undefined) return;
    this.transfersProblem = problem;
    this.log.error(
      { reference, status_codes: this.configured },
      `transfer status codes contradict the partner's notification: ${problem}; no transfer code decides anything now`,
    );
    void this.verdicts.saveTransfersProblem(problem);
  }

  private async verify(meaning: StatusMeaning, why: string): Promise<void> {
    if (this.mismatched || this.verified.has(meaning)) return;
    this.verified.add(meaning);
    this.log.info({ status_codes: this.configured, code: this.codes[meaning] }, `partner status code ${this.codes[meaning]} verified as ${meaning}: ${why}`);
    await this.verdicts.saveVerified(this.verified);
  }

  /** `keep`: the verdict outlives a restart (a code's proof; a contradiction by words is kept for this run only). */
  private async mismatch(problem: string, reference: string, keep = true): Promise<void> {
    const first = !this.mismatched;
    this.mismatched = true;
    this.problem ??= problem;
    // The words-only path needs the pending code: the verified one, when it is.
    if (this.seenPending === null && this.verified.has('pending')) this.seenPending = this.codes.pending;
    this.kept ||= keep;
    if (first) this.log.error({ reference, status_codes: this.configured }, `partner status codes do not match the setting: ${problem}`);
    if (!keep) return;
    await this.keepMismatch();
  }

  private async keepMismatch(): Promise<void> {
    if (!this.kept) return;
    await this.verdicts.saveMismatch({ seen_pending: this.seenPending, approved: this.approvedCode, problem: this.problem });
  }
}

const iso = (ms: number) => (Number.isFinite(ms) ? new Date(ms).toISOString() : String(ms));
