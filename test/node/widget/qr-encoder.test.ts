/**
 * src/qr-encoder.ts against npm `qrcode` (a devDependency here, the reference): for every input the
 * two must give the same module matrix, bit for bit. The reference is qrcode with one byte-mode
 * segment, `create([{ data, mode: 'byte' }], ...)`, which is what the widget drew before (its bundle
 * trimmed qrcode to byte segments); `create(text)` alone would split a BR Code's digit runs into
 * numeric segments, another symbol.
 */
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { create } from 'qrcode/lib/core/qrcode.js';
import { encodeQr } from '../../../src/qr-encoder.ts';
import { buildDynamicBrCode, crc16 } from '../../../src/shared/brcode.ts';

// The valid vectors and the malformed one from /work/shared/spec/brcode.md, verbatim.
const SPEC_VECTORS = [
  '00020126580014br.gov.bcb.pix0136123e4567-e12b-12d1-a456-4266554400005204000053039865802BR5913Fulano de Tal6008BRASILIA62070503***63041D3D',
  '00020126550014br.gov.bcb.pix0118fulano@example.com0211Pedido 1234520400005303986540510.505802BR5917LOJA EXEMPLO LTDA6009SAO PAULO62140510PEDIDO12346304A176',
  '00020101021226760014br.gov.bcb.pix2554pix.example.com/qr/v2/9d36b84fc70b478fb95c12729b90ca255204000053039865802BR5917LOJA EXEMPLO LTDA6009SAO PAULO62070503***63044846',
  '00020101021226770014BR.GOV.BCB.PIX2555api.itau/pix/v1/qr/27bf8add-2c28-4ece-af79-52e77d3950b25204000053039865802BR5924ROMULO RODRIGUES BERTEGZ6009SAO PAULO62070503***630495B7',
  '00020126360014BR.GOV.BCB.PIX0114+5511943214321520400005303986540566.665802BR5907EMPRESA6008BRASILIA62080503***6304170E',
];

// ISO/IEC 18004 table 7: the bytes a version holds at level M, versions 1 to 40 (independent of both encoders).
const BYTE_CAPACITY_M = [
  14, 26, 42, 62, 84, 106, 122, 152, 180, 213, 251, 287, 331, 362, 412, 450, 504, 560, 624, 666, 711, 779, 857, 911, 997, 1059, 1125, 1190, 1264, 1370, 1452,
  1538, 1628, 1722, 1809, 1911, 1989, 2099, 2213, 2331,
];

/** mulberry32: a small seeded generator, so a failing case replays. */
function seeded(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const versionOf = (size: number) => (size - 17) / 4;

/** Compares the two encoders on `text`; returns the version drawn. */
function assertSameSymbol(text: string): number {
  const reference = create([{ data: text, mode: 'byte' }], { errorCorrectionLevel: 'M' });
  const ours = encodeQr(text);
  const label = `${JSON.stringify(text.length > 60 ? text.slice(0, 60) + '…' : text)} (${new TextEncoder().encode(text).length} bytes)`;
  assert.equal(ours.size, reference.modules.size, `size for ${label}`);
  for (let row = 0; row < ours.size; row++) {
    for (let col = 0; col < ours.size; col++) {
      if (ours.get(row, col) !== Boolean(reference.modules.get(row, col))) {
        assert.fail(`module (${row}, ${col}) differs for ${label}, version ${reference.version}`);
      }
    }
  }
  assert.equal(versionOf(ours.size), reference.version);
  return reference.version;
}

const tlv = (id: string, value: string) => id + String(value.length).padStart(2, '0') + value;

describe('encodeQr draws the same symbol as qrcode (byte mode, level M)', () => {
  test('the BR Code vectors of the spec', () => {
    assert.deepEqual(SPEC_VECTORS.map(assertSameSymbol), [8, 9, 9, 9, 7]);
  });

  test('dynamic BR Codes at many amounts, names and locations', () => {
    const random = seeded(18);
    const names = ['Loja Exemplo Ltda', 'José da Conceição', 'Açaí & Cia.', 'Padaria São João', 'Müller Ñandú Comércio de Alimentos', 'Ótica Visão', 'X'];
    const cities = ['São Paulo', 'Brasília', 'Florianópolis', 'Goiânia', 'Rio'];
    const hex = () => Math.floor(random() * 16).toString(16);
    const versions = new Set<number>();
    let cases = 0;
    for (const name of names) {
      for (const city of cities) {
        for (let k = 0; k < 6; k++) {
          const amount = k === 0 ? undefined : ([0.01, 10.5, 9999.99, 99999999.99][k - 1] ?? Math.round(random() * 1e8) / 100 + 0.01);
          const id = Array.from({ length: 1 + Math.floor(random() * 40) }, hex).join('');
          const code = buildDynamicBrCode({ locationUrl: `pix.example.com/qr/v2/${id}`, merchantName: name, merchantCity: city, amount });
          versions.add(assertSameSymbol(code));
          cases++;
        }
      }
    }
    assert.equal(cases, 210);
    assert.ok(versions.size >= 2, `versions ${[...versions].join()}`);
  });

  test('static BR Codes that keep accents in the name and city (as some banks issue them)', () => {
    const random = seeded(2024);
    for (const [name, city] of [
      ['JOSÉ DA CONCEIÇÃO', 'SÃO PAULO'],
      ['Açaí da Esquina', 'Belém'],
      ['Ñandú Comércio de Alimentos Ltda', 'Florianópolis'],
    ]) {
      for (let k = 0; k < 10; k++) {
        const body =
          '000201' +
          tlv('26', tlv('00', 'br.gov.bcb.pix') + tlv('01', `chave${k}@exemplo.com.br`)) +
          '52040000' +
          '5303986' +
          tlv('54', (Math.round(random() * 1e6) / 100 + 0.01).toFixed(2)) +
          '5802BR' +
          tlv('59', name!) +
          tlv('60', city!) +
          tlv('62', tlv('05', `PEDIDO${k}`)) +
          '6304';
        assertSameSymbol(body + crc16(body));
      }
    }
  });

  test('random printable ASCII, 1 to 600 characters', () => {
    const random = seeded(1);
    const versions = new Set<number>();
    for (let i = 0; i < 400; i++) {
      const length = 1 + Math.floor(random() * 600);
      const text = Array.from({ length }, () => String.fromCharCode(0x20 + Math.floor(random() * 95))).join('');
      versions.add(assertSameSymbol(text));
    }
    // 600 ASCII bytes need version 19; every version up to it comes up.
    for (let v = 1; v <= 19; v++) assert.ok(versions.has(v), `version ${v} not covered`);
  });

  test('random UTF-8 (accents, other scripts, emoji, lone surrogates), 1 to 600 characters', () => {
    const random = seeded(2);
    const ranges = [
      [0x20, 0x7e],
      [0xa0, 0x17f],
      [0x370, 0x52f],
      [0x4e00, 0x9fff],
      [0x1f300, 0x1faff],
      [0xd800, 0xdfff],
    ] as const;
    const versions = new Set<number>();
    let tooLong = 0;
    for (let i = 0; i < 400; i++) {
      const length = 1 + Math.floor(random() * 600);
      const weights = ranges.map(() => random());
      let text = '';
      for (let k = 0; k < length; k++) {
        let pick = random() * weights.reduce((a, b) => a + b);
        let r = 0;
        while ((pick -= weights[r]!) > 0 && r < ranges.length - 1) r++;
        const [low, high] = ranges[r]!;
        text += String.fromCodePoint(low + Math.floor(random() * (high - low + 1)));
      }
      if (new TextEncoder().encode(text).length > 2331) {
        assert.throws(() => encodeQr(text), /too long/);
        tooLong++;
      } else {
        versions.add(assertSameSymbol(text));
      }
    }
    assert.ok(tooLong < 20, `${tooLong} inputs too long`);
    for (let v = 1; v <= 20; v++) assert.ok(versions.has(v), `version ${v} not covered`);
  });

  test('every version 1 to 40 at its capacity and one byte over it', () => {
    const random = seeded(3);
    for (let v = 1; v <= 40; v++) {
      const capacity = BYTE_CAPACITY_M[v - 1]!;
      // Mixed 1- and 2-byte characters, cut to exactly `capacity` bytes.
      let text = '';
      while (new TextEncoder().encode(text).length < capacity - 1) text += random() < 0.8 ? String.fromCharCode(0x21 + Math.floor(random() * 94)) : 'ç';
      if (new TextEncoder().encode(text).length < capacity) text += '!';
      assert.equal(assertSameSymbol(text), v);
      if (v < 40) assert.equal(assertSameSymbol(text + '~'), v + 1);
    }
  });

  test('input over 2331 bytes is refused, as qrcode refuses it; empty input too', () => {
    const longest = 'é'.repeat(1165) + 'a';
    assert.equal(assertSameSymbol(longest), 40);
    for (const text of ['a'.repeat(2332), 'é'.repeat(1166), 'a'.repeat(10_000)]) {
      assert.throws(() => encodeQr(text), /too long for a QR code/);
      assert.throws(() => create([{ data: text, mode: 'byte' }], { errorCorrectionLevel: 'M' }), /too big/);
    }
    assert.throws(() => encodeQr(''), /nothing to encode/);
  });
});
