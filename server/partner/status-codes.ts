/**
 * What the partner's numeric `status` means. The spec does not say ("meaning of the numeric status
 * codes: not shown"), so it is configuration: `PIX_STATUS_CODES`, the sandbox's numbering
 * (PARTNER_STATUS) by default. A status given as a word (`paid`, `cancelled`) means what it says.
 *
 * Whether the configured numbering is right is checked at run time (domain/status-numbering.ts):
 * a guess never decides money.
 */
import { PARTNER_STATUS } from './wire.ts';
import type { PartnerStatus } from './read-fields.ts';

export type StatusMeaning = 'pending' | 'approved' | 'canceled';

export interface StatusCodes {
  pending: number;
  approved: number;
  canceled: number;
}

/** The sandbox's default numbering (ASSUMPTIONS.md). */
export const DEFAULT_STATUS_CODES: StatusCodes = { ...PARTNER_STATUS };

/** `pending=1,approved=2,canceled=3`, or `1,2,3` in that order; null when malformed or ambiguous. */
export function parseStatusCodes(text: string): StatusCodes | null {
  const parts = text.split(',').map((part) => part.trim());
  if (parts.length !== 3) return null;
  const named = parts.every((part) => part.includes('='));
  const codes: Partial<Record<StatusMeaning, number>> = {};
  const order: StatusMeaning[] = ['pending', 'approved', 'canceled'];
  for (const [i, part] of parts.entries()) {
    const [name, value] = named ? part.split('=').map((s) => s.trim()) : [order[i], part];
    const meaning = name === 'cancelled' ? 'canceled' : name === 'paid' ? 'approved' : name;
    if (!order.includes(meaning as StatusMeaning) || !/^-?\d+$/.test(value ?? '')) return null;
    codes[meaning as StatusMeaning] = Number(value);
  }
  const { pending, approved, canceled } = codes;
  if (pending === undefined || approved === undefined || canceled === undefined) return null;
  if (new Set([pending, approved, canceled]).size !== 3) return null;
  return { pending, approved, canceled };
}

export const formatStatusCodes = (codes: StatusCodes): string => `pending=${codes.pending},approved=${codes.approved},canceled=${codes.canceled}`;

/**
 * The status and outcome words a partner may use, and what each means: the one list, read by the
 * payment and transfer readers and by the notification reader. English and Portuguese, keyed
 * without accents (`plainWord`). Words not here mean nothing: `expired`/`expirado` among them (not
 * an outcome: a payment is canceled an hour after it expires), and `processing`/`em processamento`/
 * `processando`: money may be in flight, so they are not "unpaid for sure" (no new code beside them).
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
  refused: 'canceled',
  rejected: 'canceled',
  failed: 'canceled',
  cancelado: 'canceled',
  cancelada: 'canceled',
  recusado: 'canceled',
  recusada: 'canceled',
  rejeitado: 'canceled',
  rejeitada: 'canceled',
};

/** A word as `WORDS` keys it: lower case, without accents (`Concluído` -> `concluido`). */
export const plainWord = (word: string): string => word.normalize('NFD').replace(/\p{M}/gu, '').toLowerCase();

/** What a status word means, in any case, with or without accents; null for one we do not know (`expired` among them: not an outcome). */
export function wordMeaning(word: string): StatusMeaning | null {
  const key = plainWord(word.trim()).replace(/[\s-]+/g, '_');
  // Own keys only: `constructor` is no status.
  return Object.hasOwn(WORDS, key) ? WORDS[key]! : null;
}

/** What a status means under `codes`; null when it is a code or word they do not name. */
export function statusMeaning(codes: StatusCodes, status: PartnerStatus): StatusMeaning | null {
  if (status.word !== null) return wordMeaning(status.word);
  if (status.code === codes.pending) return 'pending';
  if (status.code === codes.approved) return 'approved';
  if (status.code === codes.canceled) return 'canceled';
  return null;
}

/** `1` -> `approved (1)`, `"paid"` -> `paid`: a status as the service gave it, with its meaning. */
export function describeStatus(codes: StatusCodes, status: PartnerStatus | null): string {
  if (!status) return 'not given';
  if (status.word !== null) return status.word;
  const meaning = statusMeaning(codes, status);
  return `${meaning ?? 'unknown'} (${status.code})`;
}

/** A status as the command line prints it in JSON: as given, its meaning, and where that meaning comes from. */
export function statusJson(codes: StatusCodes, status: PartnerStatus | null) {
  if (!status) return null;
  return {
    code: status.code,
    word: status.word,
    meaning: statusMeaning(codes, status),
    // A code's meaning is the setting's, which the command line does not check (doctor --create does).
    meaning_from: status.word !== null ? 'word' : 'PIX_STATUS_CODES, not checked',
  };
}

/** A warning when a new payment's or transfer's status is not pending under `codes` (the setting is then wrong); null when it is. */
export function freshStatusWarning(codes: StatusCodes, status: PartnerStatus | null, what: string): string | null {
  if (!status) return null;
  const pending = status.word !== null ? statusMeaning(codes, status) === 'pending' : status.code === codes.pending;
  if (pending) return null;
  return (
    `pix-checkout: warning: the new ${what}'s status is ${status.word ?? status.code}, but PIX_STATUS_CODES says pending is ${codes.pending}: ` +
    `the partner numbers statuses otherwise, so no status this command shows can be trusted. Run pix-checkout doctor --create and set PIX_STATUS_CODES.`
  );
}
