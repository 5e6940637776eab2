/**
 * The browser's view of a payment record, and its JSON bytes. One ordered field list (VIEW_FIELDS)
 * defines the view's keys, their order and their values: `view()` builds the object from it, and the
 * fast read path's JSON is derived from it once per stored record (records are replaced, never
 * mutated, when their status changes), so the two can never disagree on a key or its order. Only
 * the two fields that change between reads of one record (the status and server_time) are filled in
 * per read.
 */
import type { PaymentView } from '../../../src/shared/contract.ts';
import type { PaymentStatus } from '../../../src/shared/status.ts';
import { PARTNER_STATUS } from '../../partner/wire.ts';
import type { PaymentRecord } from '../../store/store.ts';
import { DomainError } from '../errors.ts';

/** A view field whose value follows from the stored record alone. */
interface RecordField {
  key: keyof PaymentView;
  of: (p: PaymentRecord) => unknown;
}
/** A view field that changes between reads of one record: filled in per read, always a string. */
interface ReadField {
  key: 'status' | 'server_time';
  perRead: true;
}

/** The view's fields, in the order the browser receives them. */
const VIEW_FIELDS = [
  { key: 'reference', of: (p) => p.reference },
  { key: 'status', perRead: true },
  { key: 'value', of: (p) => p.valueCents / 100 },
  { key: 'brcode', of: (p) => p.brcode },
  { key: 'qr_code_url', of: (p) => p.qrCodeUrl },
  { key: 'checkout_url', of: (p) => p.checkoutUrl },
  { key: 'created_at', of: (p) => isoTime(p.createdAt) },
  { key: 'expires_at', of: (p) => isoTime(p.expiresAt) },
  { key: 'favoured', of: (p) => p.favoured ?? null },
  { key: 'paid_at', of: (p) => paidAt(p) },
  { key: 'server_time', perRead: true },
] as const satisfies readonly (RecordField | ReadField)[];

// Every key of the view but a checkout's own `renewable` (added by the checkout service) is listed.
type Listed = (typeof VIEW_FIELDS)[number]['key'];
const everyKeyListed: Exclude<keyof PaymentView, Listed | 'renewable'> extends never ? true : never = true;
void everyKeyListed;

/** Whether the status comes before server_time in VIEW_FIELDS (the per-read JSON fills them in this order). */
const STATUS_FIRST = VIEW_FIELDS.findIndex((f) => f.key === 'status') < VIEW_FIELDS.findIndex((f) => f.key === 'server_time');

/** A record's view JSON around its two per-read fields: `head`, the first, `middle`, the second, `end`. */
interface SerializedRecord {
  head: string;
  middle: string;
  end: string;
}

/** The JSON of a record's view, split at its per-read fields (VIEW_FIELDS, in order): three pieces. */
function serialize(p: PaymentRecord): SerializedRecord {
  const pieces: string[] = [];
  let current = '{';
  for (const field of VIEW_FIELDS) {
    if (current !== '{') current += ',';
    if ('perRead' in field) {
      // A string with nothing to escape (a status word, an ISO time): its quotes go around the hole.
      pieces.push(`${current}"${field.key}":"`);
      current = '"';
    } else current += `"${field.key}":${JSON.stringify(field.of(p))}`;
  }
  pieces.push(`${current}}`);
  return { head: pieces[0]!, middle: pieces[1]!, end: pieces[2]! };
}

/** The views of payment records at the proxy's current time, as objects and as JSON. */
export class PaymentViews {
  /** Each stored record's view, serialized but for its per-read fields (json). */
  private readonly serialized = new WeakMap<PaymentRecord, SerializedRecord>();
  /** The last server_time formatted, and for which ms: many reads share one millisecond. */
  private isoAt = Number.NaN;
  private iso = '';

  constructor(private readonly now: () => number) {}

  /** The browser's view of a record, at the proxy's current time. */
  view(p: PaymentRecord): PaymentView {
    const now = this.now();
    const view: Record<string, unknown> = {};
    for (const field of VIEW_FIELDS) {
      if ('perRead' in field) view[field.key] = field.key === 'status' ? statusFor(p.partnerStatus, p.expiresAt, now) : new Date(now).toISOString();
      else view[field.key] = field.of(p);
    }
    return view as PaymentView;
  }

  /** `JSON.stringify(this.view(p))`, from the record's cached serialization: the hot path of every polling page. */
  json(p: PaymentRecord): string {
    const now = this.now();
    let parts = this.serialized.get(p);
    if (!parts) {
      parts = serialize(p);
      this.serialized.set(p, parts);
    }
    if (now !== this.isoAt) {
      this.isoAt = now;
      this.iso = new Date(now).toISOString();
    }
    const status = statusFor(p.partnerStatus, p.expiresAt, now);
    return STATUS_FIRST ? parts.head + status + parts.middle + this.iso + parts.end : parts.head + this.iso + parts.middle + status + parts.end;
  }
}

// Checked once at load: the per-read JSON has exactly the two holes json() fills.
if (VIEW_FIELDS.filter((f) => 'perRead' in f).length !== 2) {
  throw new Error('VIEW_FIELDS must have exactly two per-read fields (status, server_time)');
}

/** When a paid record was recorded paid (its last update: a final record never changes again); null otherwise. */
function paidAt(p: PaymentRecord): string | null {
  return p.final && p.partnerStatus === PARTNER_STATUS.approved ? isoTime(p.updatedAt) : null;
}

/** ISO 8601 of an epoch ms; an unreadable one (a partner's bad created_at) is the epoch, never a crash. */
function isoTime(ms: number): string {
  const date = new Date(ms);
  return Number.isNaN(date.getTime()) ? new Date(0).toISOString() : date.toISOString();
}

function statusFor(partnerStatus: number, expiresAtMs: number, nowMs: number): PaymentStatus {
  if (partnerStatus === PARTNER_STATUS.approved) return 'paid';
  if (partnerStatus === PARTNER_STATUS.canceled) return 'canceled';
  if (partnerStatus === PARTNER_STATUS.pending) return nowMs >= expiresAtMs ? 'expired' : 'pending';
  // A code we do not know is never shown as success, nor as final: report it and keep asking.
  throw new DomainError('unknown_status', `The partner reported status ${partnerStatus}, which this proxy does not know.`);
}
