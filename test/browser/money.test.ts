/**
 * src/money.ts writes reais without Intl for the widget's languages: it must write exactly what this
 * engine's Intl.NumberFormat writes, on many amounts, or the amount on screen would change with it.
 */
import { expect } from '@open-wc/testing';
import { formatBrl } from '../../src/money.ts';

describe('reais without Intl', () => {
  for (const tag of ['pt-BR', 'en', 'es']) {
    it(`writes what Intl writes in ${tag}`, () => {
      const intl = new Intl.NumberFormat(tag, { style: 'currency', currency: 'BRL', currencyDisplay: 'narrowSymbol' });
      const amounts = [
        0, 0.01, 0.1, 0.2, 1, 9.99, 10.5, 12.34, 99.9, 100, 999.99, 1000, 1234.5, 9999.99, 10000, 12345.67, 99999.99, 100000, 123456.78, 999999.99, 1000000,
        1234567.89,
      ];
      // And random cents up to a million reais (a seeded generator: the same amounts every run).
      let seed = 7;
      for (let i = 0; i < 3000; i++) {
        seed = (seed * 48271) % 2147483647;
        amounts.push((seed % 100_000_000) / 100);
      }
      for (const value of amounts) expect(formatBrl(value, tag), `${value}`).to.equal(intl.format(value));
    });
  }

  it('leaves other tags to Intl', () => {
    expect(formatBrl(10, 'en-GB')).to.equal(null);
    expect(formatBrl(10, 'fr')).to.equal(null);
  });
});
