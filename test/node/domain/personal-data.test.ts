/** The rules of personal data (domain/personal-data.ts): the key's forms, sealing and opening, the keyed hash, masking, the cutoff. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { DataKeyError, PersonalDataCipher, isSealed, maskDocument, parseDataKey, retentionCutoff } from '../../../server/domain/personal-data.ts';
import { ConfigError, proxyConfig } from '../../../server/config/index.ts';
import { isDataKey } from '../../../server/config/settings.ts';

const HEX = 'ab'.repeat(32);
const BASE64 = Buffer.alloc(32, 1).toString('base64');

describe('PIX_DATA_KEY', () => {
  test('32 bytes as hex or base64 (url-safe too); anything else refused, by the setting and the cipher alike', () => {
    assert.deepEqual(parseDataKey(HEX), Buffer.alloc(32, 0xab));
    assert.deepEqual(parseDataKey(BASE64), Buffer.alloc(32, 1));
    assert.deepEqual(parseDataKey(Buffer.alloc(32, 0xfb).toString('base64url')), Buffer.alloc(32, 0xfb));
    for (const bad of ['', 'ab'.repeat(31), 'ab'.repeat(33), Buffer.alloc(31).toString('base64'), Buffer.alloc(33).toString('base64'), 'z'.repeat(64)]) {
      assert.equal(parseDataKey(bad), null, bad);
      assert.equal(isDataKey(bad), false, bad);
      assert.throws(() => new PersonalDataCipher(bad), DataKeyError);
    }
    for (const good of [HEX, BASE64]) assert.equal(isDataKey(good), true);
  });

  test('the proxy reads it and PIX_RETENTION_DAYS (default 180); a bad value is named, never repeated', () => {
    assert.equal(proxyConfig({}).retentionDays, 180);
    assert.equal(proxyConfig({}).dataKey, undefined);
    const config = proxyConfig({ PIX_DATA_KEY: HEX, PIX_RETENTION_DAYS: '30' });
    assert.deepEqual([config.dataKey, config.retentionDays], [HEX, 30]);
    assert.throws(
      () => proxyConfig({ PIX_DATA_KEY: 'secret-but-short', PIX_RETENTION_DAYS: '0' }),
      (error: Error) =>
        error instanceof ConfigError &&
        error.problems.some((p) => p.startsWith('PIX_DATA_KEY')) &&
        error.problems.some((p) => p.startsWith('PIX_RETENTION_DAYS')) &&
        !error.message.includes('secret-but-short'),
    );
  });
});

describe('sealing', () => {
  const cipher = new PersonalDataCipher(BASE64);

  test('each value sealed under its own IV, versioned, and opened again; a value in clear reads as it is', () => {
    const a = cipher.seal('529.982.247-25');
    const b = cipher.seal('529.982.247-25');
    assert.notEqual(a, b);
    assert.ok(isSealed(a) && a.startsWith('v1:'));
    assert.equal(cipher.open(a), '529.982.247-25');
    assert.equal(cipher.open('529.982.247-25'), '529.982.247-25');
    assert.equal(cipher.open(null), null);
    assert.equal(cipher.seal(null), null);
    // Without a key: kept as given.
    assert.equal(new PersonalDataCipher().seal('Maria'), 'Maria');
    assert.equal(new PersonalDataCipher().keyed, false);
  });

  test('a changed byte or another key is a DataKeyError, never the value', () => {
    const sealed = cipher.seal('52998224725');
    const bytes = Buffer.from(sealed.slice(3), 'base64');
    bytes[bytes.length - 1]! ^= 1;
    assert.throws(
      () => cipher.open(`v1:${bytes.toString('base64')}`),
      (error: Error) => error instanceof DataKeyError && !error.message.includes('52998224725'),
    );
    assert.throws(() => new PersonalDataCipher(HEX).open(sealed), /another key/);
    assert.throws(() => cipher.open('v1:AAAA'), /damaged/);
  });

  test('the keyed hash ignores punctuation and case, differs per key, and is absent without a key', () => {
    assert.equal(cipher.documentHash('529.982.247-25'), cipher.documentHash('52998224725'));
    assert.equal(cipher.documentHash('12.abc.345/01de-35'), cipher.documentHash('12ABC34501DE35'));
    assert.notEqual(cipher.documentHash('52998224725'), new PersonalDataCipher(HEX).documentHash('52998224725'));
    assert.match(cipher.documentHash('52998224725') ?? '', /^[0-9a-f]{64}$/);
    assert.equal(new PersonalDataCipher().documentHash('52998224725'), null);
  });
});

test('masks hide a document but its middle; the cutoff is the retention before now', () => {
  assert.equal(maskDocument('529.982.247-25'), '***.982.247-**');
  assert.equal(maskDocument('11.222.333/0001-81'), '**.222.333/0001-**');
  assert.equal(maskDocument('123'), '***');
  assert.equal(retentionCutoff(400 * 86_400_000, 180), 220 * 86_400_000);
});
