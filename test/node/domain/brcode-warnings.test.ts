/**
 * The proxy's log line for a partner's BR Code that breaks the manual's rules (drawn with warnings)
 * or fails the check (shown as the partner's image): one warn line by the payment's reference, the
 * problems in words, never the code. A real pino logger writes JSON lines that the test reads.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { crc16 } from '../../../src/shared/brcode.ts';
import { logBrCodeWarnings } from '../../../server/domain/brcode-warnings.ts';
import { createLogger } from '../../../server/log.ts';

// Spec vector 3 (a clean dynamic code) and vector 5 (malformed), from /work/shared/spec/brcode.md.
const CLEAN =
  '00020101021226760014br.gov.bcb.pix2554pix.example.com/qr/v2/9d36b84fc70b478fb95c12729b90ca255204000053039865802BR5917LOJA EXEMPLO LTDA6009SAO PAULO62070503***63044846';
const MALFORMED = '00020126360014BR.GOV.BCB.PIX0114+5511943214321520400005303986540566.665802BR5907EMPRESA6008BRASILIA62080503***6304170E';

const part = (id: string, value: string): string => id + String([...value].length).padStart(2, '0') + value;
const withCrc = (body: string): string => body + '6304' + crc16(body + '6304');
/** A dynamic code as real banks issue them: a txid with a hyphen where *** belongs, an accented name. */
const BANK_STYLE = withCrc(
  '000201010212' +
    part('26', part('00', 'BR.GOV.BCB.PIX') + part('25', 'qr.banco.example/pix/v2/cobv/9d36b84f')) +
    '52040000' +
    '5303986' +
    part('54', '49.90') +
    '5802BR' +
    part('59', 'PADARIA SÃO JOÃO') +
    part('60', 'SAO PAULO') +
    part('62', part('05', 'cobv-9d36b84f')),
);

function capture() {
  const lines: string[] = [];
  const log = createLogger({ level: 'info', destination: { write: (line: string) => void lines.push(line) } });
  return { log, lines, entries: () => lines.map((line) => JSON.parse(line) as Record<string, unknown>) };
}

describe('logBrCodeWarnings', () => {
  test('a clean code logs nothing', () => {
    const { log, lines } = capture();
    logBrCodeWarnings(log, 'ref-clean', CLEAN);
    assert.deepEqual(lines, []);
  });

  test('a code with warnings: one warn line with the reference and every problem, drawn, without the code', () => {
    const { log, lines, entries } = capture();
    logBrCodeWarnings(log, 'ref-bank', BANK_STYLE);
    assert.equal(lines.length, 1);
    const [entry] = entries();
    assert.equal(entry!.level, 40, 'warn');
    assert.match(String(entry!.msg), /^brcode_warning: .*the widget draws it/);
    assert.equal(entry!.reference, 'ref-bank');
    assert.equal(entry!.drawn, true);
    assert.deepEqual(entry!.problems, [
      'field 59 (merchant name) has characters strict payer apps refuse (accents, other non-ASCII, &)',
      'field 62.05 (txid) must be *** or 1-25 letters and digits',
      'field 62.05 (txid) must be *** in a dynamic code',
    ]);
    assert.equal(lines[0]!.includes('000201'), false, 'the code itself is not logged');
    assert.equal(lines[0]!.includes('qr.banco.example'), false, 'nor its location URL');
  });

  test('a code that fails the check: one warn line naming the one problem, not drawn', () => {
    for (const [reference, code, problem] of [
      ['ref-crc', CLEAN.slice(0, -4) + '4847', 'field 63 (CRC) does not match'],
      ['ref-v5', MALFORMED, 'field 30 has length 00 or runs past the end'],
    ]) {
      const { log, entries } = capture();
      logBrCodeWarnings(log, reference!, code!);
      const all = entries();
      assert.equal(all.length, 1, reference);
      assert.equal(all[0]!.reference, reference);
      assert.equal(all[0]!.drawn, false);
      assert.deepEqual(all[0]!.problems, [problem]);
      assert.match(String(all[0]!.msg), /^brcode_warning: .*the partner's image/);
    }
  });
});
