/**
 * What the partner's numeric `status` means. The spec does not say ("meaning of the numeric status
 * codes: not shown"), so it is configuration: `PIX_STATUS_CODES` for payments and
 * `PIX_TRANSFER_STATUS_CODES` for transfers (the payments' codes never settle a transfer), the
 * sandbox's numbering (PARTNER_STATUS) by default. A status given as a word (`paid`, `cancelled`)
 * means what it says.
 *
 * The setting names every code the partner documents, by meaning (docs/partner-status-codes.md):
 * `pending`, `approved`, `canceled` (required), and when the partner has them `expired` (a code past
 * its expiration, not canceled yet: never final; payable until its cancellation unless written
 * `expired_unpayable`), `returned` (money given back after approval) and `failed` (an attempt that
 * failed: never final). A meaning may list several codes (`canceled=4|5`). The older three-slot forms
 * (`pending=1,approved=2,canceled=3`, `1,2,3`) read as before.
 *
 * Whether the configured numbering is right is checked at run time (domain/numbering/status-numbering.ts):
 * a guess never decides money.
 */
import { PARTNER_STATUS } from './wire.ts';
import type { PartnerStatus } from './read-fields.ts';

/** Every meaning a code may be given, in the order the setting is written. */
export const STATUS_MEANINGS = ['pending', 'approved', 'canceled', 'expired', 'returned', 'failed'] as const;
export type StatusMeaning = (typeof STATUS_MEANINGS)[number];
/** The meanings every partner has (the spec's three), which the setting must name. */
export const REQUIRED_MEANINGS: readonly StatusMeaning[] = ['pending', 'approved', 'canceled'];
/** The meanings that end a payment or a transfer in the proxy's own records. */
export type FinalMeaning = 'approved' | 'canceled';

export type StatusCodes = Readonly<Record<StatusMeaning, readonly number[]>> & {
  /** Whether a code listed `expired` may still be paid until its cancellation (the spec's own rule, and the safe reading): false only for `expired_unpayable`. */
  readonly expiredPayable: boolean;
};

/** A numbering from one code per required meaning (and optional lists for the others). */
export function statusCodes(codes: Partial<Record<StatusMeaning, number | readonly number[]>> & { expiredPayable?: boolean }): StatusCodes {
  const list = (m: StatusMeaning): readonly number[] => {
    const v = codes[m];
    return v === undefined ? [] : typeof v === 'number' ? [v] : [...v];
  };
  return {
    pending: list('pending'),
    approved: list('approved'),
    canceled: list('canceled'),
    expired: list('expired'),
    returned: list('returned'),
    failed: list('failed'),
    expiredPayable: codes.expiredPayable ?? true,
  };
}

/** The sandbox's default numbering (ASSUMPTIONS.md), for payments and for transfers alike. */
export const DEFAULT_STATUS_CODES: StatusCodes = statusCodes(PARTNER_STATUS);
/** What transfers are read with when PIX_TRANSFER_STATUS_CODES is not set: the sandbox's numbering, verified apart from the payments'. */
export const DEFAULT_TRANSFER_STATUS_CODES: StatusCodes = DEFAULT_STATUS_CODES;

/** Accepts the numbering as parsed (StatusCodes) or in the older one-code-per-meaning shape (`{pending: 1, approved: 2, canceled: 3}`). */
export function asStatusCodes(codes: StatusCodes | Readonly<Record<'pending' | 'approved' | 'canceled', number>>): StatusCodes {
  if (Array.isArray((codes as StatusCodes).pending)) return codes as StatusCodes;
  const legacy = codes as Readonly<Record<'pending' | 'approved' | 'canceled', number>>;
  return { ...DEFAULT_STATUS_CODES, pending: [legacy.pending], approved: [legacy.approved], canceled: [legacy.canceled] };
}

export type AnyStatusCodes = Parameters<typeof asStatusCodes>[0];

/** The names the setting accepts for each meaning (read tolerantly: case, `-` or `_`, English spellings). */
const MEANING_NAMES: Readonly<Record<string, StatusMeaning>> = {
  pending: 'pending',
  waiting: 'pending',
  approved: 'approved',
  paid: 'approved',
  canceled: 'canceled',
  cancelled: 'canceled',
  expired: 'expired',
  expired_payable: 'expired',
  expired_unpayable: 'expired',
  returned: 'returned',
  refunded: 'returned',
  failed: 'failed',
};

/**
 * `pending=1,approved=2,expired=3,canceled=4|5,returned=6` (any order; a meaning may list several
 * codes, `|`-separated, or be named twice), or the older `1,2,3` (pending, approved, canceled in that
 * order). Null when malformed, when a required meaning is missing, or when a code has two meanings.
 */
export function parseStatusCodes(text: string): StatusCodes | null {
  const parts = text
    .split(',')
    .map((part) => part.trim())
    .filter((part) => part !== '');
  if (parts.length === 0) return null;
  const named = parts.every((part) => part.includes('='));
  if (!named && (parts.length !== 3 || parts.some((part) => part.includes('=')))) return null;
  const lists: Record<StatusMeaning, number[]> = { pending: [], approved: [], canceled: [], expired: [], returned: [], failed: [] };
  const seen = new Set<number>();
  let expiredPayable: boolean | null = null;
  for (const [i, part] of parts.entries()) {
    const [rawName, rawValue] = named ? splitOnce(part) : [REQUIRED_MEANINGS[i]!, part];
    const name = rawName.trim().toLowerCase().replace(/-/g, '_');
    const meaning = Object.hasOwn(MEANING_NAMES, name) ? MEANING_NAMES[name]! : null;
    if (meaning === null) return null;
    if (meaning === 'expired') {
      const payable = name !== 'expired_unpayable';
      // One partner's expired codes are payable or not: not both.
      if (expiredPayable !== null && expiredPayable !== payable) return null;
      expiredPayable = payable;
    }
    const values = rawValue.split('|').map((v) => v.trim());
    for (const value of values) {
      if (!/^-?\d{1,9}$/.test(value)) return null;
      const code = Number(value);
      if (seen.has(code)) {
        // The same code twice under one meaning is harmless; under two, ambiguous.
        if (lists[meaning].includes(code)) continue;
        return null;
      }
      seen.add(code);
      lists[meaning].push(code);
    }
  }
  if (REQUIRED_MEANINGS.some((m) => lists[m].length === 0)) return null;
  return { ...lists, expiredPayable: expiredPayable ?? true };
}

function splitOnce(part: string): [string, string] {
  const at = part.indexOf('=');
  return [part.slice(0, at), part.slice(at + 1)];
}

/** The setting as PIX_STATUS_CODES spells it: the three required meanings first (the older form, for a three-code partner), then the others it names. */
export function formatStatusCodes(codes: StatusCodes): string {
  return STATUS_MEANINGS.filter((m) => codes[m].length > 0)
    .map((m) => `${m === 'expired' && !codes.expiredPayable ? 'expired_unpayable' : m}=${codes[m].join('|')}`)
    .join(',');
}

/** What a numeric code means under `codes`; null for one they do not list. */
export function codeMeaning(codes: StatusCodes, code: number): StatusMeaning | null {
  for (const meaning of STATUS_MEANINGS) if (codes[meaning].includes(code)) return meaning;
  return null;
}

/** Every code the setting lists. */
export const listedCodes = (codes: StatusCodes): number[] => STATUS_MEANINGS.flatMap((m) => [...codes[m]]);

/**
 * The status and outcome words a partner may use, and what each means: the one list, read by the
 * payment and transfer readers and by the notification reader. English and Portuguese, keyed
 * without accents (`plainWord`). Failure words (`failed`, `rejected`, `refused`...) mean
 * `failed`, never canceled: an attempt failed, and the code may still be paid. `expired` is never
 * final either (a payment is canceled an hour after it expires). Words not here mean nothing:
 * `processing`/`em processamento`/`processando` among them: money may be in flight, so they are not
 * "unpaid for sure" (no new code beside them).
 */
export const WORDS: Readonly<Record<string, StatusMeaning>> = {
  pending: 'pending',
  waiting: 'pending',
  created: 'pending',
  active: 'pending',
  open: 'pending',
  pendente: 'pending',
  aguardando: 'pending',
  aguardando_pagamento: 'pending',
  criado: 'pending',
  criada: 'pending',
  ativo: 'pending',
  ativa: 'pending',
  aberto: 'pending',
  aberta: 'pending',
  approved: 'approved',
  paid: 'approved',
  confirmed: 'approved',
  completed: 'approved',
  concluded: 'approved',
  settled: 'approved',
  received: 'approved',
  pago: 'approved',
  paga: 'approved',
  aprovado: 'approved',
  aprovada: 'approved',
  confirmado: 'approved',
  confirmada: 'approved',
  concluido: 'approved',
  concluida: 'approved',
  liquidado: 'approved',
  liquidada: 'approved',
  recebido: 'approved',
  recebida: 'approved',
  canceled: 'canceled',
  cancelled: 'canceled',
  cancelado: 'canceled',
  cancelada: 'canceled',
  expired: 'expired',
  expirado: 'expired',
  expirada: 'expired',
  vencido: 'expired',
  vencida: 'expired',
  returned: 'returned',
  refunded: 'returned',
  devolvido: 'returned',
  devolvida: 'returned',
  estornado: 'returned',
  estornada: 'returned',
  failed: 'failed',
  refused: 'failed',
  rejected: 'failed',
  declined: 'failed',
  error: 'failed',
  falhou: 'failed',
  falha: 'failed',
  recusado: 'failed',
  recusada: 'failed',
  rejeitado: 'failed',
  rejeitada: 'failed',
  erro: 'failed',
};

/** A word as `WORDS` keys it: lower case, without accents (`Concluído` -> `concluido`). */
export const plainWord = (word: string): string => word.normalize('NFD').replace(/\p{M}/gu, '').toLowerCase();

/** What a status word means, in any case, with or without accents; null for one we do not know. */
export function wordMeaning(word: string): StatusMeaning | null {
  const key = plainWord(word.trim()).replace(/[\s-]+/g, '_');
  // Own keys only: `constructor` is no status.
  return Object.hasOwn(WORDS, key) ? WORDS[key]! : null;
}

/** What a status means under `codes`; null when it is a code or word they do not name. */
export function statusMeaning(codes: StatusCodes, status: PartnerStatus): StatusMeaning | null {
  if (status.word !== null) return wordMeaning(status.word);
  return status.code === null ? null : codeMeaning(codes, status.code);
}

/** `1` -> `approved (1)`, `"paid"` -> `paid`: a status as the service gave it, with its meaning. */
export function describeStatus(codes: StatusCodes, status: PartnerStatus | null): string {
  if (!status) return 'not given';
  if (status.word !== null) return status.word;
  const meaning = statusMeaning(codes, status);
  return `${meaning ?? 'unknown'} (${status.code})`;
}

/** A status as the command line prints it in JSON: as given, its meaning, and where that meaning comes from. */
export function statusJson(codes: StatusCodes, status: PartnerStatus | null, setting = 'PIX_STATUS_CODES') {
  if (!status) return null;
  return {
    code: status.code,
    word: status.word,
    meaning: statusMeaning(codes, status),
    // A code's meaning is the setting's, which the command line does not check (doctor --create does).
    meaning_from: status.word !== null ? 'word' : `${setting}, not checked`,
  };
}

/** A warning when a new payment's or transfer's status is not pending under `codes` (the setting is then wrong); null when it is. */
export function freshStatusWarning(codes: StatusCodes, status: PartnerStatus | null, what: string): string | null {
  if (!status) return null;
  if (statusMeaning(codes, status) === 'pending') return null;
  return (
    `pix-checkout: warning: the new ${what}'s status is ${status.word ?? status.code}, but PIX_STATUS_CODES says pending is ${codes.pending.join(' or ')}: ` +
    `the partner numbers statuses otherwise, so no status this command shows can be trusted. Run pix-checkout doctor --create and set PIX_STATUS_CODES.`
  );
}
