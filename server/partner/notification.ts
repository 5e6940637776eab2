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
import { isObject, readNumber, type PartnerStatus } from './read-fields.ts';
import { agreed, found, objectsOf, textOf, WALK, type Json, type Place } from './notification-walk.ts';
import { eventOutcome, kindOf, outcomeOf, RETURN_WORDS, words, type NotificationKind, type NotificationOutcome } from './notification-words.ts';
import { plainWord, wordMeaning } from './status-codes.ts';

export { WALK } from './notification-walk.ts';

export interface PartnerNotification {
  /** The reference as the notification names it: an `external_reference`, or (`referenceField`) another field we stored. */
  reference: string;
  /**
   * Which of our references it names: the partner's `external_reference` (its own handle on the
   * transaction), or the `transaction_id` we sent with the create, which partners also call `txid`
   * (domain/webhooks/references.ts finds the transaction it names).
   */
  referenceField: 'external_reference' | 'transaction_id';
  kind: NotificationKind;
  /** Only from words: a numeric status is not an outcome until its meaning is known. */
  outcome: NotificationOutcome;
  status: PartnerStatus | null;
  eventId: string | null;
  /**
   * A return it states (a Pix "devolução", the central bank's MED among them): from words
   * (`payment.returned`, `pix.devolvido`) or a list of returns (`devolucoes: [{valor, status}]`).
   * `cents`: the amount returned, when the body says it; null when it does not (the whole payment is
   * then taken as returned for what may still be refunded: domain/returns.ts).
   */
  returned: { cents: number | null } | null;
}

/** The reference's names, by confidence: the first of these groups found decides. */
const REFERENCE_NAMES = [['external_reference', 'externalReference'], ['reference'], ['ext_reference']] as const;
/**
 * Names of the `transaction_id` we sent with the create, read only when no reference name is
 * there: the partner's own spelling, and the central bank's `txid` (its Pix webhook lists
 * `{"pix": [{"txid", "valor", "devolucoes"...}]}`).
 */
const TRANSACTION_ID_NAMES = ['transaction_id', 'transactionId', 'txid'] as const;
/** Fields holding a returned amount, in reais, beside the reference. */
const RETURNED_VALUE_NAMES = ['returned_value', 'returnedValue', 'return_value', 'returned_amount', 'valor_devolvido'];
/** Lists of returns (the central bank's `devolucoes`), each `{valor, status}`. */
const RETURN_LIST_NAMES = ['devolucoes', 'returns'];
/** A listed return's statuses that say it has not happened (yet): in progress, or not made. */
const RETURN_NOT_DONE = new Set(['em_processamento', 'nao_realizado', 'pending', 'processing', 'failed', 'rejected']);
const EVENT_NAMES = ['event', 'event_type', 'eventType', 'event_name', 'topic', 'action'];
const KIND_NAMES = ['type', 'kind', 'transaction_type', 'transactionType', 'resource', 'object'];
const EVENT_ID_NAMES = ['event_id', 'eventId', 'notification_id'];

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
/**
 * What reading a notification made of it: what it says; a list of payments (`batch`), each item with
 * the body it is read from (the notification with the list cut to that item: its envelope kept); or
 * why it could not say.
 */
export type NotificationReading =
  { notification: PartnerNotification } | { batch: { notification: PartnerNotification; body: Json }[] } | { ambiguous: string[] } | { unreadable: true };

/**
 * What a notification says; `batch` when it lists several transactions (each item of one list names
 * one reference); `ambiguous` when it names two different references otherwise (or lists more than
 * `WALK.maxBatchItems`); `unreadable` when none.
 */
export function examineNotification(body: Json): NotificationReading {
  if (typeof body !== 'object' || body === null) return { unreadable: true };
  const places = objectsOf(body);
  let references: { text: string; place: Place }[] = [];
  let referenceField: PartnerNotification['referenceField'] = 'external_reference';
  for (const names of [...REFERENCE_NAMES, TRANSACTION_ID_NAMES]) {
    references = found(places, names);
    if (references.length > 0) {
      if (names === TRANSACTION_ID_NAMES) referenceField = 'transaction_id';
      break;
    }
  }
  if (references.length === 0) return { unreadable: true };
  const distinct = [...new Set(references.map((r) => r.text))];
  if (distinct.length > 1) return batchOf(body, references) ?? { ambiguous: distinct };
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
  return { notification: { reference, referenceField, kind, outcome, status, eventId, returned: returnOf(record, eventWords) } };
}

/**
 * The items of a list of transactions, when the references found are each inside one item of the
 * same list (`{"pix": [{"txid": "a"}, {"txid": "b"}]}`, `[{event, payload}, {event, payload}]`) and
 * no item names two: each read from the body with the list cut to it. Null otherwise.
 */
function batchOf(body: Json, references: { text: string; place: Place }[]): { batch: { notification: PartnerNotification; body: Json }[] } | null {
  const paths = references.map((r) => r.place.path);
  // The longest path all references share: it must be a list, each reference inside one of its items.
  let common = 0;
  while (paths.every((p) => p.length > common && p[common] === paths[0]![common])) common++;
  if (!paths.every((p) => typeof p[common] === 'number')) return null;
  const byItem = new Map<number, Set<string>>();
  for (const [i, r] of references.entries()) {
    const item = paths[i]![common] as number;
    byItem.set(item, (byItem.get(item) ?? new Set()).add(r.text));
  }
  if ([...byItem.values()].some((texts) => texts.size > 1) || byItem.size > WALK.maxBatchItems) return null;
  const listPath = paths[0]!.slice(0, common);
  const items: { notification: PartnerNotification; body: Json }[] = [];
  for (const index of [...byItem.keys()].sort((a, b) => a - b)) {
    const itemBody = withListCut(body, listPath, index);
    const reading = examineNotification(itemBody);
    if (!('notification' in reading)) return null;
    items.push({ notification: reading.notification, body: itemBody });
  }
  return { batch: items };
}

/** A copy of `body` where the list at `path` holds only its item `index`. */
function withListCut(body: Json, path: readonly (string | number)[], index: number): Json {
  const list: readonly Json[] | null = Array.isArray(body) ? body : null;
  if (path.length === 0) return list ? [list[index]] : body;
  const [head, ...rest] = path;
  if (list) return list.map((v, i) => (i === head ? withListCut(v, rest, index) : v));
  if (isObject(body)) return { ...body, [head!]: withListCut(body[head as string], rest, index) };
  return body;
}

/** Reais to cents, when it is an amount at all. */
function centsOf(value: Json): number | null {
  const n = readNumber(value);
  return n !== null && n > 0 ? Math.round(Number((n * 100).toPrecision(15))) : null;
}

/**
 * The return a record states: a list of returns (those done, summed), a returned amount field, or
 * words of a return in the event's name or the record's status (amount: its returned-value field,
 * else not said).
 */
function returnOf(record: Place, eventWords: string[]): PartnerNotification['returned'] {
  for (const name of RETURN_LIST_NAMES) {
    const list = record.node[name];
    if (!Array.isArray(list) || list.length === 0) continue;
    let cents = 0;
    let done = 0;
    for (const item of list) {
      if (!isObject(item)) continue;
      const status = typeof item.status === 'string' ? plainWord(item.status.trim()).replace(/[\s-]+/g, '_') : '';
      if (RETURN_NOT_DONE.has(status)) continue;
      const amount = centsOf(item.valor ?? item.value ?? item.amount);
      done++;
      if (amount === null) return { cents: null };
      cents += amount;
    }
    if (done > 0) return { cents };
  }
  const amount = RETURNED_VALUE_NAMES.map((n) => centsOf(record.node[n])).find((c) => c !== null) ?? null;
  if (amount !== null) return { cents: amount };
  const statusWords = typeof record.node.status === 'string' ? words(record.node.status) : [];
  const said = [...eventWords, ...statusWords].some((w) => RETURN_WORDS.has(w) || wordMeaning(w) === 'returned');
  return said ? { cents: null } : null;
}

/** What a notification says; null when it names no reference we could find, or two different ones. */
export function readNotification(body: Json): PartnerNotification | null {
  const reading = examineNotification(body);
  return 'notification' in reading ? reading.notification : null;
}
