/**
 * Reading the partner's notifications tolerantly (spec 6: "payload field lists of both formats: not
 * shown"). All a notification must give is a reference, in any plausible field; everything else is
 * a hint. Its body is never trusted: the proxy confirms each one with the partner before acting.
 *
 * - The reference: `external_reference` (or `externalReference`, `reference`), at the top or under
 *   `data`, `transaction`, `pix_deposit`, `payload`, `object`...
 * - The kind, when it says: `type`/`kind` or the event's first word (`payment`, `deposit`,
 *   `transfer`, `withdrawal`...). Unsaid, the proxy looks the reference up.
 * - An explicit outcome only from words (`payment.approved`, `PAYMENT_PAID`, `status: "cancelled"`);
 *   a numeric status is kept as given, its meaning being configuration (status-codes.ts).
 * - The event id, when the envelope has one (new format).
 *
 * A form-encoded body is read as its fields (a field holding JSON as that JSON).
 */
import { LIMITS } from '../../src/shared/limits.ts';
import { at, isObject, readNumber, type PartnerStatus } from './read.ts';
import { wordMeaning } from './status-codes.ts';

export interface PartnerNotification {
  reference: string;
  kind: 'payment' | 'transfer' | null;
  /** Only from words: a numeric status is not an outcome until its meaning is known. */
  outcome: 'approved' | 'canceled' | null;
  status: PartnerStatus | null;
  eventId: string | null;
}

type Json = unknown;

const ENVELOPES = ['', 'data', 'transaction', 'payload', 'object', 'resource', 'body', 'data.transaction', 'data.object', 'event'];
// `pix` alone names neither (a Pix transfer is a Pix too): only with `in`/`out` or another word.
const PAYMENT_WORDS = new Set(['payment', 'deposit', 'pix_deposit', 'charge', 'cobranca', 'pix_in', 'pixin', 'receivement', 'receipt', 'qrcode']);
/** Words an event name may have before its outcome: kinds, and the parts of two-word kinds. */
const KIND_PARTS = new Set(['pix', 'in', 'out', 'cash', 'qr', 'code']);
const TRANSFER_WORDS = new Set(['transfer', 'withdrawal', 'withdraw', 'payout', 'pix_out', 'pixout', 'cashout', 'cash_out']);

/** The body as JSON: a JSON text, or form fields. Null when it is neither. */
export function notificationBody(raw: string, contentType: string | undefined): Json {
  const text = raw.trim();
  if (text === '') return null;
  if (text.startsWith('{') || text.startsWith('[')) {
    try {
      return JSON.parse(text);
    } catch {
      return null;
    }
  }
  // Form fields: said by the Content-Type, or (when it is not known: a stored body) of that form.
  if ((contentType ?? '').toLowerCase().includes('application/x-www-form-urlencoded') || /^[^=&\s{[][^=&\s]*=/.test(text)) {
    const fields: Record<string, Json> = {};
    for (const [key, value] of new URLSearchParams(text)) {
      const trimmed = value.trim();
      if (trimmed.startsWith('{')) {
        try {
          const parsed: Json = JSON.parse(trimmed);
          if (isObject(parsed)) {
            fields[key] = parsed;
            continue;
          }
        } catch {
          // Not JSON after all: kept as text.
        }
      }
      fields[key] = value;
    }
    // A form whose only content is one JSON field (`payload={...}`) is that JSON.
    const values = Object.values(fields);
    return values.length === 1 && isObject(values[0]) ? values[0] : fields;
  }
  return null;
}

/** The first of `names` (in their order of confidence) found in any envelope. */
function findString(root: Json, names: readonly string[], envelopes = ENVELOPES): string | null {
  for (const name of names) {
    for (const envelope of envelopes) {
      const node = at(root, envelope);
      if (!isObject(node)) continue;
      const value = node[name];
      if (typeof value === 'string' && value.trim() !== '' && value.length <= LIMITS.referenceMaxLength) return value.trim();
    }
  }
  return null;
}

/** `payment.approved`, `PAYMENT_PAID`, `deposit.cancelled`, `pix-in:confirmed` -> its words, lower case. */
const words = (text: string): string[] =>
  text
    .toLowerCase()
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
]);

/** The outcome an event's name states: only its last word, and only with nothing that turns it into something else. */
function eventOutcome(eventWords: string[]): PartnerNotification['outcome'] {
  if (eventWords.length === 0 || eventWords.some((w) => NOT_AN_OUTCOME.has(w))) return null;
  // Only `<kind words>.<outcome>`: `payment.settlement.failed` is about a settlement, not the payment.
  const before = eventWords.slice(0, -1);
  if (!before.every((w) => KIND_PARTS.has(w) || kindOf(w) !== null)) return null;
  return outcomeOf(eventWords.at(-1)!);
}

function kindOf(word: string | null): PartnerNotification['kind'] {
  if (word === null) return null;
  const w = word.toLowerCase().replace(/-/g, '_');
  if (PAYMENT_WORDS.has(w)) return 'payment';
  if (TRANSFER_WORDS.has(w)) return 'transfer';
  return null;
}

function outcomeOf(word: string | null): PartnerNotification['outcome'] {
  const meaning = word === null ? null : wordMeaning(word);
  return meaning === 'approved' || meaning === 'canceled' ? meaning : null;
}

/** What a notification says; null when it names no reference we could find. */
export function readNotification(body: Json): PartnerNotification | null {
  if (!isObject(body)) return null;
  const reference =
    findString(body, ['external_reference', 'externalReference', 'reference', 'ext_reference']) ??
    findString(body, ['external_reference', 'externalReference'], ['pix_deposit', 'data.pix_deposit']);
  if (!reference) return null;

  const event = findString(body, ['event', 'event_type', 'eventType', 'event_name', 'topic', 'action'], ['', 'data']);
  const eventWords = event ? words(event) : [];
  const kind =
    kindOf(findString(body, ['type', 'kind', 'transaction_type', 'transactionType', 'resource', 'object'])) ??
    // Two-word kinds first (`pix_out`, `pix_deposit`), then single words.
    eventWords
      .slice(0, -1)
      .map((w, i) => kindOf(`${w}_${eventWords[i + 1]}`))
      .find((k) => k !== null) ??
    eventWords.map(kindOf).find((k) => k !== null) ??
    null;

  let status: PartnerStatus | null = null;
  for (const envelope of ENVELOPES) {
    const node = at(body, envelope);
    if (!isObject(node) || node.status === undefined || node.status === null) continue;
    const code = readNumber(node.status);
    if (code !== null && Number.isInteger(code)) status = { code, word: null };
    else if (typeof node.status === 'string') status = { code: null, word: node.status.trim().toLowerCase() };
    if (status) break;
  }
  // An event name decides when there is one; else an outcome field, else a status word.
  const outcome =
    event !== null ? eventOutcome(eventWords) : (outcomeOf(findString(body, ['outcome', 'result'])) ?? (status?.word ? outcomeOf(status.word) : null));

  // The event id of an envelope: its own field, or `id` beside an event name (the old format's `id` is the transaction's).
  const eventId = findString(body, ['event_id', 'eventId', 'notification_id'], ['']) ?? (event !== null && typeof body.id === 'string' ? body.id : null);
  return { reference, kind, outcome, status, eventId };
}
