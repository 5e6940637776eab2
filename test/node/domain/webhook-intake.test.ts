/**
 * The webhook intake's policy (server/domain/webhooks/intake.ts), without HTTP: who may send, what is
 * stored before the answer (whole, or only its start during a flood of unreadable ones), the cap on
 * notifications waiting, and what is told after the write (the processor; the webhooks' health, for a
 * payment we issued only).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { WebhookIntake, isAuthenticatedIntake, keepFirstBytes, normalizeIp, type WebhookIntakeOptions } from '../../../server/domain/webhooks/intake.ts';
import type { WebhookHealth } from '../../../server/domain/webhooks/health.ts';
import type { WebhookProcessor } from '../../../server/domain/webhooks/processor.ts';
import { createLogger } from '../../../server/log.ts';
import { openSqliteStore } from '../../../server/store/sqlite/sqlite-store.ts';
import { paymentRecord } from '../../support/records.ts';

const silent = createLogger({ level: 'silent' });

function intakeOver(over: Partial<WebhookIntakeOptions> = {}) {
  const store = openSqliteStore({ dataDir: ':memory:' });
  const notified: string[] = [];
  const processed: { id: number; authenticated: boolean | undefined; reference: string | undefined }[] = [];
  const health = { notified: (reference: string) => notified.push(reference) } as unknown as WebhookHealth;
  const processor = {
    process: async (id: number, _raw: string, received?: { event: { reference: string } | null; authenticated: boolean }) => {
      processed.push({ id, authenticated: received?.authenticated, reference: received?.event?.reference });
    },
  } as unknown as WebhookProcessor;
  const intake = new WebhookIntake({
    store,
    now: () => 1_000_000,
    limits: { unreadableWholePerHour: 2, auditBytes: 8, keptBytes: 64, pendingCap: 3 },
    health,
    processor,
    ...over,
  });
  return { store, intake, notified, processed };
}

const settle = () => new Promise((resolve) => setTimeout(resolve, 20));

describe('the webhook intake', () => {
  it('authenticates by secret path or source list, the secret compared whole', () => {
    assert.equal(isAuthenticatedIntake({}), false);
    assert.equal(isAuthenticatedIntake({ secretPath: 's3cret' }), true);
    assert.equal(isAuthenticatedIntake({ sourceIps: ['10.0.0.1'] }), true);
    const { intake } = intakeOver({ secretPath: 's3cret', sourceIps: ['10.0.0.1'] });
    assert.equal(intake.authenticated, true);
    assert.equal(intake.secretRequired, true);
    assert.equal(intake.secretMatches('s3cret'), true);
    assert.equal(intake.secretMatches('s3cre'), false);
    assert.equal(intake.secretMatches(undefined), false);
    assert.equal(intake.sourcesListed, true);
    assert.equal(intake.sourceAllowed('::ffff:10.0.0.1'), true, 'an IPv4-mapped address is the IPv4 one');
    assert.equal(intake.sourceAllowed('10.0.0.2'), false);
    assert.equal(normalizeIp(' ::FFFF:1.2.3.4 '), '1.2.3.4');
    const open = intakeOver().intake;
    assert.equal(open.authenticated, false);
    assert.equal(open.sourceAllowed('203.0.113.9'), true, 'any source without a list');
    assert.equal(open.secretMatches(''), false, 'no secret set: nothing matches');
  });

  it('stores a readable notification before answering, then has it processed; the health hears only of our payments', async () => {
    const { store, intake, notified, processed } = intakeOver({
      secretPath: 's3cret',
      limits: { unreadableWholePerHour: 2, auditBytes: 64, keptBytes: 128, pendingCap: 3 },
    });
    await store.payments.insert(paymentRecord('ours', 1_000_000));
    assert.deepEqual(await intake.receive('{"external_reference":"ours","status":"approved"}', 'application/json', silent), { kind: 'stored' });
    assert.deepEqual(await intake.receive('{"external_reference":"theirs"}', 'application/json', silent), { kind: 'stored' });
    await settle();
    assert.equal(await store.webhookEvents.countUnprocessed(), 2, 'both stored to be confirmed');
    assert.deepEqual(
      processed.map((p) => [p.reference, p.authenticated]),
      [
        ['ours', true],
        ['theirs', true],
      ],
    );
    assert.deepEqual(notified, ['ours']);
    await store.close();
  });

  it('refuses an empty body, and asks for a retry past the cap of notifications waiting', async () => {
    const { store, intake } = intakeOver();
    assert.deepEqual(await intake.receive('  \n', 'application/json', silent), { kind: 'empty' });
    for (let i = 0; i < 3; i++) assert.equal((await intake.receive(`{"external_reference":"r${i}"}`, 'application/json', silent)).kind, 'stored');
    assert.deepEqual(await intake.receive('{"external_reference":"r3"}', 'application/json', silent), { kind: 'full' });
    assert.equal(await store.webhookEvents.countUnprocessed(), 3);
    await store.close();
  });

  it('keeps an unreadable notification whole, then only its start during a flood', async () => {
    const { store, intake, processed } = intakeOver();
    const body = '{"nothing":"that names a payment"}';
    for (let i = 0; i < 3; i++) assert.deepEqual(await intake.receive(body, 'application/json', silent), { kind: 'stored' });
    const kept = await store.webhookEvents.listByResult(['unreadable'], 10);
    assert.deepEqual(kept.map((e) => e.rawBody).sort(), [body, body, body.slice(0, 8)].sort());
    assert.equal(await store.webhookEvents.countUnprocessed(), 0, 'already processed');
    assert.equal(processed.length, 0);
    await store.close();
  });

  it('keeps at most keptBytes of a body about one of ours, auditBytes of one about a reference never issued; a cut one has no words', async () => {
    const { store, intake, processed } = intakeOver({
      secretPath: 's3cret',
      limits: { unreadableWholePerHour: 2, auditBytes: 40, keptBytes: 100, pendingCap: 10 },
    });
    await store.payments.insert(paymentRecord('ours', 1_000_000));
    const small = '{"external_reference":"ours","status":"approved"}';
    const large = JSON.stringify({ external_reference: 'ours', status: 'approved', note: 'x'.repeat(200) });
    const unknown = JSON.stringify({ external_reference: 'theirs', status: 'approved', note: 'y'.repeat(50) });
    for (const body of [small, large, unknown]) assert.deepEqual(await intake.receive(body, 'application/json', silent), { kind: 'stored' });
    await settle();
    const stored = await store.webhookEvents.unprocessed(10);
    assert.deepEqual(
      stored.map((e) => [e.rawBody, e.originalBytes]),
      [
        [small, undefined],
        [large.slice(0, 100), Buffer.byteLength(large)],
        [unknown.slice(0, 40), Buffer.byteLength(unknown)],
      ],
    );
    // Processed from the body as received (the reference), but the words of a cut one never count.
    assert.deepEqual(
      processed.map((p) => [p.reference, p.authenticated]),
      [
        ['ours', true],
        ['ours', false],
        ['theirs', false],
      ],
    );
    await store.close();
  });

  it('cuts between characters, never inside one', () => {
    assert.deepEqual(keepFirstBytes('abc', 3), { body: 'abc' });
    // 'ção' is c (1 byte), ç (2), ã (2), o (1): 4 bytes end inside ã.
    assert.deepEqual(keepFirstBytes('cçãoa', 4), { body: 'cç', originalBytes: 7 });
    assert.deepEqual(keepFirstBytes('€€', 4), { body: '€', originalBytes: 6 });
    assert.deepEqual(keepFirstBytes('€', 2), { body: '', originalBytes: 3 });
  });

  it('answers not_stored when the store cannot take it', async () => {
    const store = openSqliteStore({ dataDir: ':memory:' });
    const down = async () => {
      throw new Error('the disk is full');
    };
    const failing = { ...store, webhookEvents: { ...store.webhookEvents, add: down, addRejected: down } } as typeof store;
    const { intake } = intakeOver({ store: failing });
    assert.deepEqual(await intake.receive('{"external_reference":"r"}', 'application/json', silent), { kind: 'not_stored' });
    assert.deepEqual(await intake.receive('unreadable', 'text/plain', silent), { kind: 'not_stored' });
    await store.close();
  });
});

describe('the webhook intake across a crash', () => {
  it('stores whether a notification is authenticated with it, before the answer: a crash right after the 202 does not lose it', async () => {
    // The processor never runs (the process died right after the answer): what the next start reads is the store's.
    const { store, intake } = intakeOver({
      secretPath: 's3cret',
      limits: { unreadableWholePerHour: 2, auditBytes: 40, keptBytes: 100, pendingCap: 10 },
      processor: { process: async () => {} } as unknown as WebhookProcessor,
    });
    await store.payments.insert(paymentRecord('ours', 1_000_000));
    const whole = '{"external_reference":"ours","status":"approved"}';
    const cut = JSON.stringify({ external_reference: 'ours', status: 'approved', note: 'x'.repeat(200) });
    for (const body of [whole, cut]) assert.deepEqual(await intake.receive(body, 'application/json', silent), { kind: 'stored' });
    const taken = await store.webhookEvents.claimUnprocessed(10, 2_000_000);
    assert.deepEqual(
      taken.map((e) => [e.rawBody === whole, e.authenticated === true]),
      [
        [true, true],
        [false, false],
      ],
      'the whole one is authenticated; a cut one never is',
    );
    await store.close();
    // An open intake stores none as authenticated.
    const open = intakeOver({ processor: { process: async () => {} } as unknown as WebhookProcessor });
    await open.intake.receive(whole, 'application/json', silent);
    assert.deepEqual(
      (await open.store.webhookEvents.claimUnprocessed(10, 2_000_000)).map((e) => e.authenticated === true),
      [false],
    );
    await open.store.close();
  });
});

describe('the webhook intake and a list of transactions', () => {
  it('stores each item about one of ours on its own; through an open intake, the items about nothing of ours once, as the list start', async () => {
    const { store, intake, processed } = intakeOver({ limits: { unreadableWholePerHour: 2, auditBytes: 64, keptBytes: 4096, pendingCap: 100 } });
    await store.payments.insert(paymentRecord('ours', 1_000_000));
    const list = {
      pix: [{ external_reference: 'ours', status: 2 }, ...Array.from({ length: 50 }, (_, i) => ({ external_reference: `made-up-${i}`, status: 2 }))],
    };
    assert.deepEqual(await intake.receive(JSON.stringify(list), 'application/json', silent), { kind: 'stored' });
    await settle();
    assert.deepEqual(
      processed.map((p) => p.reference),
      ['ours'],
    );
    const waiting = await store.webhookEvents.unprocessed(100);
    assert.deepEqual(
      waiting.map((e) => JSON.parse(e.rawBody)),
      [{ pix: [{ external_reference: 'ours', status: 2 }] }],
      'the list cut to its item',
    );
    const audit = await store.webhookEvents.listByResult(['unknown_reference'], 10);
    assert.equal(audit.length, 1, 'one row for the 50 strangers');
    assert.ok(Buffer.byteLength(audit[0]!.rawBody) <= 64);
    await store.close();
  });

  it('through an authenticated intake, every item is stored to be confirmed (a transfer the partner knows may be ours)', async () => {
    const { store, intake, processed } = intakeOver({
      secretPath: 's3cret',
      limits: { unreadableWholePerHour: 2, auditBytes: 256, keptBytes: 4096, pendingCap: 100 },
    });
    const list = [
      { event: 'transfer.approved', data: { external_reference: 't-1' } },
      { event: 'transfer.approved', data: { external_reference: 't-2' } },
    ];
    assert.deepEqual(await intake.receive(JSON.stringify(list), 'application/json', silent), { kind: 'stored' });
    await settle();
    assert.deepEqual(
      processed.map((p) => [p.reference, p.authenticated]),
      [
        ['t-1', true],
        ['t-2', true],
      ],
    );
    await store.close();
  });
});
