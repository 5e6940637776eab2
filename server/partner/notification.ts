/**
 * Reading the partner's notifications tolerantly (spec 6: "payload field lists of both formats: not
 * shown"). All a notification must give is a reference, in any plausible field; everything else is
 * a hint. Its body is never trusted: the proxy confirms each one with the partner before acting.
 *
 * The fields are looked for anywhere in the body (objects and arrays, breadth first, to a bounded
 * depth and node count: `WALK`), under whatever wrappers the partner puts around them
 * (`{event, payload: {transaction: {...}}}`, `{body: {data: ...}}`, `[{...}]`):
 * - The reference: `external_reference` (or `externalReference`), else `reference`, else
 *   `ext_reference`. Two different values of the first of these found make the notification
 *   ambiguous: it names no reference (stored for the operator, never processed as either).
 * - The kind, when it says: `type`/`kind` (two fields naming different kinds say nothing) or the
 *   event's first word (`payment`, `deposit`, `transfer`, `withdrawal`...). Unsaid, the proxy looks
 *   the reference up.
 * - An explicit outcome only from words (`payment.approved`, `PAYMENT_PAID`, `status: "cancelled"`,
 *   `pagamento.aprovado`: status-codes.ts `WORDS`), in any case, with or without accents; words that
 *   disagree state none. A numeric status is kept as given, its meaning being configuration.
 * - The status of the record that holds the reference (or of the nearest object around it), never
 *   an envelope's further out.
 * - The event id, when the envelope has one (new format).
 *
 * A form-encoded body is read as its fields (a field holding JSON as that JSON).
 */
import { LIMITS } from '../../src/shared/limits.ts';
import { isObject, readNumber, type PartnerStatus } from './read-fields.ts';
import { plainWord, wordMeaning } from './status-codes.ts';

export interface PartnerNotification {
  reference: string;
  kind: 'payment' | 'transfer' | null;
  /** Only from words: a numeric status is not an outcome until its meaning is known. */
  outcome: 'approved' | 'canceled' | null;
  status: PartnerStatus | null;
  eventId: string | null;
}

type Json = unknown;

/** How far into a body the fields are looked for: nesting depth, and objects and arrays visited. */
export const WALK = { maxDepth: 6, maxNodes: 2_000 } as const;
/** The reference's names, by confidence: the first of these groups found decides. */
const REFERENCE_NAMES = [['external_reference', 'externalReference'], ['reference'], ['ext_reference']] as const;
const EVENT_NAMES = ['event', 'event_type', 'eventType', 'event_name', 'topic', 'action'];
const KIND_NAMES = ['type', 'kind', 'transaction_type', 'transactionType', 'resource', 'object'];
const EVENT_ID_NAMES = ['event_id', 'eventId', 'notification_id'];
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

/** `payment.approved`, `PAYMENT_PAID`, `deposit.cancelled`, `pix-in:confirmed` -> its words, lower case, without accents. */
const words = (text: string): string[] =>
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
  const w = plainWord(word).replace(/-/g, '_');
  if (PAYMENT_WORDS.has(w)) return 'payment';
  if (TRANSFER_WORDS.has(w)) return 'transfer';
  return null;
}

function outcomeOf(word: string | null): PartnerNotification['outcome'] {
  const meaning = word === null ? null : wordMeaning(word);
  return meaning === 'approved' || meaning === 'canceled' ? meaning : null;
}

/** An object found in a body, with the one it was found in (an array between them is skipped). */
interface Place {
  node: Record<string, Json>;
  parent: Place | null;
}

/** Every object of a body, breadth first (the shallowest first), within `WALK`'s bounds. */
function objectsOf(root: Json): Place[] {
  const places: Place[] = [];
  let level: { value: Json; parent: Place | null }[] = [{ value: root, parent: null }];
  let visited = 0;
  for (let depth = 0; depth <= WALK.maxDepth && level.length > 0; depth++) {
    const next: typeof level = [];
    for (const { value, parent } of level) {
      if (visited >= WALK.maxNodes) return places;
      // Children past the node count are never visited: not queued either.
      const room = () => visited + next.length < WALK.maxNodes;
      if (Array.isArray(value)) {
        visited++;
        for (const item of value) {
          if (!room()) break;
          if (typeof item === 'object' && item !== null) next.push({ value: item, parent });
        }
      } else if (isObject(value)) {
        visited++;
        const place = { node: value, parent };
        places.push(place);
        for (const key in value) {
          if (!room()) break;
          const child = value[key];
          if (typeof child === 'object' && child !== null) next.push({ value: child, parent: place });
        }
      }
    }
    level = next;
  }
  return places;
}

/** A field's text, trimmed; null when it is no text a reference or a word could be. */
function textOf(value: Json): string | null {
  if (typeof value !== 'string') return null;
  const text = value.trim();
  return text !== '' && text.length <= LIMITS.referenceMaxLength ? text : null;
}

/** Each place holding one of `names` as text, in order of the names, then of the walk. */
function found(places: Place[], names: readonly string[]): { text: string; place: Place }[] {
  const hits: { text: string; place: Place }[] = [];
  for (const name of names) {
    for (const place of places) {
      const text = Object.hasOwn(place.node, name) ? textOf(place.node[name]) : null;
      if (text !== null) hits.push({ text, place });
    }
  }
  return hits;
}

/** The one value all of `values` agree on; null when there is none, or they disagree. */
function agreed<T>(values: readonly (T | null)[]): T | null {
  const distinct = new Set(values.filter((v) => v !== null));
  return distinct.size === 1 ? [...distinct][0]! : null;
}

/** What reading a notification made of it: what it says, or why it could not say. */
export type NotificationReading = { notification: PartnerNotification } | { ambiguous: string[] } | { unreadable: true };

/** What a notification says; `ambiguous` when it names two different references; `unreadable` when none. */
export function examineNotification(body: Json): NotificationReading {
  if (typeof body !== 'object' || body === null) return { unreadable: true };
  const places = objectsOf(body);
  let references: { text: string; place: Place }[] = [];
  for (const names of REFERENCE_NAMES) {
    references = found(places, names);
    if (references.length > 0) break;
  }
  if (references.length === 0) return { unreadable: true };
  const distinct = [...new Set(references.map((r) => r.text))];
  if (distinct.length > 1) return { ambiguous: distinct };
  const { text: reference, place: record } = references[0]!;

  const events = found(places, EVENT_NAMES);
  const event = events[0] ?? null;
  const eventWords = event ? words(event.text) : [];
  // Two fields naming different kinds say none; no field, the event's words may.
  const kinds = found(places, KIND_NAMES).map((k) => kindOf(k.text));
  const kind = kinds.some((k) => k !== null)
    ? agreed(kinds)
    : (eventWords
        .slice(0, -1)
        // Two-word kinds first (`pix_out`, `pix_deposit`), then single words.
        .map((w, i) => kindOf(`${w}_${eventWords[i + 1]}`))
        .find((k) => k !== null) ??
      eventWords.map(kindOf).find((k) => k !== null) ??
      null);

  // The record's own status, else the nearest around it.
  let status: PartnerStatus | null = null;
  for (let place: Place | null = record; place !== null && status === null; place = place.parent) {
    const value = place.node.status;
    const code = readNumber(value);
    if (code !== null && Number.isInteger(code)) status = { code, word: null };
    else if (typeof value === 'string' && value.trim() !== '') status = { code: null, word: value.trim().toLowerCase() };
  }
  // An event name decides when there is one (all of them, when they disagree: none); else an outcome field, else a status word.
  const outcome =
    event !== null
      ? agreed(events.map((e) => eventOutcome(words(e.text))))
      : (agreed(found(places, ['outcome', 'result']).map((r) => outcomeOf(r.text))) ?? (status?.word ? outcomeOf(status.word) : null));

  // The event id of an envelope: its own field, or `id` beside an event name (the old format's `id` is the transaction's).
  const beside = event?.place.node.id;
  const eventId = found(places, EVENT_ID_NAMES)[0]?.text ?? (event !== null && event.place !== record ? textOf(beside) : null);
  return { notification: { reference, kind, outcome, status, eventId } };
}

/** What a notification says; null when it names no reference we could find, or two different ones. */
export function readNotification(body: Json): PartnerNotification | null {
  const reading = examineNotification(body);
  return 'notification' in reading ? reading.notification : null;
}
