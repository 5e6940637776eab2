/**
 * Payment records read most recently, in front of the database: status reads are the hot path (every
 * open page asks every few seconds) and a row lookup costs more than the rest of the request. Records
 * are replaced, never mutated. One instance's writes go through `remember`; a change another instance
 * made (Postgres) is `forget`-ten when heard, and a read that began before it is not remembered.
 */
import type { PaymentRecord } from './store.ts';

export class RecordCache {
  private readonly records = new Map<string, PaymentRecord>();
  /** Bumped by every forget: a read that saw another value began before a change and may be stale. */
  private generation = 0;
  constructor(private readonly size: number) {}
  get(reference: string): PaymentRecord | undefined {
    return this.records.get(reference);
  }
  remember(record: PaymentRecord): PaymentRecord {
    if (this.size === 0) return record;
    this.records.delete(record.reference);
    this.records.set(record.reference, record);
    // Maps iterate in insertion order: the first key is the least recently used.
    if (this.records.size > this.size) this.records.delete(this.records.keys().next().value!);
    return record;
  }
  /** Where reads stand now: hand it to `rememberRead` with what the read found. */
  mark(): number {
    return this.generation;
  }
  /** Remembers what a read found, unless something was forgotten since it began (it may predate that change). */
  rememberRead(mark: number, record: PaymentRecord): PaymentRecord {
    return mark === this.generation ? this.remember(record) : record;
  }
  /** Another instance changed it: read it again next time. */
  forget(reference: string): void {
    this.generation++;
    this.records.delete(reference);
  }
  /** Changes may have been missed: forget everything. */
  clear(): void {
    this.generation++;
    this.records.clear();
  }
}
