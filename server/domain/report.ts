/**
 * The accounting export: every checkout, payment, refund and payout created in a range of days of the
 * merchant's time zone, one row each, then the totals per kind and status. Streamed: the store is
 * read a page at a time (store/reports, by creation time through an index), each page written out
 * before the next is read, so memory holds one page and the totals, whatever the range holds.
 * Amounts are exact (cents, written as reais with two decimals); times carry the zone's offset.
 *
 * Returns (a payment the payer's bank gave back after it was paid) are not in the store yet: they
 * will be rows of their own kind when the store records them.
 */
import { REPORT_KINDS, ReportRow, type ReportFormat, type ReportTotal } from '../../src/shared/merchant.ts';
import { PARTNER_STATUS } from '../partner/wire.ts';
import type { CheckoutRecord, PaymentRecord, PayoutRecord, ReportCursor, ReportStore } from '../store/store.ts';
import type { CurrentPayment } from '../store/reports/types.ts';

/** Rows read from the store at a time. */
export const REPORT_PAGE_ROWS = 1000;

type Kind = (typeof REPORT_KINDS)[number];

/** The CSV's columns: ReportRow's keys, in order, then `count` (totals only). */
const COLUMNS = [...Object.keys(ReportRow.shape), 'count'] as readonly string[];

/** Reais with two decimals from cents, exactly: 123456 -> "1234.56", -5 -> "-0.05". */
export function reaisText(cents: number): string {
  const sign = cents < 0 ? '-' : '';
  const abs = Math.abs(Math.round(cents));
  return `${sign}${Math.floor(abs / 100)}.${String(abs % 100).padStart(2, '0')}`;
}

/** Times in one zone: `2030-01-01T09:00:00.000-03:00`. One formatter, made once per export. */
export class ZonedTime {
  private readonly parts: Intl.DateTimeFormat;

  constructor(readonly zone: string) {
    this.parts = new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
    });
  }

  /** Offsets by quarter hour (zones change offset on a quarter hour at the finest): a month holds about 3,000. */
  private readonly offsets = new Map<number, number>();

  /** The zone's offset at `ms`, in ms (local = UTC + offset). */
  offsetAt(ms: number): number {
    const quarter = Math.floor(ms / 900_000);
    let offset = this.offsets.get(quarter);
    if (offset === undefined) {
      if (this.offsets.size >= 100_000) this.offsets.clear();
      offset = this.computeOffset(quarter * 900_000);
      this.offsets.set(quarter, offset);
    }
    return offset;
  }

  private computeOffset(ms: number): number {
    const p = this.fields(ms);
    const local = Date.UTC(p.year, p.month - 1, p.day, p.hour, p.minute, p.second);
    return local - (ms - (((ms % 1000) + 1000) % 1000));
  }

  /** The instant a local day (YYYY-MM-DD) starts in this zone. */
  startOfDay(date: string): number {
    const guess = Date.parse(`${date}T00:00:00Z`);
    const first = guess - this.offsetAt(guess);
    // Across an offset change the offset at the day's start may differ from the guess's: once more.
    return guess - this.offsetAt(first);
  }

  format(ms: number): string {
    const offset = this.offsetAt(ms);
    const local = new Date(ms + offset).toISOString().slice(0, 23);
    const minutes = Math.round(Math.abs(offset) / 60_000);
    const sign = offset < 0 ? '-' : '+';
    return `${local}${sign}${String(Math.floor(minutes / 60)).padStart(2, '0')}:${String(minutes % 60).padStart(2, '0')}`;
  }

  private fields(ms: number) {
    const out = { year: 0, month: 0, day: 0, hour: 0, minute: 0, second: 0 };
    for (const part of this.parts.formatToParts(ms)) {
      if (part.type in out) out[part.type as keyof typeof out] = Number(part.value);
    }
    return out;
  }
}

/** A payment's status as the report says it: from the stored partner status, never guessed. */
function paymentStatus(p: CurrentPayment, now: number): string {
  if (p.partnerStatus === PARTNER_STATUS.approved) return p.final ? 'paid' : 'unconfirmed';
  if (p.partnerStatus === PARTNER_STATUS.canceled) return 'canceled';
  if (p.partnerStatus === PARTNER_STATUS.pending) return now >= p.expiresAt ? 'expired' : 'pending';
  return 'unknown';
}

const settled = (final: boolean, at: number, time: ZonedTime) => (final ? time.format(at) : null);

function checkoutRow(c: CheckoutRecord & { payment: CurrentPayment | null }, now: number, time: ZonedTime): ReportRow {
  return {
    kind: 'checkout',
    id: c.id,
    reference: c.paymentReference,
    checkout_id: c.id,
    order_id: c.orderId,
    status: c.payment ? paymentStatus(c.payment, now) : 'open',
    amount: reaisText(c.valueCents),
    created_at: time.format(c.createdAt),
    settled_at: c.payment ? settled(c.payment.final, c.payment.updatedAt, time) : null,
  };
}

function paymentRow(p: PaymentRecord & { orderId: string | null }, now: number, time: ZonedTime): ReportRow {
  return {
    kind: 'payment',
    id: p.reference,
    reference: p.reference,
    checkout_id: p.checkoutId,
    order_id: p.orderId,
    status: paymentStatus(p, now),
    amount: reaisText(p.valueCents),
    created_at: time.format(p.createdAt),
    settled_at: settled(p.final, p.updatedAt, time),
  };
}

const FINAL_PAYOUT_STATES: readonly string[] = ['approved', 'canceled', 'refused'];

function payoutRow(t: PayoutRecord & { orderId: string | null }, time: ZonedTime): ReportRow {
  return {
    kind: t.checkoutId === null ? 'payout' : 'refund',
    id: t.id,
    reference: t.reference ?? t.merchantReference,
    checkout_id: t.checkoutId,
    order_id: t.orderId,
    status: t.state,
    amount: reaisText(t.valueCents),
    created_at: time.format(t.createdAt),
    settled_at: settled(FINAL_PAYOUT_STATES.includes(t.state), t.updatedAt, time),
  };
}

export interface ReportInput {
  reports: ReportStore;
  /** Local days, both included (ReportQuery). */
  from: string;
  to: string;
  zone: string;
  format: ReportFormat;
  /** The proxy's clock: a pending payment past its expiry is `expired`. */
  now: number;
  /** Rows a page (default REPORT_PAGE_ROWS). */
  pageRows?: number;
}

/** The rows of one table, a page at a time, oldest first. */
async function* pages<R extends { createdAt: number }>(
  read: (cursor: ReportCursor | null, limit: number) => Promise<R[]>,
  keyOf: (r: R) => string,
  limit: number,
): AsyncGenerator<R[]> {
  let cursor: ReportCursor | null = null;
  for (;;) {
    const page = await read(cursor, limit);
    if (page.length > 0) yield page;
    if (page.length < limit) return;
    const last = page.at(-1)!;
    cursor = { createdAt: last.createdAt, key: keyOf(last) };
  }
}

/** Every row of the range, kind by kind, a page at a time. */
async function* reportRows(input: ReportInput, time: ZonedTime): AsyncGenerator<ReportRow[]> {
  const from = time.startOfDay(input.from);
  const dayAfter = new Date(Date.parse(`${input.to}T00:00:00Z`) + 86_400_000).toISOString().slice(0, 10);
  const to = time.startOfDay(dayAfter);
  const limit = input.pageRows ?? REPORT_PAGE_ROWS;
  const { reports, now } = input;
  for await (const page of pages(
    (c, n) => reports.checkouts(from, to, c, n),
    (r) => r.id,
    limit,
  ))
    yield page.map((r) => checkoutRow(r, now, time));
  for await (const page of pages(
    (c, n) => reports.payments(from, to, c, n),
    (r) => r.reference,
    limit,
  ))
    yield page.map((r) => paymentRow(r, now, time));
  for await (const page of pages(
    (c, n) => reports.payouts(from, to, c, n),
    (r) => String(r.seq),
    limit,
  ))
    yield page.map((r) => payoutRow(r, time));
}

/** Counts and sums per kind and status, in cents. */
class Totals {
  private readonly byKey = new Map<string, { kind: Kind; status: string; count: number; cents: number }>();

  add(row: ReportRow): void {
    const key = `${row.kind}\u0000${row.status}`;
    const cents = Math.round(Number(row.amount) * 100);
    const total = this.byKey.get(key);
    if (total) {
      total.count++;
      total.cents += cents;
    } else this.byKey.set(key, { kind: row.kind, status: row.status, count: 1, cents });
  }

  list(): ReportTotal[] {
    const order = (kind: Kind) => REPORT_KINDS.indexOf(kind);
    return [...this.byKey.values()]
      .sort((a, b) => order(a.kind) - order(b.kind) || a.status.localeCompare(b.status))
      .map((t) => ({ kind: t.kind, status: t.status, count: t.count, amount: reaisText(t.cents) }));
  }
}

/** A CSV field: quoted when it holds a comma, a quote or a line break; a leading =+-@ is defused (spreadsheet formulas). */
function csvField(value: string | number | null): string {
  if (value === null) return '';
  let text = String(value);
  if (/^[=+\-@\t\r]/.test(text) && !/^-?\d/.test(text)) text = `'${text}`;
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

/**
 * The export as text chunks: CSV (a header, a line per row, then `total` lines: kind `total`, the
 * totalled kind in `id`, its status, its sum in `amount` and its count in `count`) or JSON
 * (`{"from", "to", "time_zone", "rows": [...], "totals": [...]}`). One chunk per page.
 */
export async function* reportChunks(input: ReportInput): AsyncGenerator<string> {
  const time = new ZonedTime(input.zone);
  const totals = new Totals();
  const csv = input.format === 'csv';
  yield csv
    ? `${COLUMNS.join(',')}\r\n`
    : `{"from":${JSON.stringify(input.from)},"to":${JSON.stringify(input.to)},"time_zone":${JSON.stringify(input.zone)},"rows":[`;
  let first = true;
  for await (const rows of reportRows(input, time)) {
    let chunk = '';
    for (const row of rows) {
      totals.add(row);
      if (csv) chunk += `${COLUMNS.map((c) => csvField(c === 'count' ? null : row[c as keyof ReportRow])).join(',')}\r\n`;
      else {
        chunk += `${first ? '' : ','}\n${JSON.stringify(row)}`;
        first = false;
      }
    }
    yield chunk;
  }
  const list = totals.list();
  if (csv) {
    yield list
      .map((t) => [csvField('total'), csvField(t.kind), '', '', '', csvField(t.status), csvField(t.amount), '', '', csvField(t.count)].join(',') + '\r\n')
      .join('');
  } else yield `\n],"totals":${JSON.stringify(list)}}\n`;
}
