/**
 * The browser's view of a payment record, and its JSON bytes. One function (viewOf) writes the view's
 * keys, their order and their values: `view()` is it, and the fast read path's JSON is its
 * JSON.stringify, made once per stored record (records are replaced, never mutated, when their status
 * changes) with the two fields that change between reads of one record (the status and server_time)
 * left as holes filled in per read, so the two can never disagree on a key or its order. The view is
 * an object literal (one hidden class for every view, as the view was before it had a JSON path).
 */
import type { PaymentView } from '../../../src/shared/contract.ts';
import type { PaymentStatus } from '../../../src/shared/status.ts';
import { PARTNER_STATUS } from '../../partner/wire.ts';
import type { PaymentRecord } from '../../store/store.ts';
import { DomainError } from '../errors.ts';

/**
 * The view of `p` with its per-read fields given: the one place the view's keys are written, in the
 * order the browser receives them. Every key of PaymentView but a checkout's own `renewable` (added by
 * the checkout service) is required here.
 */
function viewOf(p: PaymentRecord, status: string, serverTime: string): Omit<PaymentView, 'renewable'> {
  return {
    reference: p.reference,
    status: status as PaymentStatus,
    value: p.valueCents / 100,
    brcode: p.brcode,
    qr_code_url: p.qrCodeUrl,
    checkout_url: p.checkoutUrl,
    created_at: isoTime(p.createdAt),
    expires_at: isoTime(p.expiresAt),
    favoured: p.favoured ?? null,
    paid_at: paidAt(p),
    server_time: serverTime,
  };
}

/**
 * The per-read fields' holes in the serialized view, each found with its key: a string value's quotes
 * are escaped in JSON, so `"status":` with its own quotes can only be the key.
 */
const STATUS_HOLE = '\u0001status';
const TIME_HOLE = '\u0001server_time';
const STATUS_KEYED = `"status":${JSON.stringify(STATUS_HOLE)}`;
const TIME_KEYED = `"server_time":${JSON.stringify(TIME_HOLE)}`;

/** A record's view JSON around its two per-read fields: `head`, the first, `middle`, the second, `end`. */
interface SerializedRecord {
  head: string;
  middle: string;
  end: string;
  /** Whether the status comes first. */
  statusFirst: boolean;
}

/** The JSON of a record's view, split at its per-read fields (their values' quotes stay in the pieces). */
function serialize(p: PaymentRecord): SerializedRecord {
  const text = JSON.stringify(viewOf(p, STATUS_HOLE, TIME_HOLE));
  const statusAt = text.indexOf(STATUS_KEYED);
  const timeAt = text.indexOf(TIME_KEYED);
  const [first, firstKeyed, second, secondKeyed] =
    statusAt < timeAt ? [statusAt, STATUS_KEYED, timeAt, TIME_KEYED] : [timeAt, TIME_KEYED, statusAt, STATUS_KEYED];
  // Each hole keeps its key and its opening and closing quotes: `"status":"` + value + `"`.
  const open = (keyed: string) => keyed.slice(0, keyed.indexOf(':') + 2);
  return {
    head: text.slice(0, first) + open(firstKeyed),
    middle: '"' + text.slice(first + firstKeyed.length, second) + open(secondKeyed),
    end: '"' + text.slice(second + secondKeyed.length),
    statusFirst: statusAt < timeAt,
  };
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
    return viewOf(p, statusFor(p.partnerStatus, p.expiresAt, now), new Date(now).toISOString());
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
    return parts.statusFirst ? parts.head + status + parts.middle + this.iso + parts.end : parts.head + this.iso + parts.middle + status + parts.end;
  }
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
