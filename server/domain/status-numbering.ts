/**
 * Whether the configured meaning of the partner's status codes (PIX_STATUS_CODES) can be trusted.
 * A guess never decides money, so codes decide nothing until the numbering is verified:
 *
 * - A freshly created payment is pending by definition. Its code (from the create's answer, or from
 *   one read right after it when the answer has none) verifies the numbering when it is the
 *   configured pending code, and proves it wrong otherwise: the proxy logs an error naming the code
 *   it saw, /ready reports the mismatch, and until the setting is fixed (a restart) no payment or
 *   transfer is made paid or canceled from a code.
 * - A verification is kept in the store, so a restart with the same setting trusts it at once; a
 *   changed setting starts unverified.
 * - Explicit outcomes still work whatever the state: a notification that says "approved" or
 *   "canceled" in words, confirmed by the partner no longer reporting the payment pending, is applied.
 *   Each such confirmation also teaches which code means what; a code seen meaning both outcomes, or
 *   an outcome whose code the setting gives another meaning, is a mismatch too.
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

/** Where a verified numbering is remembered (the store's key-value table). */
const KEY = 'status-codes-verified';

export class StatusNumbering {
  private state: NumberingState = 'unverified';
  private problem: string | undefined;
  /** The code a fresh payment had when it was not the configured pending code. */
  private seenPending: number | null = null;
  /** Codes that explicit outcomes confirmed. */
  private readonly learned = new Map<number, StatusMeaning>();
  private loaded: Promise<void> | null = null;

  constructor(
    readonly codes: StatusCodes,
    private readonly log: Logger,
    private readonly memory?: TokenStore,
  ) {}

  /** Reads a verification kept by an earlier run (once). */
  load(): Promise<void> {
    this.loaded ??= (async () => {
      const kept = await this.memory?.load(KEY).catch(() => null);
      if (kept === formatStatusCodes(this.codes) && this.state === 'unverified') this.state = 'verified';
    })();
    return this.loaded;
  }

  report(): NumberingReport {
    return { state: this.state, configured: formatStatusCodes(this.codes), ...(this.problem ? { problem: this.problem } : {}) };
  }

  /** True until a fresh payment has been seen (or a kept verification read): then one read after a create is worth its cost. */
  needsFreshRead(): boolean {
    return this.state === 'unverified';
  }

  /** The status of a payment just created (pending by definition). */
  async observeFresh(status: PartnerStatus, reference: string): Promise<void> {
    await this.load();
    if (status.word !== null) {
      const meaning = wordMeaning(status.word);
      if (meaning !== 'pending' && meaning !== null) this.mismatch(`a new payment (${reference}) was reported "${status.word}"`, reference);
      return;
    }
    if (status.code === this.codes.pending) {
      if (this.state === 'unverified') {
        this.state = 'verified';
        this.log.info({ status_codes: formatStatusCodes(this.codes) }, 'partner status codes verified: a new payment has the configured pending code');
        await this.memory?.save(KEY, formatStatusCodes(this.codes)).catch(() => undefined);
      }
      return;
    }
    // A code the numbering calls approved could be a payment paid within the same second: not proof.
    if (status.code === this.codes.approved) return;
    this.seenPending = status.code;
    this.mismatch(
      `a new payment (${reference}) has status ${status.code}, but PIX_STATUS_CODES says pending is ${this.codes.pending}` +
        ` (configured ${formatStatusCodes(this.codes)}): set PIX_STATUS_CODES to the partner's numbering (pix-checkout doctor --create shows it)`,
      reference,
    );
  }

  /**
   * What a status read from the partner means, for deciding: a word always; a code only once the
   * numbering is verified. Null means "decide nothing from it".
   */
  meaning(status: PartnerStatus | null): StatusMeaning | null {
    if (!status) return null;
    if (status.word !== null) return wordMeaning(status.word);
    if (status.code !== null && this.learned.has(status.code)) return this.learned.get(status.code)!;
    if (this.state !== 'verified') return null;
    return statusMeaning(this.codes, status);
  }

  /**
   * An explicit outcome (a notification's words) checked against what the partner reports now:
   * applied when the partner no longer reports it pending. Teaches the code's meaning.
   */
  confirmExplicit(outcome: 'approved' | 'canceled', status: PartnerStatus | null, reference: string): boolean {
    if (!status) return false;
    if (status.word !== null) return wordMeaning(status.word) === outcome;
    const code = status.code!;
    const pending = this.seenPending ?? this.codes.pending;
    if (code === pending) return false;
    const known = this.learned.get(code);
    if (known !== undefined && known !== outcome) {
      this.mismatch(`status ${code} was confirmed as both ${known} and ${outcome}`, reference);
      return false;
    }
    const configured = statusMeaning(this.codes, status);
    if (configured !== null && configured !== outcome) {
      this.mismatch(
        `a notification said ${outcome} for ${reference}, and the partner reports status ${code}, which PIX_STATUS_CODES (${formatStatusCodes(this.codes)}) calls ${configured}`,
        reference,
      );
    }
    this.learned.set(code, outcome);
    return true;
  }

  private mismatch(problem: string, reference: string): void {
    const first = this.state !== 'mismatch';
    this.state = 'mismatch';
    this.problem ??= problem;
    void this.memory?.clear(KEY).catch(() => undefined);
    if (first) this.log.error({ reference, status_codes: formatStatusCodes(this.codes) }, `partner status codes do not match the setting: ${problem}`);
  }
}
