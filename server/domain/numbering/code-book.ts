/**
 * Each status code of one kind (payments or transfers): its listed meaning, its state and its
 * evidence, merged with what the store kept, and reported for `/ready` and `pix-checkout numbering
 * show`. What an observation proves is decided by status-numbering.ts; this book records it.
 */
import type { Logger } from '../../log.ts';
import {
  REQUIRED_MEANINGS,
  STATUS_MEANINGS,
  codeMeaning,
  formatStatusCodes,
  listedCodes,
  type StatusCodes,
  type StatusMeaning,
} from '../../partner/status-codes.ts';
import { iso } from './proof-windows.ts';
import { EVIDENCE_KEPT, type CodeState, type KeptBook, type KeptCode, type KeptVerdicts, type NumberingKind } from './verdicts.ts';

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

/** Each code of one kind (payments or transfers): its listed meaning, its state and its evidence. */
export class CodeBook {
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
