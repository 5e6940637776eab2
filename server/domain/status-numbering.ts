/**
 * Whether the configured meaning of the partner's status codes (PIX_STATUS_CODES) can be trusted.
 * A guess never decides money, so codes decide nothing until the numbering is verified:
 *
 * - A freshly created payment is pending by definition. Its code (from the create's answer, or from
 *   one read right after it when the answer has none) verifies the numbering when it is the
 *   configured pending code, and proves it wrong otherwise: the proxy logs an error naming the code
 *   it saw, /ready reports the mismatch, and until the setting is fixed no payment or transfer is
 *   made paid or canceled from a code.
 * - Both verdicts are kept in the store, per partner service and account, so a restart with the same
 *   setting keeps them (a mismatch with the pending code it saw); a changed setting or another
 *   service starts unverified. Instances sharing a store share them: each reads them again every few
 *   seconds, and a mismatch another one found stops its codes deciding too.
 * - Under a mismatch, explicit outcomes still work: a notification from an authenticated source (the
 *   caller decides: a secret path or the partner's source address) that says "approved" or
 *   "canceled" in words is applied when the partner reports a code other than the pending one seen.
 *   The first such approval of a payment teaches the approved code; a code other than it is never
 *   made approved by words again, and "canceled" is believed only for a code known to be neither
 *   pending nor approved. Transfers use what payments taught, and teach nothing.
 * - Under a verified numbering the partner's code decides, until an authenticated notification's
 *   words contradict it (approved and canceled swapped in the setting show this way, which the
 *   new-payment check cannot see): then the numbering is a mismatch too, and nothing is applied.
 * - A status given as a word (`paid`) means what it says and needs no numbering.
 */
import type { Logger } from '../log.ts';
import type { PartnerStatus } from '../partner/read.ts';
import { formatStatusCodes, statusMeaning, wordMeaning, type StatusCodes, type StatusMeaning } from '../partner/status-codes.ts';
import type { TokenStore } from '../partner/token-store.ts';

export type NumberingState = 'unverified' | 'verified' | 'mismatch';

export interface NumberingReport {
  state: NumberingState;
  /** The configured numbering, as PIX_STATUS_CODES spells it. */
  configured: string;
  /** What proved it wrong. */
  problem?: string;
}

/** How often the kept verdicts are read again (real time): another instance sharing the store may have reached one. */
const RELOAD_MS = 2000;

/** Where the verdicts are remembered (the store's key-value table), per partner service and account. */
const VERIFIED = 'status-codes-verified';
const MISMATCH = 'status-codes-mismatch';

export class StatusNumbering {
  private state: NumberingState = 'unverified';
  private problem: string | undefined;
  /** The code a fresh payment had when it was not the configured pending code. */
  private seenPending: number | null = null;
  /** The approved code, learned from an authenticated notification under a mismatch. */
  private approvedCode: number | null = null;
  private loaded: Promise<void> | null = null;
  private loadedAt = 0;
  /** Whether the mismatch is kept in the store. */
  private kept = false;

  private readonly verifiedKey: string;
  private readonly mismatchKey: string;

  /** `scope` names the partner service and account (tokenStoreKey): a verdict about one says nothing of another. */
  constructor(
    readonly codes: StatusCodes,
    private readonly log: Logger,
    private readonly memory?: TokenStore,
    scope = '',
  ) {
    this.verifiedKey = `${VERIFIED}|${scope}`;
    this.mismatchKey = `${MISMATCH}|${scope}`;
  }

  /**
   * Reads the verdicts kept by an earlier run, or by another instance sharing the store: once, and
   * again every few seconds until a mismatch is known (another instance's fresh payment may verify
   * the numbering, or its notification prove it wrong).
   */
  load(): Promise<void> {
    if (this.loaded && this.state !== 'mismatch' && performance.now() - this.loadedAt >= RELOAD_MS) this.loaded = null;
    if (!this.loaded) this.loadedAt = performance.now();
    this.loaded ??= (async () => {
      const configured = formatStatusCodes(this.codes);
      const [verified, mismatch] = await Promise.all([
        this.memory?.load(this.verifiedKey).catch(() => null),
        this.memory?.load(this.mismatchKey).catch(() => null),
      ]);
      if (this.state === 'mismatch') return;
      const kept = mismatch
        ? (JSON.parse(mismatch) as { configured?: string; seen_pending?: number | null; approved?: number | null; problem?: string })
        : null;
      if (kept?.configured === configured) {
        // Found by another instance sharing the store (or an earlier run): no code decides from now on, here either.
        if (this.state === 'verified')
          this.log.error({ status_codes: configured, problem: kept.problem }, 'partner status codes do not match the setting (found by another instance)');
        this.state = 'mismatch';
        this.kept = true;
        this.seenPending = kept.seen_pending ?? null;
        this.approvedCode = kept.approved ?? null;
        this.problem = kept.problem;
      } else if (verified === configured && this.state === 'unverified') {
        this.state = 'verified';
      }
    })().catch(() => undefined);
    return this.loaded;
  }

  /**
   * Reads the kept verdicts now, not at the next RELOAD_MS: a read whose meaning is unknown here may
   * be known already to another instance (issue 30). Concurrent calls share one read.
   */
  reload(): Promise<void> {
    if (!this.reloading) {
      if (this.state !== 'mismatch') this.loaded = null;
      this.reloading = this.load().finally(() => (this.reloading = null));
    }
    return this.reloading;
  }
  private reloading: Promise<void> | null = null;

  report(): NumberingReport {
    return { state: this.state, configured: formatStatusCodes(this.codes), ...(this.problem ? { problem: this.problem } : {}) };
  }

  /** True until a fresh payment has been seen (or a kept verdict read): then one read after a create is worth its cost. */
  needsFreshRead(): boolean {
    return this.state === 'unverified';
  }

  /**
   * The status of a payment or a transfer just created (pending by definition). ASSUMPTION: transfers
   * share the payments' numbering (the spec shows neither), so a new transfer verifies it too: a
   * merchant who only pays out still has its transfers' outcomes read.
   */
  async observeFresh(status: PartnerStatus, reference: string, kind: 'payment' | 'transfer' = 'payment'): Promise<void> {
    await this.load();
    if (status.word !== null) {
      const meaning = wordMeaning(status.word);
      if (meaning !== 'pending' && meaning !== null) await this.mismatch(`a new ${kind} (${reference}) was reported "${status.word}"`, reference);
      return;
    }
    if (status.code === this.codes.pending) {
      if (this.state === 'unverified') {
        this.state = 'verified';
        this.log.info({ status_codes: formatStatusCodes(this.codes) }, `partner status codes verified: a new ${kind} has the configured pending code`);
        await this.memory?.save(this.verifiedKey, formatStatusCodes(this.codes)).catch(() => undefined);
      }
      return;
    }
    // A code the numbering calls approved could be a payment paid within the same second: not proof.
    if (status.code === this.codes.approved || this.state === 'mismatch') return;
    this.seenPending = status.code;
    await this.mismatch(
      `a new ${kind} (${reference}) has status ${status.code}, but PIX_STATUS_CODES says pending is ${this.codes.pending}` +
        ` (configured ${formatStatusCodes(this.codes)}): set PIX_STATUS_CODES to the partner's numbering (pix-checkout doctor --create shows it)`,
      reference,
    );
  }

  /**
   * What a status read from the partner means, for deciding: a word always; a code only once the
   * numbering is verified (or the approved code learned under a mismatch). Null means "decide nothing from it".
   */
  meaning(status: PartnerStatus | null): StatusMeaning | null {
    if (!status) return null;
    if (status.word !== null) return wordMeaning(status.word);
    if (this.state === 'verified') return statusMeaning(this.codes, status);
    if (this.state === 'mismatch' && status.code !== null && status.code === this.approvedCode) return 'approved';
    return null;
  }

  /**
   * An explicit outcome, in words, from an authenticated notification, checked against the code the
   * partner reports now. True when it may be applied (see the rules at the top). `learn`: a payment's
   * approval may teach the approved code; a transfer's may not.
   */
  confirmExplicit(outcome: 'approved' | 'canceled', status: PartnerStatus | null, reference: string, learn = true): boolean {
    if (!status) return false;
    if (status.word !== null) return wordMeaning(status.word) === outcome;
    const code = status.code!;
    if (this.state === 'verified') {
      const meaning = statusMeaning(this.codes, status);
      // Only a payment's notification may contradict (transfers only share the numbering by assumption).
      if (learn && meaning !== null && meaning !== 'pending' && meaning !== outcome) {
        // The partner's own notification contradicts the setting's reading of its code: the setting
        // is wrong about approved and canceled. From now on no code decides, until a restart (this
        // verdict is not kept: one misread event must not disable a right setting for good).
        this.seenPending = this.codes.pending;
        void this.mismatch(
          `a notification said ${outcome} for ${reference}, but the partner reports status ${code}, which PIX_STATUS_CODES calls ${meaning}` +
            ` (approved and canceled swapped?): set PIX_STATUS_CODES to the partner's numbering`,
          reference,
          false,
        );
        return false;
      }
      return meaning === outcome;
    }
    // Unverified: the pending code is not known, so "no longer pending" cannot be told.
    if (this.state !== 'mismatch' || this.seenPending === null || code === this.seenPending) return false;
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

  /** `keep`: the verdict outlives a restart (a new payment's code is proof; a contradiction by words is kept for this run only). */
  private async mismatch(problem: string, reference: string, keep = true): Promise<void> {
    const first = this.state !== 'mismatch';
    this.state = 'mismatch';
    this.problem ??= problem;
    this.kept ||= keep;
    if (first) this.log.error({ reference, status_codes: formatStatusCodes(this.codes) }, `partner status codes do not match the setting: ${problem}`);
    if (!keep) return;
    await this.memory?.clear(this.verifiedKey).catch(() => undefined);
    await this.keepMismatch();
  }

  private async keepMismatch(): Promise<void> {
    if (!this.kept) return;
    const kept = { configured: formatStatusCodes(this.codes), seen_pending: this.seenPending, approved: this.approvedCode, problem: this.problem };
    await this.memory?.save(this.mismatchKey, JSON.stringify(kept)).catch(() => undefined);
  }
}
