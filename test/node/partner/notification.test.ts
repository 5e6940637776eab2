/**
 * Reading a partner's notification from the whole body (partner/notification.ts): the reference and
 * the words we use, under any wrapper, to a bounded depth; two references are ambiguous; the status
 * and outcome words in one list (partner/status-codes.ts WORDS), English and Portuguese, any case.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { examineNotification, notificationBody, readNotification, WALK, type PartnerNotification } from '../../../server/partner/notification.ts';
import { wordMeaning, WORDS } from '../../../server/partner/status-codes.ts';

const record = { external_reference: 'r1', status: 2, value: 10, transaction_id: null };

describe('notifications under any wrapper', () => {
  const cases: [string, unknown, Partial<PartnerNotification>][] = [
    [
      'event beside a payload holding the transaction',
      { event: 'payment.approved', payload: { transaction: record } },
      { reference: 'r1', kind: 'payment', outcome: 'approved', status: { code: 2, word: null } },
    ],
    ['a body holding data', { body: { data: record } }, { reference: 'r1', kind: null, outcome: null, status: { code: 2, word: null } }],
    [
      'a body holding the new format',
      { body: { id: 'evt_9', event: 'payment.canceled', data: { external_reference: 'r1', status: 3 } } },
      { reference: 'r1', kind: 'payment', outcome: 'canceled', eventId: 'evt_9' },
    ],
    ['an array of one', [{ type: 'payment', external_reference: 'r1', status: 2 }], { reference: 'r1', kind: 'payment', status: { code: 2, word: null } }],
    [
      'arrays and objects, four deep',
      { notifications: [{ content: { resource: { data: { externalReference: 'r1', status: 'PAGO' } } } }] },
      { reference: 'r1', outcome: 'approved', status: { code: null, word: 'pago' } },
    ],
    [
      'the kind and the event deep inside',
      { envelope: { meta: { event_type: 'pix_out.completed' }, item: { transfer: { reference: 'r1' } } } },
      { reference: 'r1', kind: 'transfer', outcome: 'approved' },
    ],
    [
      "the record's own status, not an envelope's",
      { status: 'success', result: { data: { external_reference: 'r1', status: 1 } } },
      { reference: 'r1', status: { code: 1, word: null }, outcome: null },
    ],
    [
      'a status beside the record, in the object around it',
      { data: { status: 'cancelada', pix_deposit: { external_reference: 'r1' } } },
      { reference: 'r1', status: { code: null, word: 'cancelada' }, outcome: 'canceled' },
    ],
    ['the same reference twice is one', { external_reference: 'r1', data: { transaction: { external_reference: 'r1' } } }, { reference: 'r1' }],
    [
      "the spec's external_reference over a bare reference (ours echoed), wherever each is",
      { reference: 'our-id', payload: { item: { external_reference: 'r1' } } },
      { reference: 'r1' },
    ],
    ['Portuguese event words', { evento: 'x', event: 'pagamento.aprovado', dados: { external_reference: 'r1' } }, { reference: 'r1', outcome: 'approved' }],
    [
      'an accented Portuguese kind and outcome',
      { event: 'DEPÓSITO_CONCLUÍDO', data: { external_reference: 'r1' } },
      { reference: 'r1', kind: 'payment', outcome: 'approved' },
    ],
    ['Portuguese negation states no outcome', { event: 'pagamento.nao_aprovado', data: { external_reference: 'r1' } }, { reference: 'r1', outcome: null }],
    ['a refund in Portuguese states no outcome', { event: 'pix.estorno.concluido', data: { external_reference: 'r1' } }, { reference: 'r1', outcome: null }],
    [
      'two event names that disagree state none',
      { event: 'payment.approved', data: { event: 'payment.canceled', external_reference: 'r1' } },
      { reference: 'r1', outcome: null },
    ],
    [
      'two kinds that disagree say none (the proxy looks it up)',
      { type: 'payment', data: { type: 'transfer', external_reference: 'r1' } },
      { reference: 'r1', kind: null },
    ],
    ['an outcome field anywhere', { meta: { outcome: 'Cancelled' }, data: { reference: 'r1' } }, { reference: 'r1', outcome: 'canceled' }],
  ];
  for (const [name, body, expected] of cases) {
    test(name, () => {
      const read = readNotification(notificationBody(JSON.stringify(body), 'application/json'));
      assert.ok(read, 'read');
      for (const [key, value] of Object.entries(expected)) assert.deepEqual(read[key as keyof PartnerNotification], value, key);
    });
  }

  test('two different references outside one list: ambiguous, read as neither', () => {
    for (const body of [
      { data: { external_reference: 'r1' }, previous: { external_reference: 'r2' } },
      // An item naming two references is no list of payments.
      { pix: [{ external_reference: 'r1', related: { external_reference: 'r2' } }] },
      // One reference on the envelope, others in a list: which one is it about?
      { external_reference: 'a', items: [{ external_reference: 'b' }, { external_reference: 'a' }] },
    ]) {
      assert.deepEqual(examineNotification(body), { ambiguous: [...new Set(JSON.stringify(body).match(/\b(r1|r2|a|b)\b(?=")/g))] }, JSON.stringify(body));
      assert.equal(readNotification(body), null);
    }
    const tooMany = { pix: Array.from({ length: WALK.maxBatchItems + 1 }, (_, i) => ({ txid: `t${i}` })) };
    assert.ok('ambiguous' in examineNotification(tooMany), `a list of more than ${WALK.maxBatchItems}: kept for the operator`);
    assert.deepEqual(examineNotification({ hello: 'world' }), { unreadable: true });
  });

  test('a list of payments is a batch: each item read with the envelope, from the body with the list cut to it', () => {
    const cases: [unknown, string[]][] = [
      [
        [{ external_reference: 'r1' }, { externalReference: 'r2' }],
        ['r1', 'r2'],
      ],
      [{ event: 'payment.approved', payload: { items: [{ reference: 'a' }, { reference: 'b' }] } }, ['a', 'b']],
      [
        {
          pix: [
            { txid: 'x1', valor: '10.00' },
            { txid: 'x2', valor: '5.00' },
            { txid: 'x1', valor: '10.00' },
          ],
        },
        ['x1', 'x2', 'x1'],
      ],
    ];
    for (const [body, references] of cases) {
      const reading = examineNotification(body);
      assert.ok('batch' in reading, JSON.stringify(body));
      assert.deepEqual(
        reading.batch.map((item) => item.notification.reference),
        references,
      );
      // Each item's body reads as that item alone.
      for (const item of reading.batch) assert.equal(readNotification(item.body)?.reference, item.notification.reference);
    }
    const enveloped = examineNotification({ event: 'payment.approved', payload: { items: [{ reference: 'a' }, { reference: 'b' }] } });
    assert.ok('batch' in enveloped);
    assert.deepEqual(enveloped.batch[1]!.body, { event: 'payment.approved', payload: { items: [{ reference: 'b' }] } });
    assert.deepEqual(
      enveloped.batch.map((item) => item.notification.outcome),
      ['approved', 'approved'],
      "the envelope's words are each item's",
    );
  });

  test('another reference we stored: our transaction_id, or txid, read only when no external_reference is named', () => {
    assert.deepEqual(
      [readNotification({ txid: 'tx-1', valor: '1.00' }), readNotification({ data: { transaction_id: 'tx-2', status: 2 } })].map((n) => [
        n?.reference,
        n?.referenceField,
      ]),
      [
        ['tx-1', 'transaction_id'],
        ['tx-2', 'transaction_id'],
      ],
    );
    const old = readNotification({ type: 'payment', external_reference: 'E1', transaction_id: 'tx-3', status: 2 });
    assert.deepEqual([old?.reference, old?.referenceField], ['E1', 'external_reference']);
  });

  test('a return: from a list of returns (done ones summed), a returned value, or words', () => {
    const cases: [unknown, { cents: number | null } | null][] = [
      [
        {
          pix: [
            {
              txid: 't',
              valor: '10.00',
              devolucoes: [
                { valor: '4.00', status: 'DEVOLVIDO' },
                { valor: '1.50', status: 'DEVOLVIDO' },
              ],
            },
          ],
        },
        { cents: 550 },
      ],
      [{ pix: [{ txid: 't', valor: '10.00', devolucoes: [{ valor: '4.00', status: 'EM_PROCESSAMENTO' }] }] }, null],
      [{ event: 'payment.returned', data: { external_reference: 'r', returned_value: 2.5 } }, { cents: 250 }],
      [{ event: 'pix.devolvido', data: { external_reference: 'r' } }, { cents: null }],
      [{ data: { external_reference: 'r', status: 'RETURNED' } }, { cents: null }],
      [{ event: 'payment.approved', data: { external_reference: 'r' } }, null],
    ];
    for (const [body, returned] of cases) assert.deepEqual(readNotification(body)?.returned, returned, JSON.stringify(body));
    assert.equal(readNotification({ event: 'payment.returned', data: { external_reference: 'r' } })?.outcome, null, 'a return is no outcome');
  });

  test(`bounded: nothing deeper than ${WALK.maxDepth}, nothing past ${WALK.maxNodes} objects, no stack overflow`, () => {
    const wrap = (depth: number): unknown => {
      let body: unknown = { external_reference: 'deep' };
      for (let i = 0; i < depth; i++) body = { w: body };
      return body;
    };
    assert.equal(readNotification(wrap(WALK.maxDepth))?.reference, 'deep');
    assert.equal(readNotification(wrap(WALK.maxDepth + 1)), null);
    assert.equal(readNotification(wrap(100_000)), null);
    const wide = (n: number) => ({ items: [...Array.from({ length: n }, () => ({})), { external_reference: 'late' }] });
    assert.equal(readNotification(wide(WALK.maxNodes - 10))?.reference, 'late');
    assert.equal(readNotification(wide(WALK.maxNodes)), null);
    // Built before it is read: what is bounded is the walk (the intake's 64 KiB body bounds the rest).
    const huge = { items: Array.from({ length: 200_000 }, () => ({ a: {} })) };
    assert.equal(readNotification(huge), null);
  });

  test('random wrappers around a known notification still read the same', () => {
    const known = { id: 'evt_1', event: 'payment.approved', data: { external_reference: 'ref-42', status: 2 } };
    // Names that are none of the fields read (nor `id`, read beside an event name).
    const names = fc.oneof(
      fc.constantFrom('payload', 'body', 'data', 'transaction', 'notification', 'message', 'content', 'wrapper', 'evento', 'dados', 'result', 'items'),
      fc.stringMatching(/^[a-z]{1,8}$/).filter((n) => !/^(event|type|kind|status|outcome|result|reference|topic|action|object|resource|id)$/.test(n)),
    );
    // Junk beside: text, numbers, empty objects and arrays, which name nothing.
    const junk = fc.oneof(fc.string({ maxLength: 8 }), fc.integer(), fc.constant({}), fc.constant([]), fc.constant(null));
    const wrapper = fc.record({
      kind: fc.constantFrom('object', 'array'),
      name: names,
      before: fc.array(junk, { maxLength: 3 }),
      after: fc.array(junk, { maxLength: 3 }),
      siblings: fc.dictionary(names, junk, { maxKeys: 3 }),
    });
    fc.assert(
      fc.property(fc.array(wrapper, { maxLength: WALK.maxDepth - 1 }), (wrappers) => {
        let body: unknown = known;
        for (const w of wrappers) body = w.kind === 'array' ? [...w.before, body, ...w.after] : { ...w.siblings, [w.name]: body };
        const read = readNotification(notificationBody(JSON.stringify(body), 'application/json'));
        assert.equal(read?.reference, 'ref-42');
        assert.equal(read.kind, 'payment');
        assert.equal(read.outcome, 'approved');
        assert.deepEqual(read.status, { code: 2, word: null });
      }),
      { numRuns: 500, seed: 26 },
    );
  });
});

describe('status and outcome words: one list, any case, with or without accents', () => {
  const table: [string, 'pending' | 'approved' | 'canceled' | 'expired' | 'returned' | 'failed' | null][] = [
    ['approved', 'approved'],
    ['APPROVED', 'approved'],
    ['Paid', 'approved'],
    ['confirmed', 'approved'],
    ['canceled', 'canceled'],
    ['cancelled', 'canceled'],
    ['CANCELLED', 'canceled'],
    ['pago', 'approved'],
    ['paga', 'approved'],
    ['aprovado', 'approved'],
    ['Aprovada', 'approved'],
    ['confirmado', 'approved'],
    ['concluído', 'approved'],
    ['CONCLUIDO', 'approved'],
    ['liquidado', 'approved'],
    ['cancelado', 'canceled'],
    ['cancelada', 'canceled'],
    // Failure words: an attempt that failed, never final (the open status model: status-codes.ts).
    ['recusado', 'failed'],
    ['rejeitado', 'failed'],
    ['pendente', 'pending'],
    ['aguardando', 'pending'],
    // Money may be in flight: never read as unpaid (a new code beside it could be a second payment).
    ['Em processamento', null],
    ['em-processamento', null],
    ['processing', null],
    ['expirado', 'expired'],
    ['expired', 'expired'],
    ['estornado', 'returned'],
    ['constructor', null],
    ['__proto__', null],
  ];
  for (const [word, meaning] of table) {
    test(`${word} -> ${meaning}`, () => {
      assert.equal(wordMeaning(word), meaning);
      // The notification reader uses the same list, as a status word and as an event's last word.
      const outcome = meaning === 'approved' || meaning === 'canceled' ? meaning : null;
      assert.equal(readNotification({ data: { external_reference: 'r1', status: word } })?.outcome, outcome, 'status word');
      assert.equal(readNotification({ event: `payment.${word}`, data: { external_reference: 'r1' } })?.outcome, outcome, 'event word');
    });
  }
  test('every word of the list is a plain key (lower case, no accent, no space)', () => {
    for (const word of Object.keys(WORDS)) assert.match(word, /^[a-z_]+$/);
  });
});
