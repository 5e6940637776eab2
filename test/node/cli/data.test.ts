/**
 * `pix-checkout data export|erase|purge` on both stores (a SQLite file in PIX_DATA_DIR, a throwaway
 * Postgres in PIX_DATABASE_URL), through main() as a terminal runs it: the records written by the
 * store as the proxy writes them (sealed under PIX_DATA_KEY), the answers read from stdout and the
 * exit code. The document is checked and never printed but in the export.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { runCli } from '../../support/cli.ts';
import { paymentOutcome } from '../../../server/domain/outcomes.ts';
import { PersonalDataCipher, sealedCustomer } from '../../../server/domain/personal-data.ts';
import { PARTNER_STATUS } from '../../../server/partner/wire.ts';
import { openStore } from '../../../server/store/open.ts';
import { checkoutRecord, paymentRecord, payoutRecord } from '../../support/records.ts';
import { startPostgres, type RunningPostgres } from '../../support/postgres.ts';
import { tempDirs } from '../../support/temp-dirs.ts';
import { databaseDeadlines } from '../../../server/config/database.ts';

const KEY = Buffer.alloc(32, 3).toString('hex');
const ANA = '52998224725';
const ANA_PRINTED = '529.982.247-25';
const BRUNO = '11144477735';

const tempDir = tempDirs('pix-data-cli-');
let postgres: RunningPostgres | undefined;
before(async () => {
  postgres = await startPostgres();
});
after(async () => {
  await postgres?.stop();
});

function cli(args: string[], env: Record<string, string | undefined>) {
  return runCli(['data', ...args], env);
}

const kinds: { name: string; env(): Promise<Record<string, string>> }[] = [
  {
    name: 'SQLite',
    env: async () => {
      return { PIX_DATA_DIR: tempDir() };
    },
  },
  {
    name: 'Postgres',
    env: async () => {
      assert.ok(postgres);
      return { PIX_DATA_DIR: '/nonexistent', PIX_DATABASE_URL: await postgres.createDatabase() };
    },
  },
];

/** Ana's paid checkout (sealed under KEY, created long ago) and Bruno's open one, written as the proxy writes them. */
async function seed(env: Record<string, string>): Promise<void> {
  const store = await openStore({ dataDir: env.PIX_DATA_DIR!, databaseUrl: env.PIX_DATABASE_URL, deadlines: databaseDeadlines(), cacheSize: 0 });
  try {
    const cipher = new PersonalDataCipher(KEY);
    const ana = 'co_ANAAAAAAAAAAAAAAAAAAAAAA';
    await store.checkouts.create(checkoutRecord({ id: ana, orderId: 'order-ana', createdAt: 1_000, ...sealedCustomer(cipher, 'Ana Lima', ANA_PRINTED) }));
    await store.checkouts.attachPayment(ana, paymentRecord('pay-ana', 1_000, { checkoutId: ana, valueCents: 4990 }), 0, null);
    await store.payments.updateStatus('pay-ana', PARTNER_STATUS.approved, true, 2_000, paymentOutcome);
    const bruno = 'co_BRUNOAAAAAAAAAAAAAAAAAA';
    await store.checkouts.create(checkoutRecord({ id: bruno, orderId: 'order-bruno', createdAt: Date.now(), ...sealedCustomer(cipher, 'Bruno', BRUNO) }));
  } finally {
    await store.close();
  }
}

/** Beside seed(): Bruno's payment in a status of no known meaning, and two payouts to Ana's CPF key (one refused up front, one being sent now). */
async function seedPayouts(env: Record<string, string>): Promise<void> {
  const store = await openStore({ dataDir: env.PIX_DATA_DIR!, databaseUrl: env.PIX_DATABASE_URL, deadlines: databaseDeadlines(), cacheSize: 0 });
  try {
    await store.checkouts.attachPayment(
      'co_BRUNOAAAAAAAAAAAAAAAAAA',
      paymentRecord('pay-bruno', Date.now(), { checkoutId: 'co_BRUNOAAAAAAAAAAAAAAAAAA', partnerStatus: 9 }),
      0,
      null,
    );
    const toAna = { kind: 'customer' as const, pixKey: ANA, pixKeyType: 'CPF', customerDocument: ANA };
    await store.payouts.create(
      payoutRecord({ id: REFUSED_PAYOUT, idempotencyKey: 'key-refused', transactionId: 'ptx-refused', state: 'refused', ...toAna }),
      PARTNER_STATUS.approved,
    );
    await store.payouts.create(
      payoutRecord({ id: SENDING_PAYOUT, idempotencyKey: 'key-sending', transactionId: 'ptx-sending', state: 'sending', ...toAna }),
      PARTNER_STATUS.approved,
    );
  } finally {
    await store.close();
  }
}
const REFUSED_PAYOUT = `tr_${'R'.repeat(24)}`;
const SENDING_PAYOUT = `tr_${'S'.repeat(24)}`;

for (const kind of kinds) {
  describe(`cli: data (${kind.name})`, () => {
    test("export gives each payment's status meaning beside its number; erase --dry-run lists what erase would erase and erases nothing", async () => {
      const env = { ...(await kind.env()), PIX_DATA_KEY: KEY };
      await seed(env);
      await seedPayouts(env);
      type Exported = {
        checkouts: { name: string | null; payments: { reference: string; partner_status: number; partner_status_meaning: string }[] }[];
        payouts: { transfer_id: string; pix_key: string }[];
      };
      const exportOf = async (document: string) => JSON.parse((await cli(['export', '--document', document], env)).out) as Exported;
      const meanings = (data: Exported) => data.checkouts.flatMap((c) => c.payments.map((p) => [p.reference, p.partner_status, p.partner_status_meaning]));
      assert.deepEqual(meanings(await exportOf(ANA)), [['pay-ana', 2, 'approved']]);
      assert.deepEqual(meanings(await exportOf(BRUNO)), [['pay-bruno', 9, 'unknown']]);

      const plan = await cli(['erase', '--document', ANA, '--dry-run', '--json'], env);
      assert.equal(plan.code, 0, plan.err);
      assert.deepEqual(JSON.parse(plan.out), {
        document: '***.982.247-**',
        dry_run: true,
        would_erase: {
          checkouts: [{ checkout_id: 'co_ANAAAAAAAAAAAAAAAAAAAAAA', order_id: 'order-ana', created_at: new Date(1_000).toISOString() }],
          payouts: [{ transfer_id: REFUSED_PAYOUT, kind: 'payout', state: 'refused', created_at: new Date(1_000).toISOString() }],
        },
        in_flight: [{ transfer_id: SENDING_PAYOUT, kind: 'payout' }],
      });
      const text = await cli(['erase', '--document', ANA_PRINTED, '--dry-run'], env);
      assert.equal(text.code, 0, text.err);
      assert.match(
        text.out,
        /^Would erase the personal data of \*\*\*\.982\.247-\*\* \(--dry-run: nothing erased\): 1 checkout\(s\) and 1 payout\(s\) or refund\(s\)\.$/m,
      );
      assert.match(text.out, /^ {2}checkout co_ANAAAAAAAAAAAAAAAAAAAAAA {2}order order-ana .*: name and document$/m);
      assert.match(text.out, new RegExp(`^ {2}payout ${REFUSED_PAYOUT} {2}refused .*: Pix key$`, 'm'));
      assert.match(text.out, new RegExp(`^ {2}payout ${SENDING_PAYOUT}: being sent now, left as it is$`, 'm'));
      assert.equal(
        [ANA, ANA_PRINTED, 'Ana Lima'].some((value) => `${plan.out}${text.out}`.includes(value)),
        false,
        'no personal value printed',
      );

      // Nothing was erased: the export still opens her name and her key.
      const still = await exportOf(ANA);
      assert.deepEqual(
        [still.checkouts.map((c) => c.name), still.payouts.map((p) => [p.transfer_id, p.pix_key])],
        [
          ['Ana Lima'],
          [
            [REFUSED_PAYOUT, ANA],
            [SENDING_PAYOUT, ANA],
          ],
        ],
      );
      // The erase then does what the dry run listed.
      const erased = JSON.parse((await cli(['erase', '--document', ANA, '--json'], env)).out) as unknown;
      assert.deepEqual(erased, { document: '***.982.247-**', erased: { checkouts: 1, payouts: 1 }, in_flight: 1 });
      assert.equal((await cli(['export', '--document', ANA, '--dry-run'], env)).code, 2, '--dry-run goes with erase only');
    });

    test('export prints everything held about the document, opened; erase clears it and keeps the money; export then finds nothing', async () => {
      const env = { ...(await kind.env()), PIX_DATA_KEY: KEY };
      await seed(env);
      const exported = await cli(['export', '--document', ANA], env);
      assert.equal(exported.code, 0, exported.err);
      const data = JSON.parse(exported.out) as {
        document: string;
        checkouts: { order_id: string; name: string; document: string; value: number; payments: { reference: string; final: boolean }[] }[];
      };
      assert.equal(data.document, '***.982.247-**');
      assert.deepEqual(
        data.checkouts.map((c) => [c.order_id, c.name, c.document, c.value, c.payments.map((p) => [p.reference, p.final])]),
        [['order-ana', 'Ana Lima', ANA_PRINTED, 49.9, [['pay-ana', true]]]],
      );

      const erased = await cli(['erase', '--document', ANA_PRINTED], env);
      assert.equal(erased.code, 0, erased.err);
      assert.match(erased.out, /1 checkout\(s\) and 0 payout\(s\)/);
      assert.equal(erased.out.includes(ANA) || erased.out.includes(ANA_PRINTED), false, 'the document is not printed whole');

      const afterwards = JSON.parse((await cli(['export', '--document', ANA], env)).out) as { checkouts: unknown[] };
      assert.deepEqual(afterwards.checkouts, []);
      // Bruno's is untouched.
      const bruno = JSON.parse((await cli(['export', '--document', BRUNO], env)).out) as { checkouts: { name: string }[] };
      assert.deepEqual(
        bruno.checkouts.map((c) => c.name),
        ['Bruno'],
      );
    });

    test('purge erases what is past PIX_RETENTION_DAYS once final and says so', async () => {
      const env = { ...(await kind.env()), PIX_DATA_KEY: KEY, PIX_RETENTION_DAYS: '1' };
      await seed(env);
      const purged = await cli(['purge', '--json'], env);
      assert.equal(purged.code, 0, purged.err);
      const summary = JSON.parse(purged.out) as { erased: { checkouts: number } };
      // Ana's (final, from 1970) is erased; Bruno's (created now) is kept.
      assert.equal(summary.erased.checkouts, 1);
      assert.equal((JSON.parse((await cli(['export', '--document', ANA], env)).out) as { checkouts: unknown[] }).checkouts.length, 0);
      assert.equal((JSON.parse((await cli(['export', '--document', BRUNO], env)).out) as { checkouts: unknown[] }).checkouts.length, 1);
    });

    test('without a key sealed documents are not found, and it says why; a malformed key or a document that is not a CPF or CNPJ is refused (exit 2) without echoing it', async () => {
      const env = await kind.env();
      await seed(env);
      // Without the key the sealed documents are not found, and the command says why.
      const keyless = await cli(['export', '--document', ANA], env);
      assert.equal(keyless.code, 0);
      assert.match(keyless.err, /PIX_DATA_KEY is not set/);
      assert.deepEqual((JSON.parse(keyless.out) as { checkouts: unknown[] }).checkouts, []);

      const badKey = await cli(['export', '--document', ANA], { ...env, PIX_DATA_KEY: 'not-a-key' });
      assert.equal(badKey.code, 2);
      assert.match(badKey.err, /PIX_DATA_KEY/);
      assert.equal(badKey.err.includes('not-a-key'), false, 'the key is never repeated');

      const invalid = await cli(['erase', '--document', '529.982.247-26'], env);
      assert.equal(invalid.code, 2);
      assert.match(invalid.err, /valid CPF .* or CNPJ/);
      assert.equal(invalid.err.includes('529.982.247-26') || invalid.err.includes('52998224726'), false);

      assert.equal((await cli(['export'], env)).code, 2);
      assert.equal((await cli(['forget', '--document', ANA], env)).code, 2);
    });
  });
}

test('a stored document under another key: export exits 1 with a sentence naming no value', async () => {
  const dir = tempDir();
  const store = await openStore({ dataDir: dir, cacheSize: 0 });
  // A checkout found by its clear twin's hash but sealed under another key: a key changed between writes.
  const other = new PersonalDataCipher(Buffer.alloc(32, 8).toString('hex'));
  const hash = new PersonalDataCipher(KEY).documentHash(ANA);
  await store.checkouts.create(
    checkoutRecord({ id: 'co_OTHERKEYAAAAAAAAAAAAAAA', orderId: 'order-other', name: other.seal('Ana'), document: other.seal(ANA), documentHash: hash }),
  );
  await store.close();
  const { code, err, out } = await cli(['export', '--document', ANA], { PIX_DATA_DIR: dir, PIX_DATA_KEY: KEY });
  assert.equal(code, 1);
  assert.match(err, /does not open with PIX_DATA_KEY/);
  assert.equal(out, '');
  assert.equal(err.includes(ANA), false);
});
