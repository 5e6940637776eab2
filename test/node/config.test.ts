/** The proxy's configuration: sandbox mode needs nothing; elsewhere every problem is listed at once. */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import {
  ConfigError,
  DEFAULTS,
  SANDBOX_DEFAULTS,
  SETTINGS,
  parseDotenv,
  perMinute,
  proxyConfig,
  resolveSettings,
  type Setting,
} from '../../server/config/index.ts';
import { renderSettingsTable, withSettingsTable } from '../../server/config/readme.ts';

const PRODUCTION = {
  PIX_BASE_URL: 'https://partner.example',
  PIX_EMAIL: 'shop@example.com',
  PIX_ACCESS_KEY: 'secret',
  PIX_USER_AGENT: 'Shop (dev@shop.example)',
  PIX_API_KEY: 'k'.repeat(40),
};

function problems(env: Record<string, string>): string[] {
  try {
    proxyConfig(env);
  } catch (error) {
    assert.ok(error instanceof ConfigError);
    return error.problems;
  }
  assert.fail('expected a ConfigError');
}

describe('proxy configuration', () => {
  test('sandbox mode needs nothing and has safe defaults', () => {
    const config = proxyConfig({});
    assert.equal(config.partner.sandbox, true);
    assert.equal(config.apiKey, SANDBOX_DEFAULTS.apiKey);
    assert.deepEqual(config.allowedOrigins, ['*']);
    assert.equal(config.openAmount, false, 'open amount is off by default');
    assert.equal(config.renewals, 3);
    assert.equal(config.expirationSeconds, 3600);
    assert.equal(config.dataDir, '.data');
    assert.equal(config.port, 8787);
    assert.equal(config.host, '127.0.0.1');
    assert.deepEqual(config.rateLimits, {
      create: { perMinute: 30, burst: 10 },
      status: { perMinute: 600, burst: 200 },
      webhook: { perMinute: 600, burst: 200 },
    });
    assert.equal(config.trustedProxies, 0);
    assert.equal(config.logLevel, 'info');
  });

  test('production settings are read', () => {
    const config = proxyConfig({
      ...PRODUCTION,
      PIX_ALLOWED_ORIGINS: 'https://shop.example, https://www.shop.example:8443 ,http://localhost:3000',
      PIX_OPEN_AMOUNT: 'true',
      PIX_OPEN_AMOUNT_MIN: '5',
      PIX_OPEN_AMOUNT_MAX: '500.50',
      PIX_RENEWALS: '0',
      PIX_CALLBACK_URL: 'https://shop.example/thanks',
      PIX_TRUSTED_PROXIES: '1',
      PIX_LOG_LEVEL: 'warn',
      PORT: '9000',
      HOST: '0.0.0.0',
    });
    assert.deepEqual(config.allowedOrigins, ['https://shop.example', 'https://www.shop.example:8443', 'http://localhost:3000']);
    assert.deepEqual(config.openAmount, { min: 5, max: 500.5 });
    assert.equal(config.renewals, 0);
    assert.equal(config.defaultCallback, 'https://shop.example/thanks');
    assert.deepEqual([config.trustedProxies, config.logLevel, config.port, config.host], [1, 'warn', 9000, '0.0.0.0']);
  });

  test('status stream caps: 20 per client address and 200 per payment by default; 0 is no cap; a bad one is named', () => {
    const defaults = proxyConfig({});
    assert.deepEqual([defaults.streamsPerClient, defaults.streamsPerPayment], [20, 200]);
    const set = proxyConfig({ PIX_STREAMS_PER_CLIENT: '4', PIX_STREAMS_PER_PAYMENT: '0' });
    assert.deepEqual([set.streamsPerClient, set.streamsPerPayment], [4, 0]);
    const list = problems({ PIX_STREAMS_PER_CLIENT: '-1', PIX_STREAMS_PER_PAYMENT: 'many' });
    assert.ok(list.some((p) => p.startsWith('PIX_STREAMS_PER_CLIENT must be a whole number')));
    assert.ok(list.some((p) => p.startsWith('PIX_STREAMS_PER_PAYMENT must be a whole number')));
  });

  test('outside the sandbox the API key is required', () => {
    const { PIX_API_KEY: _, ...withoutKey } = PRODUCTION;
    assert.ok(problems(withoutKey).some((p) => p.startsWith('PIX_API_KEY is required')));
    assert.ok(problems({ ...PRODUCTION, PIX_API_KEY: 'short' }).some((p) => p.startsWith('PIX_API_KEY must be at least 32')));
  });

  test('every problem is listed at once, the partner settings included', () => {
    const list = problems({
      PIX_BASE_URL: 'http://partner.example',
      PIX_EMAIL: 'shop@example.com',
      PIX_API_KEY: 'short',
      PIX_ALLOWED_ORIGINS: '*,https://shop.example/path,http://shop.example',
      PIX_OPEN_AMOUNT: 'maybe',
      PIX_OPEN_AMOUNT_MIN: '0.10',
      PIX_OPEN_AMOUNT_MAX: '20000',
      PIX_RENEWALS: '-1',
      PIX_CALLBACK_URL: 'http://shop.example/thanks',
      PIX_LOG_LEVEL: 'loud',
      PORT: '70000',
      PIX_TRUSTED_PROXIES: 'x',
    });
    const expected = [
      'PIX_BASE_URL must be an https:// URL',
      'PIX_USER_AGENT is required',
      'PIX_EMAIL and PIX_ACCESS_KEY go together',
      'PIX_API_KEY must be at least',
      'PIX_ALLOWED_ORIGINS may not be *',
      'PIX_ALLOWED_ORIGINS: https://shop.example/path is not an origin',
      'PIX_ALLOWED_ORIGINS: http://shop.example must be https://',
      'PIX_OPEN_AMOUNT must be true or false',
      'PIX_OPEN_AMOUNT_MIN must be an amount',
      'PIX_OPEN_AMOUNT_MAX must be an amount',
      'PIX_RENEWALS must be a whole number',
      'PIX_CALLBACK_URL must be an https:// URL',
      'PIX_LOG_LEVEL must be one of',
      'PORT must be a whole number',
      'PIX_TRUSTED_PROXIES must be a whole number',
    ];
    for (const start of expected)
      assert.ok(
        list.some((p) => p.startsWith(start)),
        `${start}\n  in: ${list.join('\n  ')}`,
      );
  });

  test('PIX_DATABASE_URL selects Postgres, with its pool and claim time; without it, SQLite', () => {
    assert.equal(proxyConfig({}).database, undefined, 'SQLite in PIX_DATA_DIR by default');
    const config = proxyConfig({
      ...PRODUCTION,
      PIX_DATABASE_URL: 'postgres://pix:s3cret-pw@db.internal:5432/pix?sslmode=require',
      PIX_DATABASE_POOL_SIZE: '4',
      PIX_CLAIM_SECONDS: '12',
    });
    assert.deepEqual(config.database, { url: 'postgres://pix:s3cret-pw@db.internal:5432/pix?sslmode=require', poolSize: 4, claimMs: 12_000 });
    assert.deepEqual(proxyConfig({ PIX_DATABASE_URL: 'postgresql://db/pix' }).database, { url: 'postgresql://db/pix', poolSize: 10, claimMs: 30_000 });
  });

  test('a bad PIX_DATABASE_URL is named, never repeated (it may hold a password)', () => {
    for (const url of ['mysql://u:s3cret-pw@db/pix', 'postgres://u:s3cret-pw@db', 'not a url s3cret-pw']) {
      const found = problems({ ...PRODUCTION, PIX_DATABASE_URL: url });
      assert.equal(found.length, 1, `${url}: ${found.join('; ')}`);
      assert.match(found[0]!, /^PIX_DATABASE_URL must be a postgres:\/\//);
      assert.ok(!found[0]!.includes('s3cret-pw'), 'the value is not repeated');
    }
    const bounds = problems({ ...PRODUCTION, PIX_DATABASE_URL: 'postgres://db/pix', PIX_CLAIM_SECONDS: '1', PIX_DATABASE_POOL_SIZE: '0' });
    assert.equal(bounds.length, 2, bounds.join('; '));
    assert.ok(bounds.some((p) => p.startsWith('PIX_CLAIM_SECONDS')) && bounds.some((p) => p.startsWith('PIX_DATABASE_POOL_SIZE')), bounds.join('; '));
  });

  test('open-amount bounds must be in order', () => {
    assert.ok(problems({ PIX_OPEN_AMOUNT: 'true', PIX_OPEN_AMOUNT_MIN: '100', PIX_OPEN_AMOUNT_MAX: '10' }).some((p) => p.includes('MIN must not be above')));
  });
});

describe('.env files', () => {
  test('comments, quotes and export lines read as dotenv reads them', () => {
    const parsed = parseDotenv(
      [
        '# the partner',
        'export PIX_EMAIL=loja@example.com   # the login',
        'PIX_ACCESS_KEY="abc # not a comment" # but this is',
        "PIX_USER_AGENT='Loja (dev@loja.example)'",
        'PIX_WEBHOOK_SECRET_PATH=abc#def',
        'PIX_RENEWALS = 2',
        'EMPTY=',
        'not a line',
      ].join('\n'),
    );
    assert.deepEqual(parsed, {
      PIX_EMAIL: 'loja@example.com',
      PIX_ACCESS_KEY: 'abc # not a comment',
      PIX_USER_AGENT: 'Loja (dev@loja.example)',
      PIX_WEBHOOK_SECRET_PATH: 'abc#def',
      PIX_RENEWALS: '2',
      EMPTY: '',
    });
  });
});

describe('the table of settings', () => {
  const table = Object.entries(SETTINGS) as [string, Setting][];
  const at = (root: unknown, path: string) => path.split('.').reduce<unknown>((node, key) => (node as Record<string, unknown>)[key], root);

  test("docs/configuration.md's table is the one rendered from the table (npm run docs:config rewrites it)", () => {
    const readme = readFileSync(new URL('../../docs/configuration.md', import.meta.url), 'utf8');
    assert.ok(readme.includes(renderSettingsTable()), 'docs/configuration.md differs from the table of settings: run npm run docs:config');
    assert.equal(withSettingsTable(readme), readme);
    for (const name of Object.keys(SETTINGS)) assert.ok(readme.includes(`| \`${name}\` |`), name);
  });

  test('each default is a value of its kind, spelt as docs/configuration.md shows it', () => {
    for (const [name, setting] of table) {
      if (setting.default === undefined) continue;
      const parsed = setting.kind.schema.safeParse(setting.kind.show(setting.default));
      assert.ok(parsed.success, name);
      assert.deepEqual(parsed.data, setting.default, name);
    }
  });

  test('each default lands in DEFAULTS where the table says, and an unset variable reads as it', () => {
    const sandbox = proxyConfig({});
    for (const [name, setting] of table) {
      if (setting.at === undefined) continue;
      assert.deepEqual(at(DEFAULTS, setting.at), setting.default, name);
      if (setting.for === 'proxy') assert.deepEqual(at(sandbox, setting.at), setting.default, name);
    }
    assert.deepEqual([DEFAULTS.reconcile.everyMs, DEFAULTS.cluster.claimMs, DEFAULTS.partnerReads.trustedMs], [60_000, 30_000, 10_000]);
  });

  test('a value set lands where the table says (seconds in milliseconds)', () => {
    const config = proxyConfig({
      PIX_STREAMS_PER_CLIENT: '7',
      PIX_RECONCILE_EVERY_S: '90',
      PIX_RECONCILE_TICK_MS: '250',
      PIX_RATE_LIMIT_WEBHOOK: '60',
      PIX_WEBHOOK_READ_INTERVAL_MS: '500',
    });
    assert.equal(config.streamsPerClient, 7);
    assert.deepEqual(config.reconcile, { tickMs: 250, everyMs: 90_000, nearMs: 10_000 });
    assert.deepEqual(config.rateLimits && config.rateLimits.webhook, { perMinute: 60, burst: 20 });
    assert.equal(config.webhookReadIntervalMs, 500);
  });

  test('every ranged number names its variable and its range when out of it', () => {
    for (const [name, setting] of table) {
      const range = /^(?:whole number|milliseconds|seconds), (\d+) to (\d+)$/.exec(setting.kind.type);
      if (!range || setting.for !== 'proxy') continue;
      const found = problems({ [name]: String(Number(range[2]) + 1) });
      assert.deepEqual(found, [`${name} must be a whole number from ${range[1]} to ${range[2]}`], name);
    }
  });
});

describe("createApp's settings, resolved once", () => {
  const at = (root: unknown, path: string) => path.split('.').reduce<unknown>((node, key) => (node as Record<string, unknown>)[key], root);

  test("nothing given: each of the table's app entries is its default, where the table lands it, and the limits are the variables' defaults", () => {
    const resolved = resolveSettings({});
    for (const [name, setting] of Object.entries(SETTINGS) as [string, Setting & { app?: true }][]) {
      if (setting.app) assert.deepEqual(at(resolved, setting.at!), setting.default, name);
    }
    assert.deepEqual(resolved.reconcile, DEFAULTS.reconcile);
    assert.deepEqual(resolved.rateLimits, {
      create: perMinute(DEFAULTS.rateLimitCreatePerMinute),
      status: perMinute(DEFAULTS.rateLimitStatusPerMinute),
      webhook: perMinute(DEFAULTS.webhookIntake.perSourcePerMinute),
    });
    assert.deepEqual([resolved.basePath, resolved.partnerReads, resolved.openAmount, resolved.allowedOrigins], ['/api', DEFAULTS.partnerReads, false, []]);
    assert.equal(resolved.merchantWebhook, undefined);
  });

  test('a group given in part keeps the defaults of the rest; a member given as undefined leaves its default', () => {
    const resolved = resolveSettings({
      reconcile: { tickMs: 100, everyMs: undefined },
      merchantWebhook: { url: 'https://shop.example/hook', secret: 's'.repeat(32), timeoutMs: 50 },
      rateLimits: { create: perMinute(3), status: perMinute(6) },
      webhookReadIntervalMs: 0,
      streams: false,
    });
    assert.deepEqual(resolved.reconcile, { ...DEFAULTS.reconcile, tickMs: 100 });
    assert.deepEqual(resolved.merchantWebhook, { ...DEFAULTS.merchantWebhook, url: 'https://shop.example/hook', secret: 's'.repeat(32), timeoutMs: 50 });
    assert.deepEqual(resolved.rateLimits && resolved.rateLimits.webhook, perMinute(DEFAULTS.webhookIntake.perSourcePerMinute));
    assert.equal(resolved.partnerReads.trustedMs, 0);
    assert.equal(resolved.streams, false);
    assert.equal(resolveSettings({ rateLimits: false }).rateLimits, false);
  });

  test("proxyConfig's reading resolves to what it read", () => {
    const config = proxyConfig({ ...PRODUCTION, PIX_RENEWALS: '1', PIX_RATE_LIMIT_CREATE: '0', PIX_WEBHOOK_READ_INTERVAL_MS: '500' });
    const resolved = resolveSettings(config);
    assert.deepEqual([resolved.renewals, resolved.apiKey, resolved.partnerReads.trustedMs], [1, PRODUCTION.PIX_API_KEY, 500]);
    assert.deepEqual(resolved.rateLimits && resolved.rateLimits.create, perMinute(Number.MAX_SAFE_INTEGER));
  });
});
