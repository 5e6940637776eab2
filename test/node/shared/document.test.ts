import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { onlyDigits, normalizeDocument, isValidCpf, isValidCnpj, isValidDocument, documentKind } from '../../../src/shared/document.ts';

// Independent check-digit computation, written from the published rules rather than shared with
// the implementation, so the "valid" fixtures below are proven valid rather than assumed.
function cpfCheckDigits(first9: string): string {
  const d = [...first9].map(Number);
  for (const start of [10, 11]) {
    const sum = d.reduce((acc, n, i) => acc + n * (start - i), 0);
    d.push(((sum * 10) % 11) % 10);
  }
  return d.slice(9).join('');
}
// The Receita Federal's rule for the alphanumeric CNPJ (2026): a character's value is its ASCII code
// minus 48, which keeps '0'-'9' at 0-9 and makes 'A' 17 ... 'Z' 42.
function cnpjCheckDigits(first12: string): string {
  const d = [...first12].map((c) => c.charCodeAt(0) - 48);
  for (const weights of [
    [5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2],
    [6, 5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2],
  ]) {
    const r = weights.reduce((acc, w, i) => acc + w * d[i]!, 0) % 11;
    d.push(r < 2 ? 0 : 11 - r);
  }
  return d.slice(12).join('');
}

const VALID_CPFS = ['529.982.247-25', '52998224725', '111.444.777-35'];
const VALID_CNPJS = ['11.222.333/0001-81', '11222333000181', '45.723.174/0001-10'];
// The first is the Receita Federal's own example; the others carry digits computed by the rule.
const VALID_ALPHANUMERIC_CNPJS = ['12.ABC.345/01DE-35', '12ABC34501DE35', 'A1.B2C.3D4/E5F6-68', 'ZZZZZZZZ000191', 'AB.12C.D34/0001-84', 'ABCDEFGHIJKL80'];

// Bumps the last digit, which always breaks the second check digit.
const bumpLast = (s: string): string => s.slice(0, -1) + ((Number(s.at(-1)) + 1) % 10);

describe('fixtures', () => {
  test('valid fixtures carry the check digits computed independently', () => {
    for (const cpf of VALID_CPFS) {
      const d = cpf.replace(/\D/g, '');
      assert.equal(cpfCheckDigits(d.slice(0, 9)), d.slice(9), cpf);
    }
    for (const cnpj of [...VALID_CNPJS, ...VALID_ALPHANUMERIC_CNPJS]) {
      const d = cnpj.replace(/[^\dA-Z]/g, '');
      assert.equal(d.length, 14, cnpj);
      assert.equal(cnpjCheckDigits(d.slice(0, 12)), d.slice(12), cnpj);
    }
  });

  test('the rule gives the Receita Federal example its published digits', () => {
    assert.equal(cnpjCheckDigits('12ABC34501DE'), '35');
  });
});

describe('onlyDigits', () => {
  test('strips everything but ASCII digits', () => {
    assert.equal(onlyDigits('529.982.247-25'), '52998224725');
    assert.equal(onlyDigits('11.222.333/0001-81'), '11222333000181');
    assert.equal(onlyDigits('a1b2 c3'), '123');
    assert.equal(onlyDigits(''), '');
  });
});

describe('normalizeDocument', () => {
  test('drops punctuation and upper-cases letters, keeping every letter and digit', () => {
    assert.equal(normalizeDocument('12.abc.345/01De-35'), '12ABC34501DE35');
    assert.equal(normalizeDocument('529.982.247-25'), '52998224725');
    assert.equal(normalizeDocument(' 11 222 333 0001 81 '), '11222333000181');
  });
});

describe('isValidCpf', () => {
  test('accepts valid CPFs with or without punctuation', () => {
    for (const cpf of VALID_CPFS) assert.equal(isValidCpf(cpf), true, cpf);
    assert.equal(isValidCpf('529 982 247 25'), true);
    assert.equal(isValidCpf('529.982.247/25'), true);
  });

  test('rejects a wrong last check digit', () => {
    for (const cpf of VALID_CPFS) assert.equal(isValidCpf(bumpLast(cpf)), false, bumpLast(cpf));
  });

  test('rejects a wrong first check digit', () => {
    assert.equal(isValidCpf('529.982.247-35'), false);
  });

  test('rejects every all-same-digit sequence', () => {
    for (let n = 0; n <= 9; n++) assert.equal(isValidCpf(String(n).repeat(11)), false, String(n));
    assert.equal(isValidCpf('111.111.111-11'), false);
  });

  test('rejects wrong lengths, letters and other characters', () => {
    assert.equal(isValidCpf('5299822472'), false); // 10 digits
    assert.equal(isValidCpf('529982247250'), false); // 12 digits
    assert.equal(isValidCpf('529.982.247-2X'), false);
    assert.equal(isValidCpf('529.98A.247-25'), false); // letters are for CNPJs only
    assert.equal(isValidCpf('529.982.247-25a'), false);
    assert.equal(isValidCpf('529_982_247_25'), false);
    assert.equal(isValidCpf('５２９９８２２４７２５'), false); // full-width digits
    assert.equal(isValidCpf(''), false);
  });

  test('a valid CNPJ is not a CPF', () => {
    for (const cnpj of VALID_CNPJS) assert.equal(isValidCpf(cnpj), false, cnpj);
  });
});

describe('isValidCnpj', () => {
  test('accepts valid CNPJs with or without punctuation', () => {
    for (const cnpj of VALID_CNPJS) assert.equal(isValidCnpj(cnpj), true, cnpj);
    assert.equal(isValidCnpj('11 222 333 0001 81'), true);
  });

  test('rejects a wrong last check digit', () => {
    for (const cnpj of VALID_CNPJS) assert.equal(isValidCnpj(bumpLast(cnpj)), false, bumpLast(cnpj));
  });

  test('rejects a wrong first check digit', () => {
    assert.equal(isValidCnpj('11.222.333/0001-91'), false);
  });

  test('rejects all-same-digit sequences', () => {
    assert.equal(isValidCnpj('00.000.000/0000-00'), false);
    for (let n = 0; n <= 9; n++) assert.equal(isValidCnpj(String(n).repeat(14)), false, String(n));
  });

  test('rejects wrong lengths and letters in the check digits', () => {
    assert.equal(isValidCnpj('1122233300018'), false); // 13 digits
    assert.equal(isValidCnpj('112223330001810'), false); // 15 digits
    assert.equal(isValidCnpj('11.222.333/0001-8A'), false);
  });
});

describe('isValidCnpj: alphanumeric (2026)', () => {
  test('accepts valid ones with or without punctuation, in either case', () => {
    for (const cnpj of VALID_ALPHANUMERIC_CNPJS) assert.equal(isValidCnpj(cnpj), true, cnpj);
    assert.equal(isValidCnpj('12 ABC 345 01DE 35'), true);
    assert.equal(isValidCnpj('12.abc.345/01de-35'), true);
    assert.equal(isValidCnpj('12aBc34501dE35'), true);
  });

  test('rejects a wrong last check digit', () => {
    for (const cnpj of VALID_ALPHANUMERIC_CNPJS) assert.equal(isValidCnpj(bumpLast(cnpj)), false, bumpLast(cnpj));
  });

  test('rejects a wrong first check digit', () => {
    assert.equal(isValidCnpj('12.ABC.345/01DE-45'), false);
    assert.equal(isValidCnpj('12.ABC.345/01DE-25'), false);
  });

  test('rejects a changed letter (the letters count)', () => {
    assert.equal(isValidCnpj('12.ABD.345/01DE-35'), false);
    assert.equal(isValidCnpj('12.ABC.345/01DF-35'), false);
  });

  test('rejects letters in the check-digit positions', () => {
    for (let c = 65; c <= 90; c++) {
      const letter = String.fromCharCode(c);
      assert.equal(isValidCnpj(`12ABC34501DE${letter}5`), false, letter);
      assert.equal(isValidCnpj(`12ABC34501DE3${letter}`), false, letter);
    }
  });

  test('rejects wrong lengths, other characters and all-same letters', () => {
    assert.equal(isValidCnpj('12ABC34501D35'), false); // 13 characters
    assert.equal(isValidCnpj('12ABC34501DEF35'), false); // 15 characters
    assert.equal(isValidCnpj('12ÁBC34501DE35'), false); // not ASCII
    assert.equal(isValidCnpj('12_ABC_345_01DE_35'), false);
    assert.equal(isValidCnpj('12.ABC.345/01DE-35!'), false);
    assert.equal(isValidCnpj('AAAAAAAAAAAAAA'), false);
    assert.equal(isValidCnpj('aaaaaaaaaaaaaa'), false);
  });

  test('is not a CPF', () => {
    for (const cnpj of VALID_ALPHANUMERIC_CNPJS) assert.equal(isValidCpf(cnpj), false, cnpj);
  });

  test('a valid CPF is not a CNPJ', () => {
    for (const cpf of VALID_CPFS) assert.equal(isValidCnpj(cpf), false, cpf);
  });
});

describe('isValidDocument and documentKind', () => {
  test('CPFs', () => {
    for (const cpf of VALID_CPFS) {
      assert.equal(isValidDocument(cpf), true, cpf);
      assert.equal(documentKind(cpf), 'cpf', cpf);
    }
  });

  test('CNPJs, numeric and alphanumeric', () => {
    for (const cnpj of [...VALID_CNPJS, ...VALID_ALPHANUMERIC_CNPJS, '12.abc.345/01de-35']) {
      assert.equal(isValidDocument(cnpj), true, cnpj);
      assert.equal(documentKind(cnpj), 'cnpj', cnpj);
    }
  });

  test('invalid documents of the right length have no kind', () => {
    for (const s of [...VALID_CPFS, ...VALID_CNPJS, ...VALID_ALPHANUMERIC_CNPJS].map(bumpLast)) {
      assert.equal(isValidDocument(s), false, s);
      assert.equal(documentKind(s), null, s);
    }
  });

  test('garbage', () => {
    for (const s of ['', ' ', 'abc', '123', '111.111.111-11', '00.000.000/0000-00', '529.982.247-2X', '1234567890123456', 'null']) {
      assert.equal(isValidDocument(s), false, s);
      assert.equal(documentKind(s), null, s);
    }
  });
});
