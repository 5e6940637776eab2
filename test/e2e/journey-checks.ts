/** What every engine must show of a journey (journey.ts): the same assertions for demo.test.ts and engines.test.ts. */
import assert from 'node:assert/strict';
import { ptBRLater } from '../../src/locales/pt-BR-later.ts';
import { spoken } from '../../src/locales/translation.ts';
import type { expiredJourney } from './journey.ts';

/** A code that expired: the expired screen in the customer's words, a new code, and that one paid and confirmed. */
export function checkExpiredJourney({ payment, expired, renewed, confirmation }: Awaited<ReturnType<typeof expiredJourney>>): void {
  assert.equal(expired.screen, 'expired');
  assert.equal(expired.status, ptBRLater(spoken).expired);
  assert.equal(expired.renewButton, ptBRLater(spoken).renew);
  assert.equal(renewed.screen, 'pending');
  assert.match(renewed.code!, /^000201/);
  assert.notEqual(renewed.code, payment.code, 'a new code after the renewal');
  assert.ok(renewed.qrSvg, 'the new code is drawn');
  assert.equal(confirmation.orderId, payment.orderId);
}
