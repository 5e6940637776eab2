import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import {
  checkBrCode,
  crc16,
  describeBrCodeProblem,
  parseBrCode,
  readBrCode,
  buildDynamicBrCode,
  formatAmount,
  type BrCode,
  type BrCodeErrorCode,
} from '../../../src/shared/brcode.ts';

// Vectors 1-4 (valid) and 5 (malformed) verbatim from /work/shared/spec/brcode.md.
const V1 = '00020126580014br.gov.bcb.pix0136123e4567-e12b-12d1-a456-4266554400005204000053039865802BR5913Fulano de Tal6008BRASILIA62070503***63041D3D';
const V2 =
  '00020126550014br.gov.bcb.pix0118fulano@example.com0211Pedido 1234520400005303986540510.505802BR5917LOJA EXEMPLO LTDA6009SAO PAULO62140510PEDIDO12346304A176';
const V3 =
  '00020101021226760014br.gov.bcb.pix2554pix.example.com/qr/v2/9d36b84fc70b478fb95c12729b90ca255204000053039865802BR5917LOJA EXEMPLO LTDA6009SAO PAULO62070503***63044846';
const V4 =
  '00020101021226770014BR.GOV.BCB.PIX2555api.itau/pix/v1/qr/27bf8add-2c28-4ece-af79-52e77d3950b25204000053039865802BR5924ROMULO RODRIGUES BERTEGZ6009SAO PAULO62070503***630495B7';
// Vector 5, listed by the spec as malformed: its CRC matches, but field 62 declares LEN 08 for the
// 7-character '0503***', so the TLV swallows the '6' of '6304'. A structure error: refused.
const V5_AS_PRINTED = '00020126360014BR.GOV.BCB.PIX0114+5511943214321520400005303986540566.665802BR5907EMPRESA6008BRASILIA62080503***6304170E';
// Not in the spec: vector 5 with LEN 07 and the CRC recomputed, a valid static code with a phone key.
const V5 = '00020126360014BR.GOV.BCB.PIX0114+5511943214321520400005303986540566.665802BR5907EMPRESA6008BRASILIA62070503***630404ED';

const VECTORS = [V1, V2, V3, V4, V5];

const withCrc = (body: string): string => body + '6304' + crc16(body + '6304');

// Independent reference CRC over raw bytes, to check which bytes crc16 hashes.
function crcBytes(bytes: Iterable<number>): string {
  let crc = 0xffff;
  for (const byte of bytes) {
    crc ^= byte << 8;
    for (let k = 0; k < 8; k++) crc = ((crc << 1) ^ (crc & 0x8000 ? 0x1021 : 0)) & 0xffff;
  }
  return crc.toString(16).toUpperCase().padStart(4, '0');
}

// A valid static code assembled from parts, so single fields can be swapped out.
const part = (id: string, value: string): string => id + String([...value].length).padStart(2, '0') + value;
function staticBody(o: { account?: string; amount?: string; name?: string; city?: string; extra62?: string; txid?: string; poi?: string } = {}): string {
  return (
    '000201' +
    (o.poi ?? '') +
    part('26', o.account ?? part('00', 'br.gov.bcb.pix') + part('01', '+5511999999999')) +
    '52040000' +
    '5303986' +
    (o.amount === undefined ? '' : part('54', o.amount)) +
    '5802BR' +
    (o.name === undefined ? part('59', 'FULANO') : o.name) +
    part('60', o.city ?? 'BRASILIA') +
    part('62', part('05', o.txid ?? '***') + (o.extra62 ?? ''))
  );
}

/** Asserts text passes the check without a warning. */
function ok(text: string): BrCode {
  return warns(text, []);
}

/** Asserts text passes the check (it is drawn) with exactly these warnings, each matched by a part of its sentence. */
function warns(text: string, parts: string[]): BrCode {
  const r = parseBrCode(text);
  assert.ok(r.ok, r.ok ? '' : `${r.error}: ${r.message}`);
  assert.equal(r.warnings.length, parts.length, `warnings: ${JSON.stringify(r.warnings)}`);
  parts.forEach((part, i) => assert.ok(r.warnings[i]!.includes(part), `warning ${i} '${r.warnings[i]}' names '${part}'`));
  // What the widget reads before drawing: the same verdict, and the name it shows.
  const read = readBrCode(text);
  assert.ok(read.ok);
  assert.equal(read.fields.get('59'), r.code.merchantName);
  return r.code;
}

function rejects(text: string, error: BrCodeErrorCode, messagePart?: string | RegExp): void {
  const r = parseBrCode(text);
  assert.equal(r.ok, false, `expected ${error} for ${text}`);
  if (r.ok) return;
  assert.equal(r.error, error, r.message);
  const read = readBrCode(text);
  assert.equal(read.ok ? 'drawn' : read.error, error, 'the widget refuses it too');
  assert.ok(r.message.length > 0);
  if (messagePart) assert.match(r.message, typeof messagePart === 'string' ? new RegExp(messagePart.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')) : messagePart);
}

describe('crc16', () => {
  test('check value of 123456789 is 29B1', () => {
    assert.equal(crc16('123456789'), '29B1');
  });

  test('is zero-padded and upper-case', () => {
    assert.match(crc16(''), /^[0-9A-F]{4}$/);
    assert.equal(crc16(''), 'FFFF');
    for (const v of VECTORS) assert.equal(crc16(v.slice(0, -4)), v.slice(-4));
  });

  test('hashes UTF-8 bytes, not UTF-16 units', () => {
    // 'É' is C3 89 in UTF-8; hashing the single code unit 0xC9 would differ.
    assert.equal(crc16('123456789'), crcBytes(new TextEncoder().encode('123456789')));
    assert.equal(crc16('É'), crcBytes([0xc3, 0x89]));
    assert.notEqual(crc16('É'), crcBytes([0xc9]));
    assert.equal(crc16('😀'), crcBytes([0xf0, 0x9f, 0x98, 0x80]));
  });
});

describe('parseBrCode: spec vectors', () => {
  // Each vector with the fields it is read as (a field named undefined is absent).
  const vectors: [string, string, Partial<BrCode>][] = [
    [
      'vector 1: central bank example, static with random key',
      V1,
      {
        dynamic: false,
        key: '123e4567-e12b-12d1-a456-426655440000',
        locationUrl: undefined,
        amount: undefined,
        merchantName: 'Fulano de Tal',
        merchantCity: 'BRASILIA',
        txid: '***',
        crc: '1D3D',
        pointOfInitiation: undefined,
      },
    ],
    [
      'vector 2: static with e-mail key, description, amount and txid',
      V2,
      {
        dynamic: false,
        key: 'fulano@example.com',
        description: 'Pedido 1234',
        amount: '10.50',
        merchantName: 'LOJA EXEMPLO LTDA',
        merchantCity: 'SAO PAULO',
        txid: 'PEDIDO1234',
      },
    ],
    [
      'vector 3: dynamic code',
      V3,
      {
        dynamic: true,
        pointOfInitiation: 'dynamic',
        key: undefined,
        locationUrl: 'pix.example.com/qr/v2/9d36b84fc70b478fb95c12729b90ca25',
        merchantName: 'LOJA EXEMPLO LTDA',
        txid: '***',
      },
    ],
    [
      'vector 4: dynamic code with upper-case GUI and a 24-char name',
      V4,
      {
        dynamic: true,
        locationUrl: 'api.itau/pix/v1/qr/27bf8add-2c28-4ece-af79-52e77d3950b2',
        merchantName: 'ROMULO RODRIGUES BERTEGZ',
        merchantCity: 'SAO PAULO',
        txid: '***',
        crc: '95B7',
      },
    ],
  ];
  for (const [name, text, fields] of vectors) {
    test(name, () => {
      const c = ok(text);
      for (const [field, value] of Object.entries(fields)) assert.equal(c[field as keyof BrCode], value, field);
    });
  }

  test('vector 5 is malformed (62 LEN 08 for 7 chars): refused though its CRC holds', () => {
    assert.equal(crc16(V5_AS_PRINTED.slice(0, -4)), '170E', 'its CRC does match');
    // 62 takes '0503***6', so what follows reads as a field 30 of 41 characters.
    rejects(V5_AS_PRINTED, 'malformed_field', 'field 30 has length 00 or runs past the end');
  });

  test('every spec vector gets its verdict: 1-4 drawn without a warning, 5 refused', () => {
    for (const v of [V1, V2, V3, V4]) {
      const r = checkBrCode(v);
      assert.deepEqual(r.ok && r.warnings, [], v);
    }
    const r5 = checkBrCode(V5_AS_PRINTED);
    assert.equal(r5.ok, false);
    assert.deepEqual(!r5.ok && [r5.error, r5.at], ['malformed_field', ['30', 'length', undefined]]);
  });

  test('vector 5 with field 62 LEN corrected: static with phone key and amount', () => {
    const c = ok(V5);
    assert.equal(c.dynamic, false);
    assert.equal(c.key, '+5511943214321');
    assert.equal(c.amount, '66.66');
    assert.equal(c.merchantName, 'EMPRESA');
    assert.equal(c.merchantCity, 'BRASILIA');
    assert.equal(c.txid, '***');
  });

  test('changing any single character of a vector makes it invalid', () => {
    const substitutes = ['0', '1', '7', '9', 'A', 'f', 'Z', 'x', ' ', '.', '*', 'É'];
    for (const v of VECTORS) {
      for (let i = 0; i < v.length; i++) {
        const inCrc = i >= v.length - 4;
        for (const s of substitutes) {
          // The CRC hex is compared case-insensitively, so a case flip there is not a change.
          if (s === v[i] || (inCrc && s.toUpperCase() === v[i]!.toUpperCase())) continue;
          const mutated = v.slice(0, i) + s + v.slice(i + 1);
          const r = parseBrCode(mutated);
          assert.equal(r.ok, false, `position ${i} -> '${s}' still parses: ${mutated}`);
        }
      }
    }
  });

  test('lower-case CRC hex is accepted', () => {
    assert.equal(ok(V1.slice(0, -4) + V1.slice(-4).toLowerCase()).crc, '1D3D');
    assert.equal(ok(V2.slice(0, -4) + 'a176').crc, 'A176');
  });

  test('fields in any order between 00 and 63 are accepted', () => {
    const body =
      '000201' +
      '5802BR' +
      '5303986' +
      part('62', part('05', '***')) +
      part('60', 'BRASILIA') +
      part('59', 'FULANO') +
      '52040000' +
      part('26', part('01', 'a@b.co') + part('00', 'br.gov.bcb.pix'));
    const c = ok(withCrc(body));
    assert.equal(c.key, 'a@b.co');
  });

  test('tolerates subfield 50 in 62, unknown subfields, templates 80-99 and postal code 61', () => {
    const body =
      staticBody({ extra62: part('50', part('00', 'BR.GOV.BCB.BRCODE') + part('01', '1.0.0')) + part('99', 'x') }) +
      part('61', '70000000') +
      part('80', part('00', 'com.example') + part('01', 'whatever')) +
      part('99', part('00', 'x'));
    const c = ok(withCrc(body));
    assert.equal(c.postalCode, '70000000');
    assert.equal(c.txid, '***');
  });

  test('point of initiation 11 is static', () => {
    assert.equal(ok(withCrc(staticBody({ poi: '010211' }))).pointOfInitiation, 'static');
  });
});

describe('parseBrCode: errors', () => {
  test('empty', () => {
    rejects('', 'empty');
  });

  test('too long: more than 512 characters', () => {
    const body = staticBody() + part('80', 'x'.repeat(99)) + part('81', 'x'.repeat(99)) + part('82', 'x'.repeat(99)) + part('83', 'x'.repeat(99));
    const text = withCrc(body);
    assert.ok(text.length > 512);
    rejects(text, 'too_long', '512');
    // The same structure at or under 512 is fine.
    const shorter = withCrc(staticBody() + part('80', 'x'.repeat(99)));
    assert.ok(shorter.length <= 512);
    ok(shorter);
  });

  test('wrong format indicator', () => {
    // The CRC is checked before field values, so only a recomputed CRC reaches the value check.
    assert.equal(parseBrCode('000202' + V1.slice(6)).ok, false);
    rejects(withCrc('000202' + staticBody().slice(6)), 'invalid_field', 'field 00 (format indicator) must be 01');
  });

  test('field 00 not first', () => {
    rejects(
      withCrc(
        '52040000' +
          '000201' +
          staticBody()
            .slice(6 + 0)
            .replace('52040000', ''),
      ),
      'missing_field',
      'field 00',
    );
  });

  test('LEN longer than the remaining text', () => {
    rejects(V1.slice(0, -8) + '6305' + V1.slice(-4), 'malformed_field', 'field 63');
    rejects('00020126999', 'malformed_field', 'field 26 (Pix account) has length 00 or runs past the end');
  });

  test('non-digit ID or LEN, and LEN 00', () => {
    rejects(withCrc(staticBody() + '8A01x'), 'malformed_field');
    rejects(withCrc(staticBody() + '8000'), 'malformed_field', 'field 80 has length 00');
  });

  test('duplicate field', () => {
    rejects(withCrc(staticBody() + part('59', 'OTHER')), 'malformed_field', 'twice');
  });

  test('CRC field missing, not last or not hex', () => {
    rejects(staticBody(), 'missing_field', 'field 63');
    rejects(withCrc(staticBody()) + '8102xx', 'missing_field', 'field 63 (CRC) must come last');
    rejects(withCrc(staticBody()) + '5802BR', 'malformed_field', 'field 58 (country) appears twice');
    const b = staticBody() + '6304';
    rejects(b + 'GHIJ', 'invalid_field', 'field 63');
  });

  test('wrong CRC', () => {
    rejects(V1.slice(0, -4) + '1D3E', 'bad_crc', 'field 63');
  });

  test('Latin-1-only CRC match is still bad_crc but says Latin-1', () => {
    const body = staticBody({ name: part('59', 'JOSÉ') }) + '6304';
    const hex = crcBytes([...body].map((c) => c.codePointAt(0)!));
    assert.notEqual(hex, crc16(body));
    rejects(body + hex, 'bad_crc', 'Latin-1');
    warns(body + crc16(body), ['field 59 (merchant name) has characters strict payer apps refuse']);
  });

  test('missing merchant name (59)', () => {
    rejects(withCrc(staticBody({ name: '' })), 'missing_field', 'field 59 (merchant name)');
  });

  test('merchant name of 26 characters: a warning', () => {
    ok(withCrc(staticBody({ name: part('59', 'A'.repeat(25)) })));
    warns(withCrc(staticBody({ name: part('59', 'A'.repeat(26)) })), ['field 59 (merchant name) is longer than 25 characters']);
  });

  test('merchant city of 16 characters: a warning', () => {
    ok(withCrc(staticBody({ city: 'C'.repeat(15) })));
    warns(withCrc(staticBody({ city: 'C'.repeat(16) })), ['field 60 (merchant city) is longer than 15 characters']);
  });

  test('missing mandatory fields', () => {
    for (const [id, field] of [
      ['52', '52040000'],
      ['53', '5303986'],
      ['58', '5802BR'],
    ] as const) {
      rejects(withCrc(staticBody().replace(field, '')), 'missing_field', `field ${id}`);
    }
    rejects(withCrc(staticBody().replace(/26\d\d0014br\.gov\.bcb\.pix0114\+5511999999999/, '')), 'missing_field', 'field 26');
    rejects(withCrc(staticBody().replace('62070503***', '')), 'missing_field', 'field 62');
  });

  test('a currency other than reais is refused', () => {
    rejects(withCrc(staticBody().replace('5303986', '5303840')), 'invalid_field', 'field 53 (currency) must be 986');
  });

  test('other values in 52, 58 and 01: warnings', () => {
    warns(withCrc(staticBody().replace('52040000', '52045411')), ['field 52 (merchant category) must be 0000']);
    warns(withCrc(staticBody().replace('5802BR', '5802US')), ['field 58 (country) must be BR']);
    warns(withCrc(staticBody({ poi: '010213' })), ['field 01 (point of initiation) must be 11 or 12']);
  });

  test('amounts', () => {
    for (const a of ['10.50', '1', '0.01', '1234567890.12', '1.5']) assert.equal(ok(withCrc(staticBody({ amount: a }))).amount, a);
    for (const a of ['0.00', '0', '1e3', '-1.00', '10.', '.50', '1,50', '1.234', '12345678901.23', ' 1.00']) {
      rejects(withCrc(staticBody({ amount: a })), 'invalid_field', 'field 54 (amount)');
    }
  });

  test('GUI: case-insensitive, wrong one rejected, missing one reported', () => {
    ok(withCrc(staticBody({ account: part('00', 'Br.Gov.Bcb.Pix') + part('01', 'a@b.co') })));
    rejects(withCrc(staticBody({ account: part('00', 'br.gov.bcb.pixx') + part('01', 'a@b.co') })), 'invalid_field', 'field 26.00 (GUI)');
    rejects(withCrc(staticBody({ account: part('01', 'a@b.co') })), 'missing_field', 'field 26.00');
  });

  test('both key (01) and location URL (25)', () => {
    const account = part('00', 'br.gov.bcb.pix') + part('01', 'a@b.co') + part('25', 'pix.example.com/x');
    rejects(withCrc(staticBody({ account })), 'invalid_field', 'field 26');
  });

  test('neither key (01) nor location URL (25)', () => {
    rejects(withCrc(staticBody({ account: part('00', 'br.gov.bcb.pix') + part('02', 'hello') })), 'missing_field', 'field 26');
  });

  test('key and location URL longer than 77 cannot fit the 99-char template', () => {
    // part() writes a 3-digit LEN for the 100-char template, which the parser must reject.
    rejects(withCrc(staticBody({ account: part('00', 'br.gov.bcb.pix') + part('01', 'k'.repeat(78)) })), 'malformed_field');
    rejects(withCrc(staticBody({ account: part('00', 'br.gov.bcb.pix') + part('25', 'u'.repeat(78)) })), 'malformed_field');
    assert.equal(ok(withCrc(staticBody({ account: part('00', 'br.gov.bcb.pix') + part('01', 'k'.repeat(77)) }))).key, 'k'.repeat(77));
    assert.equal(
      ok(withCrc(staticBody({ account: part('00', 'br.gov.bcb.pix') + part('01', 'a@b.co') + part('02', 'd'.repeat(67)) }))).description,
      'd'.repeat(67),
    );
    rejects(withCrc(staticBody({ account: part('00', 'br.gov.bcb.pix') + part('01', 'a@b.co') + part('02', 'd'.repeat(68)) })), 'malformed_field');
  });

  test('malformed nested template', () => {
    rejects(withCrc(staticBody({ account: part('00', 'br.gov.bcb.pix') + '0199' })), 'malformed_field', 'field 26.01');
  });

  test('txid with a hyphen, a space, or too long: a warning', () => {
    const sentence = 'field 62.05 (txid) must be *** or 1-25 letters and digits';
    assert.equal(warns(withCrc(staticBody({ txid: 'PEDIDO-1' })), [sentence]).txid, 'PEDIDO-1');
    warns(withCrc(staticBody({ txid: 'PEDIDO 1' })), [sentence]);
    warns(withCrc(staticBody({ txid: 'A'.repeat(26) })), [sentence]);
    assert.equal(ok(withCrc(staticBody({ txid: 'A'.repeat(25) }))).txid, 'A'.repeat(25));
  });

  test('txid missing from 62', () => {
    const body = staticBody().replace('62070503***', part('62', part('50', 'x')));
    rejects(withCrc(body), 'missing_field', 'field 62.05');
  });

  test('dynamic code whose txid is not ***: a warning', () => {
    const account = part('00', 'br.gov.bcb.pix') + part('25', 'pix.example.com/qr/1');
    ok(withCrc(staticBody({ account, poi: '010212' })));
    assert.equal(warns(withCrc(staticBody({ account, poi: '010212', txid: 'ABC123' })), ['field 62.05 (txid) must be *** in a dynamic code']).txid, 'ABC123');
  });

  test('LEN counts code points, not UTF-16 units or bytes', () => {
    const name = 'JOSÉ';
    assert.equal(new TextEncoder().encode(name).length, 5);
    const body = staticBody({ name: '5904' + name });
    const nonAscii = 'field 59 (merchant name) has characters strict payer apps refuse';
    const c = warns(withCrc(body), [nonAscii]);
    assert.equal(c.merchantName, 'JOSÉ');
    // An astral character is 2 UTF-16 units but 1 code point.
    assert.equal(warns(withCrc(staticBody({ name: '5902A😀' })), [nonAscii]).merchantName, 'A😀');
    // Counting bytes (05) must fail.
    rejects(withCrc(staticBody({ name: '5905' + name })), 'malformed_field');
  });
});

describe('checkBrCode: what blocks and what warns', () => {
  test('accents, other non-ASCII and & in the name or city: warnings; other punctuation is fine', () => {
    warns(withCrc(staticBody({ name: part('59', 'PADARIA SÃO JOÃO') })), ['field 59 (merchant name) has characters strict payer apps refuse']);
    warns(withCrc(staticBody({ city: 'GOIÂNIA' })), ['field 60 (merchant city) has characters strict payer apps refuse']);
    warns(withCrc(staticBody({ name: part('59', 'A & B LTDA') })), ['field 59 (merchant name) has characters strict payer apps refuse']);
    ok(withCrc(staticBody({ name: part('59', "EMPRESA S.A. (D'AVILA)-1"), city: 'SAO PAULO/SP' })));
  });

  test("a real bank's dynamic code breaking several rules is drawn, with every warning in order", () => {
    const account = part('00', 'BR.GOV.BCB.PIX') + part('25', 'qr.banco.example/pix/v2/cobv/9d36b84f');
    const text = withCrc(
      staticBody({ account, poi: '010212', name: part('59', 'COMÉRCIO DE ALIMENTOS NATURAIS'), city: 'FLORIANÓPOLIS SC', txid: 'cobv-9d36b84f' }),
    );
    const r = checkBrCode(text);
    assert.ok(r.ok);
    assert.deepEqual(r.warnings, [
      ['59', 'rule'],
      ['60', 'rule'],
      ['59', 'ascii'],
      ['60', 'ascii'],
      ['62.05', 'rule'],
      ['62.05', 'dynamic'],
    ]);
    assert.deepEqual(r.warnings.map(describeBrCodeProblem), [
      'field 59 (merchant name) is longer than 25 characters',
      'field 60 (merchant city) is longer than 15 characters',
      'field 59 (merchant name) has characters strict payer apps refuse (accents, other non-ASCII, &)',
      'field 60 (merchant city) has characters strict payer apps refuse (accents, other non-ASCII, &)',
      'field 62.05 (txid) must be *** or 1-25 letters and digits',
      'field 62.05 (txid) must be *** in a dynamic code',
    ]);
    assert.equal(r.code.txid, 'cobv-9d36b84f');
    assert.equal(r.code.merchantName, 'COMÉRCIO DE ALIMENTOS NATURAIS');
  });

  test('a warning never hides a broken CRC or structure', () => {
    const text = withCrc(staticBody({ txid: 'PEDIDO-1', name: part('59', 'JOSÉ') }));
    warns(text, ['field 59 (merchant name)', 'field 62.05 (txid)']);
    rejects(text.slice(0, -4) + (text.slice(-4) === '0000' ? '0001' : '0000'), 'bad_crc');
    rejects(withCrc(staticBody({ txid: 'PEDIDO-1' }).replace('5802BR', '5803BR')), 'malformed_field');
    rejects(withCrc(staticBody({ txid: 'PEDIDO-1' }).replace('52040000', '')), 'missing_field', 'field 52');
  });

  test('what blocks: the structure, mandatory fields, what makes it a Pix payment in reais, the CRC', () => {
    const cases: [string, BrCodeErrorCode][] = [
      [V5_AS_PRINTED, 'malformed_field'],
      [withCrc(staticBody().replace('5802BR', '')), 'missing_field'],
      [withCrc('000202' + staticBody().slice(6)), 'invalid_field'],
      [withCrc(staticBody({ account: part('00', 'br.gov.bcb.pax') + part('01', 'a@b.co') })), 'invalid_field'],
      [withCrc(staticBody().replace('5303986', '5303840')), 'invalid_field'],
      [withCrc(staticBody({ amount: '0.00' })), 'invalid_field'],
      [withCrc(staticBody({ account: part('00', 'br.gov.bcb.pix') + part('01', 'a@b.co') + part('25', 'pix.example.com/x') })), 'invalid_field'],
      [V1.slice(0, -4) + '1D3E', 'bad_crc'],
    ];
    for (const [text, error] of cases) {
      const r = checkBrCode(text);
      assert.equal(r.ok ? 'drawn' : r.error, error, text);
    }
  });
});

describe('formatAmount', () => {
  test('two decimals without float artifacts or exponents', () => {
    assert.equal(formatAmount(10.5), '10.50');
    assert.equal(formatAmount(0.2), '0.20');
    assert.equal(formatAmount(0.29), '0.29');
    assert.equal(formatAmount(1.005), '1.01');
    assert.equal(formatAmount(0.1 + 0.2), '0.30');
    assert.equal(formatAmount(10000), '10000.00');
    assert.equal(formatAmount(0), '0.00');
    assert.equal(formatAmount(1e12), '1000000000000.00');
    assert.equal(formatAmount(1e-7), '0.00');
  });

  test('rejects non-finite and negative values', () => {
    for (const v of [NaN, Infinity, -Infinity, -1, 1e21]) assert.throws(() => formatAmount(v), RangeError, String(v));
  });
});

describe('buildDynamicBrCode', () => {
  const base = { locationUrl: 'pix.example.com/qr/v2/9d36b84fc70b478fb95c12729b90ca25', merchantName: 'Loja Exemplo Ltda', merchantCity: 'São Paulo' };

  test('output parses ok as a dynamic code', () => {
    const text = buildDynamicBrCode({ ...base, amount: 10.5 });
    const c = ok(text);
    assert.equal(c.dynamic, true);
    assert.equal(c.pointOfInitiation, 'dynamic');
    assert.equal(c.txid, '***');
    assert.equal(c.locationUrl, base.locationUrl);
    assert.equal(c.amount, '10.50');
    assert.equal(c.merchantName, 'LOJA EXEMPLO LTDA');
    assert.equal(c.merchantCity, 'SAO PAULO');
    assert.match(text, /^00020101021226\d\d0014br\.gov\.bcb\.pix25/);
    assert.match(text, /6304[0-9A-F]{4}$/);
  });

  test('matches spec vector 3 byte for byte', () => {
    assert.equal(buildDynamicBrCode({ ...base, merchantName: 'LOJA EXEMPLO LTDA', merchantCity: 'SAO PAULO' }), V3);
  });

  test('emits fields in ascending ID order', () => {
    const text = buildDynamicBrCode({ ...base, amount: 1 });
    const ids: string[] = [];
    for (let i = 0; i < text.length;) {
      ids.push(text.slice(i, i + 2));
      i += 4 + Number(text.slice(i + 2, i + 4));
    }
    assert.deepEqual(ids, ['00', '01', '26', '52', '53', '54', '58', '59', '60', '62', '63']);
  });

  test('amount is optional', () => {
    const c = ok(buildDynamicBrCode(base));
    assert.equal(c.amount, undefined);
  });

  test('amounts have exactly two decimals', () => {
    const cases: [number, string][] = [
      [10.5, '10.50'],
      [0.2, '0.20'],
      [10000, '10000.00'],
      [0.29, '0.29'],
      [1.1 * 3, '3.30'],
      [9999999999.99, '9999999999.99'],
    ];
    for (const [amount, expected] of cases) assert.equal(ok(buildDynamicBrCode({ ...base, amount })).amount, expected);
  });

  test('normalizes names and cities to ASCII upper-case without & and accents', () => {
    const c = ok(buildDynamicBrCode({ ...base, merchantName: 'São Paulo & Cia', merchantCity: '  Florianópolis ' }));
    assert.equal(c.merchantName, 'SAO PAULO CIA');
    assert.equal(c.merchantCity, 'FLORIANOPOLIS');
    assert.match(c.merchantName + c.merchantCity, /^[A-Z0-9 ]+$/);
  });

  test('truncates names to 25 and cities to 15 characters', () => {
    const c = ok(buildDynamicBrCode({ ...base, merchantName: 'Comércio de Alimentos Naturais Ltda', merchantCity: 'São José dos Campos do Sul' }));
    assert.equal(c.merchantName, 'COMERCIO DE ALIMENTOS NAT');
    assert.equal(c.merchantName.length, 25);
    assert.equal(c.merchantCity, 'SAO JOSE DOS CA');
    assert.equal(c.merchantCity.length, 15);
    // No trailing space left behind by truncation at a word boundary.
    assert.equal(ok(buildDynamicBrCode({ ...base, merchantCity: 'Rio de Janeiro XYZ' })).merchantCity, 'RIO DE JANEIRO');
  });

  test('throws RangeError for bad location URLs', () => {
    for (const locationUrl of ['https://x', 'http://pix.example.com/x', '', 'x'.repeat(78), 'pix.example.com/a b']) {
      assert.throws(() => buildDynamicBrCode({ ...base, locationUrl }), RangeError, JSON.stringify(locationUrl));
    }
    ok(buildDynamicBrCode({ ...base, locationUrl: 'x'.repeat(77) }));
    ok(buildDynamicBrCode({ ...base, locationUrl: 'localhost:8787/pix/qr/1' }));
  });

  test('throws RangeError for bad amounts', () => {
    for (const amount of [0, NaN, -1, Infinity, 0.001, 1e10]) {
      assert.throws(() => buildDynamicBrCode({ ...base, amount }), RangeError, String(amount));
    }
  });

  test('throws RangeError when a name has nothing printable left', () => {
    assert.throws(() => buildDynamicBrCode({ ...base, merchantName: '&&&' }), RangeError);
  });
});
