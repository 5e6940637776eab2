/**
 * What the words of a notification say (spec 6 shows none): the kind an event names (`payment`,
 * `deposit`, `withdrawal`, `saque`...), the outcome its last word states (`payment.approved`,
 * `PAYMENT_PAID`, `pagamento.aprovado`: status-codes.ts `WORDS`), and the words of a return. In any
 * case, with or without accents.
 */
import { plainWord, wordMeaning } from './status-codes.ts';

export type NotificationKind = 'payment' | 'transfer' | null;
/** Only from words: a numeric status is not an outcome until its meaning is known. */
export type NotificationOutcome = 'approved' | 'canceled' | null;

/** Words of a return beside those `WORDS` gives the meaning returned (`returned`, `estornado`...): the nouns (`devolucao`, `MED`). */
export const RETURN_WORDS = new Set(['return', 'returned', 'devolucao', 'devolvido', 'devolvida', 'devolucoes', 'med']);
// `pix` alone names neither (a Pix transfer is a Pix too): only with `in`/`out` or another word.
const PAYMENT_WORDS = new Set([
  'payment',
  'deposit',
  'pix_deposit',
  'charge',
  'cobranca',
  'pix_in',
  'pixin',
  'receivement',
  'receipt',
  'qrcode',
  'deposito',
  'recebimento',
]);
/**
 * Words an event name may have before its outcome: kinds, the parts of two-word kinds, and words
 * naming no kind (`pagamento` is a payment received or one sent: a payout).
 */
const KIND_PARTS = new Set(['pix', 'in', 'out', 'cash', 'qr', 'code', 'transaction', 'transacao', 'pagamento']);
const TRANSFER_WORDS = new Set(['transfer', 'withdrawal', 'withdraw', 'payout', 'pix_out', 'pixout', 'cashout', 'cash_out', 'transferencia', 'saque']);

/** `payment.approved`, `PAYMENT_PAID`, `deposit.cancelled`, `pix-in:confirmed` -> its words, lower case, without accents. */
export const words = (text: string): string[] =>
  plainWord(text)
    .split(/[._:/\s-]+/)
    .filter(Boolean);

/** Words that make an event something else than the outcome its last word names (`PAYMENT_NOT_PAID`, `refund_completed`). */
const NOT_AN_OUTCOME = new Set([
  'not',
  'no',
  'non',
  'un',
  'never',
  'refund',
  'refunded',
  'chargeback',
  'reversal',
  'reversed',
  'dispute',
  'expired',
  'partial',
  'partially',
  'pre',
  'attempt',
  'attempted',
  // The same in Portuguese (accents dropped): `pagamento.nao_aprovado`, `pix.estornado`, `devolucao.concluida`.
  'nao',
  'estorno',
  'estornado',
  'estornada',
  'devolucao',
  'devolvido',
  'devolvida',
  'reembolso',
  'reembolsado',
  'contestacao',
  'expirado',
  'expirada',
  'parcial',
  'parcialmente',
  'tentativa',
]);
export function eventOutcome(eventWords: string[]): NotificationOutcome {
  if (eventWords.length === 0 || eventWords.some((w) => NOT_AN_OUTCOME.has(w))) return null;
  // Only `<kind words>.<outcome>`: `payment.settlement.failed` is about a settlement, not the payment.
  const before = eventWords.slice(0, -1);
  if (!before.every((w) => KIND_PARTS.has(w) || kindOf(w) !== null)) return null;
  return outcomeOf(eventWords.at(-1)!);
}

export function kindOf(word: string | null): NotificationKind {
  if (word === null) return null;
  const w = plainWord(word).replace(/-/g, '_');
  if (PAYMENT_WORDS.has(w)) return 'payment';
  if (TRANSFER_WORDS.has(w)) return 'transfer';
  return null;
}

export function outcomeOf(word: string | null): NotificationOutcome {
  const meaning = word === null ? null : wordMeaning(word);
  return meaning === 'approved' || meaning === 'canceled' ? meaning : null;
}
