/** The outbox row of an outcome event, as both stores insert it: one row per event id, due at once. */
import type { OutcomeEvent } from '../../../src/shared/contract.ts';

export interface NewOutboxRow {
  eventId: string;
  type: string;
  reference: string;
  /** The JSON sent, fixed now. */
  body: string;
  createdAt: number;
  nextAttemptAt: number;
}

export function newOutboxRow(event: OutcomeEvent, reference: string, at: number): NewOutboxRow {
  return { eventId: event.id, type: event.type, reference, body: JSON.stringify(event), createdAt: at, nextAttemptAt: at };
}
