/**
 * Where the verdicts on the partner's status numbering are kept (domain/status-numbering.ts): the
 * store's key-value table, per partner service and account, each verdict tied to the setting it was
 * reached under (a changed setting starts unverified). Instances sharing the store read each other's.
 * A store that cannot be read or written keeps nothing: the verdicts then last this run.
 */
import type { StatusMeaning } from '../partner/status-codes.ts';
import type { TokenStore } from '../partner/token-store.ts';

export const MEANINGS: readonly StatusMeaning[] = ['pending', 'approved', 'canceled'];

/** The keys of the store's key-value table. */
const VERIFIED = 'status-codes-verified';
const MISMATCH = 'status-codes-mismatch';
const TRANSFERS_MISMATCH = 'status-codes-transfers-mismatch';

/** A mismatch of the payments' numbering, as kept: the words-only path needs what it had learned. */
export interface KeptMismatch {
  seen_pending?: number | null;
  approved?: number | null;
  problem?: string;
}

/** What was kept for this setting: the codes verified, the payments' mismatch, the transfers' problem. */
export interface Kept {
  verified: StatusMeaning[];
  mismatch: KeptMismatch | null;
  transfersProblem: string | null;
}

export class KeptVerdicts {
  private readonly verifiedKey: string;
  private readonly mismatchKey: string;
  private readonly transfersKey: string;

  /** `scope` names the partner service and account (tokenStoreKey); `configured` the setting (formatStatusCodes). */
  constructor(
    private readonly memory: TokenStore | undefined,
    scope: string,
    private readonly configured: string,
  ) {
    this.verifiedKey = `${VERIFIED}|${scope}`;
    this.mismatchKey = `${MISMATCH}|${scope}`;
    this.transfersKey = `${TRANSFERS_MISMATCH}|${scope}`;
  }

  /** Everything kept for this setting, by an earlier run or another instance. */
  async read(): Promise<Kept> {
    const [verified, mismatch, transfers] = await Promise.all([
      this.memory?.load(this.verifiedKey).catch(() => null),
      this.memory?.load(this.mismatchKey).catch(() => null),
      this.memory?.load(this.transfersKey).catch(() => null),
    ]);
    const keptTransfers = parse<{ configured?: string; problem?: string }>(transfers);
    const kept = parse<KeptMismatch & { configured?: string }>(mismatch);
    return {
      verified: keptVerdicts(verified, this.configured),
      mismatch: kept?.configured === this.configured ? kept : null,
      transfersProblem: keptTransfers?.configured === this.configured ? (keptTransfers.problem ?? 'see the log') : null,
    };
  }

  /** Keeps the codes verified here, merged with what another instance may have kept meanwhile. */
  async saveVerified(verified: ReadonlySet<StatusMeaning>): Promise<void> {
    if (!this.memory) return;
    const kept = keptVerdicts(await this.memory.load(this.verifiedKey).catch(() => null), this.configured);
    const all = MEANINGS.filter((m) => verified.has(m) || kept.includes(m));
    await this.memory.save(this.verifiedKey, JSON.stringify({ configured: this.configured, verified: all })).catch(() => undefined);
  }

  async saveMismatch(mismatch: KeptMismatch): Promise<void> {
    const kept = { configured: this.configured, seen_pending: mismatch.seen_pending, approved: mismatch.approved, problem: mismatch.problem };
    await this.memory?.save(this.mismatchKey, JSON.stringify(kept)).catch(() => undefined);
  }

  async saveTransfersProblem(problem: string): Promise<void> {
    await this.memory?.save(this.transfersKey, JSON.stringify({ configured: this.configured, problem })).catch(() => undefined);
  }
}

function parse<T>(text: string | null | undefined): T | null {
  if (!text) return null;
  try {
    return JSON.parse(text) as T;
  } catch {
    return null;
  }
}

/** The codes a kept verdict names for this setting. An older release kept the setting itself once its pending code was verified. */
function keptVerdicts(text: string | null | undefined, configured: string): StatusMeaning[] {
  if (!text) return [];
  if (text === configured) return ['pending'];
  const kept = parse<{ configured?: string; verified?: unknown }>(text);
  if (kept?.configured !== configured || !Array.isArray(kept.verified)) return [];
  return MEANINGS.filter((m) => (kept.verified as unknown[]).includes(m));
}
