/**
 * Where the verdicts on the partner's status numbering are kept (domain/numbering/status-numbering.ts): the
 * store's key-value table, per partner service and account, each verdict tied to the setting it was
 * reached under (a changed setting starts unverified). Instances sharing the store read each other's.
 * A store that cannot be read or written keeps nothing: the verdicts then last this run.
 *
 * One record per setting and kind (payments, transfers): each code's state (verified, mismatch, or
 * unknown: a code the setting does not list, seen on a payment) with its evidence. An earlier
 * release kept three keys (the meanings verified, a mismatch of the whole setting, a transfers
 * mismatch): they are read too, and cleared by `pix-checkout numbering reset`.
 */
import type { StatusMeaning } from '../../partner/status-codes.ts';
import type { TokenStore } from '../../partner/token-store.ts';

/** The meanings an earlier release verified (three). */
export const LEGACY_MEANINGS: readonly StatusMeaning[] = ['pending', 'approved', 'canceled'];

/** The keys of the store's key-value table. */
const NUMBERING = 'status-numbering';
const LEGACY_VERIFIED = 'status-codes-verified';
const LEGACY_MISMATCH = 'status-codes-mismatch';
const LEGACY_TRANSFERS_MISMATCH = 'status-codes-transfers-mismatch';

export type NumberingKind = 'payment' | 'transfer';

/** What is known of one code. `unknown`: a code the setting does not list, seen (it decides nothing). */
export type CodeState = 'unverified' | 'verified' | 'mismatch' | 'unknown';

export interface KeptCode {
  state: CodeState;
  /** What was seen, newest last (at most EVIDENCE_KEPT lines). */
  evidence: string[];
  /** Epoch ms of the last change. */
  at: number;
  /** Whether the mismatch outlives this run (a code's contradiction by the partner's own reads); words contradict for this run only. */
  kept?: boolean;
}

/** Everything kept for one kind under one setting: each code's state, and the codes seen on new payments or transfers. */
export interface KeptBook {
  configured: string;
  codes: Record<string, KeptCode>;
  /** Codes seen on a new payment or transfer (pending by definition), listed or not. */
  fresh: number[];
  /** Epoch ms of the last `pix-checkout numbering reset`: verdicts older than it are forgotten, here and by every instance. */
  reset_at?: number;
}

export const EVIDENCE_KEPT = 5;

export class KeptVerdicts {
  private readonly key: string;
  private readonly legacy: { verified: string; mismatch: string; transfers: string };

  /** `scope` names the partner service and account (tokenStoreKey); `configured` the setting (formatStatusCodes). */
  constructor(
    private readonly memory: TokenStore | undefined,
    scope: string,
    readonly kind: NumberingKind,
    private readonly configured: string,
  ) {
    this.key = `${NUMBERING}|${kind}|${scope}`;
    this.legacy = { verified: `${LEGACY_VERIFIED}|${scope}`, mismatch: `${LEGACY_MISMATCH}|${scope}`, transfers: `${LEGACY_TRANSFERS_MISMATCH}|${scope}` };
  }

  /** What was kept for this setting (by an earlier run, another instance, or an earlier release). */
  async read(): Promise<{ book: KeptBook | null; legacyVerified: StatusMeaning[]; legacyProblem: string | null }> {
    if (!this.memory) return { book: null, legacyVerified: [], legacyProblem: null };
    const load = (key: string) => this.memory!.load(key).catch(() => null);
    const [book, verified, mismatch, transfers] = await Promise.all([
      load(this.key),
      this.kind === 'payment' ? load(this.legacy.verified) : null,
      this.kind === 'payment' ? load(this.legacy.mismatch) : null,
      this.kind === 'transfer' ? load(this.legacy.transfers) : null,
    ]);
    const kept = parse<KeptBook>(book);
    const legacy = parse<{ configured?: string; problem?: string }>(mismatch ?? transfers);
    return {
      book:
        kept?.configured === this.configured && kept.codes && typeof kept.codes === 'object'
          ? { ...kept, fresh: Array.isArray(kept.fresh) ? kept.fresh : [] }
          : null,
      legacyVerified: legacyVerdicts(verified, this.configured),
      legacyProblem: legacy?.configured === this.configured ? (legacy.problem ?? 'see the log') : null,
    };
  }

  /** Keeps this book, merged with what another instance may have kept meanwhile (a mismatch wins, then verified). */
  async save(book: KeptBook): Promise<void> {
    if (!this.memory) return;
    const { book: other } = await this.read();
    const merged = other ? mergeBooks(other, book) : book;
    await this.memory.save(this.key, JSON.stringify(merged)).catch(() => undefined);
  }

  /**
   * Forgets every verdict of this kind (`pix-checkout numbering reset`), the earlier release's
   * included: a mark with the time, so instances still running drop what they knew before it too.
   */
  async reset(at: number): Promise<void> {
    if (!this.memory) return;
    const legacy = this.kind === 'payment' ? [this.legacy.verified, this.legacy.mismatch] : [this.legacy.transfers];
    for (const key of legacy) await this.memory.clear(key);
    const book: KeptBook = { configured: this.configured, codes: {}, fresh: [], reset_at: at };
    await this.memory.save(this.key, JSON.stringify(book));
  }
}

const RANK: Record<CodeState, number> = { unverified: 0, unknown: 1, verified: 2, mismatch: 3 };

export function mergeBooks(a: KeptBook, b: KeptBook): KeptBook {
  const resetAt = Math.max(a.reset_at ?? 0, b.reset_at ?? 0);
  const fresh = (book: KeptBook) => Object.entries(book.codes).filter(([, kept]) => resetAt === 0 || kept.at > resetAt);
  const codes: Record<string, KeptCode> = Object.fromEntries(fresh(a));
  for (const [code, kept] of fresh(b)) {
    const other = codes[code];
    if (!other) {
      codes[code] = kept;
      continue;
    }
    const winner = RANK[kept.state] >= RANK[other.state] ? kept : other;
    const evidence = [...new Set([...other.evidence, ...kept.evidence])].slice(-EVIDENCE_KEPT);
    codes[code] = { ...winner, evidence, at: Math.max(other.at, kept.at) };
  }
  const seen = (book: KeptBook) => ((book.reset_at ?? 0) >= resetAt ? book.fresh : []);
  return { configured: b.configured, codes, fresh: [...new Set([...seen(a), ...seen(b)])], ...(resetAt > 0 ? { reset_at: resetAt } : {}) };
}

function parse<T>(text: string | null | undefined): T | null {
  if (!text) return null;
  try {
    return JSON.parse(text) as T;
  } catch {
    return null;
  }
}

/** The meanings an earlier release verified for this setting. An even older one kept the setting itself once its pending code was verified. */
function legacyVerdicts(text: string | null | undefined, configured: string): StatusMeaning[] {
  if (!text) return [];
  if (text === configured) return ['pending'];
  const kept = parse<{ configured?: string; verified?: unknown }>(text);
  if (kept?.configured !== configured || !Array.isArray(kept.verified)) return [];
  return LEGACY_MEANINGS.filter((m) => (kept.verified as unknown[]).includes(m));
}
