/**
 * The partner client, the command line, the proxy and its webhook receiver against the
 * sandbox in each of its dialects (server/sandbox/dialects.ts), `numbered` being the one with another
 * status numbering. Real HTTPS to the sandbox, a real SQLite store (the dev stack's), real HTTP for the
 * proxy and the notifications; time moves through the sandbox clock, never by waiting.
 *
 * Then the money-safety cases: the proxy under a wrong status numbering (the default 1/2/3 against
 * `numbered`'s 0/1/2, where a canceled 2 reads as approved) never shows a canceled or pending payment
 * paid, and the explicit words of a notification from an authenticated intake (a secret path),
 * confirmed by the partner, still settle. Words never override a verified code, and from an open
 * intake they count for nothing.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { Agent, request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import Database from 'libsql';
import { parseBrCode } from '../../../src/shared/brcode.ts';
import { TransferView } from '../../../src/shared/payouts.ts';
import { runCli } from '../../support/cli.ts';
import { startDevStack, type DevStack, type DevStackOptions } from '../../../server/dev-stack.ts';
import type { OutcomeEvent } from '../../../server/domain/outcomes.ts';
import { createLogger } from '../../../server/log.ts';
import { createPartnerClient, type ObservedAnswer, type PartnerClientOptions, type PartnerLogEntry } from '../../../server/partner/client.ts';
import { formatStatusCodes, parseStatusCodes } from '../../../server/partner/status-codes.ts';
import { CANCELED_MARGIN_MS, asStatusCodes } from '../../../server/domain/numbering/status-numbering.ts';
import { PARTNER_PATHS, PARTNER_STATUS } from '../../../server/partner/wire.ts';
import { createClock } from '../../../server/sandbox/clock.ts';
import { DIALECT_NAMES, SANDBOX_DIALECTS, type DialectName } from '../../../server/sandbox/dialects.ts';
import { startSandbox, type RunningSandbox } from '../../../server/sandbox/server.ts';
import { DEFAULT_ACCOUNT } from '../../../server/sandbox/state.ts';
import { DB_FILE_NAME } from '../../../server/store/sqlite/sqlite-store.ts';
import { rejection, stackControl, verifyStatusCodes, waitFor } from '../../support/checks.ts';

/** 2030-01-01T00:00:00Z: the client suites' sandbox clock is frozen here and moved by the tests. */
const T0 = Date.UTC(2030, 0, 1);
const UA = 'Loja Teste (dev@loja.example)';
const ANA_EMAIL = 'ana@cliente.example';
/** KYC pending: every transfer to her is refused up front. */
const BRUNO = { document: '234.567.891-73', email: 'bruno@cliente.example' };
/** Approved KYC, but her bank cancels. */
const ELISA = { document: '567.891.234-82', email: 'elisa@cliente.example' };
const HOOK = 'https://shop.example/hook';
/** The last path segment of an authenticated webhook intake (PIX_WEBHOOK_SECRET_PATH): only then do a notification's words count. */
const SECRET_PATH = 'd1a1ec75a1b2c3d4e5f6a7b8';
/** Each dialect's new-format words for a paid payment. */
const PAID_WORDS: Record<DialectName, string> = {
  default: 'payment.approved',
  terse: 'PAYMENT_PAID',
  numbered: 'deposit.paid',
  swapped: 'payment.approved',
  expiring: 'payment.approved',
};
/** The proxy stacks' staleness window: longer than any test waits, so only a webhook (or a moved clock) changes a status. */
const STALE_MS = 60_000;

/** How each dialect answers what the spec does not show, as far as these suites look (server/sandbox/README.md, "Dialects"). */
const EXPECTED: Record<
  DialectName,
  {
    /** Where the login's token is (ObservedAnswer.found.token). */
    tokenAt: string;
    tenantAt: string;
    /** Whether the create's answer has a created_at. */
    createdAtInCreate: boolean;
    /** HEAD .../check for a pending and a canceled payment. */
    headPending: { httpStatus: number; hint: string };
    headCanceled: { httpStatus: number; hint: string };
    /** Whether PATCH notification-url echoes the URL. */
    notificationEchoed: boolean;
    /** A key of each webhook format's payload, and the new format's event words for a paid payment. */
    oldKey: string;
    newPaid: string;
  }
> = {
  default: {
    tokenAt: 'data.access_token',
    tenantAt: 'data.id',
    createdAtInCreate: true,
    headPending: { httpStatus: 202, hint: 'pending' },
    headCanceled: { httpStatus: 410, hint: 'canceled' },
    notificationEchoed: true,
    oldKey: 'external_reference',
    newPaid: '"event":"payment.approved"',
  },
  terse: {
    tokenAt: 'data.token',
    tenantAt: 'data.tenant_id',
    createdAtInCreate: false,
    // "Exists": 200 for any known payment, which the assumed mapping reads as paid. A hint only.
    headPending: { httpStatus: 200, hint: 'paid' },
    headCanceled: { httpStatus: 200, hint: 'paid' },
    notificationEchoed: false,
    oldKey: 'reference',
    newPaid: '"event":"PAYMENT_PAID"',
  },
  numbered: {
    tokenAt: 'accessToken',
    tenantAt: 'tenant.id',
    createdAtInCreate: false,
    headPending: { httpStatus: 202, hint: 'pending' },
    headCanceled: { httpStatus: 410, hint: 'canceled' },
    notificationEchoed: false,
    oldKey: 'externalReference',
    newPaid: '"event_type":"deposit.paid"',
  },
  // The default in every way but approved and canceled (server/sandbox/dialects.ts): the same shapes.
  get swapped() {
    return this.default;
  },
  // The default with an expired and a returned code, and transfers numbered apart: the same shapes.
  get expiring() {
    return this.default;
  },
};

/** The verdicts of the three required meanings (a dialect's setting may name more). */
const required = (codes: Record<string, unknown>) => ({ pending: codes.pending, approved: codes.approved, canceled: codes.canceled });

/** The setting a client sets for a dialect (its own, when its numbering has more than three states). */
function dialectSetting(dialect: DialectName) {
  const d = SANDBOX_DIALECTS[dialect];
  return d.setting
    ? { statusCodes: parseStatusCodes(d.setting.payments)!, transferStatusCodes: parseStatusCodes(d.setting.transfers)! }
    : { statusCodes: { ...d.statusCodes }, transferStatusCodes: { ...(d.transferStatusCodes ?? d.statusCodes) } };
}

/** The sandbox's control API over HTTPS, trusting its certificate: JSON in and out, a 2xx required. */
function controlOf(sandbox: RunningSandbox) {
  const agent = new Agent({ ca: sandbox.ca, keepAlive: true });
  const call = (method: string, path: string, body?: unknown): Promise<any> =>
    new Promise((resolve, reject) => {
      const payload = body === undefined ? undefined : JSON.stringify(body);
      const headers: Record<string, string> = payload === undefined ? {} : { 'content-type': 'application/json' };
      const req = request(new URL(`/_sandbox${path}`, sandbox.url), { method, headers, agent }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          const status = res.statusCode ?? 0;
          if (status < 200 || status > 299) return reject(new Error(`${method} ${path}: ${status} ${text}`));
          resolve(text ? JSON.parse(text) : undefined);
        });
        res.on('error', reject);
      });
      req.on('error', reject);
      req.end(payload);
    });
  return Object.assign(call, { close: () => agent.destroy() });
}

/** A dev stack on a dialect, its store read through SQLite, and every outcome it emits. */
interface Proxied {
  stack: DevStack;
  db: Database.Database;
  outcomes: OutcomeEvent[];
  /** Log lines at warn and above, parsed. */
  logs: { level: number; msg: string }[];
  control(method: string, path: string, body?: unknown): Promise<any>;
  /** POST /api/payments (open amount): the reference. */
  create(value?: number): Promise<string>;
  /** GET /api/payments/:ref: the browser's view of the status. */
  status(reference: string): Promise<string>;
  /** Results of the stored notifications naming this reference, oldest first (null: not processed yet). */
  events(reference: string): { result: string | null; raw_body: string }[];
  notify(body: unknown): Promise<Response>;
  close(): Promise<void>;
}

/** A payout through the proxy's API (POST /api/transfers, API key, a new Idempotency-Key): status and body. */
async function payout(p: Proxied, body: unknown): Promise<{ status: number; transfer: TransferView }> {
  const res = await fetch(`${p.stack.apiUrl}/transfers`, {
    method: 'POST',
    headers: { authorization: `Bearer ${p.stack.apiKey}`, 'content-type': 'application/json', 'idempotency-key': randomUUID() },
    body: JSON.stringify(body),
  });
  const json = (await res.json()) as unknown;
  return { status: res.status, transfer: TransferView.parse(json) };
}

const transferStatus = async (p: Proxied, id: string) => (await p.stack.pix.payouts.get(id)).status;

async function openProxied(options: DevStackOptions): Promise<Proxied> {
  const outcomes: OutcomeEvent[] = [];
  const logs: { level: number; msg: string }[] = [];
  const stack = await startDevStack({
    background: false,
    staleAfterMs: STALE_MS,
    watchIntervalMs: STALE_MS,
    onOutcome: (event) => outcomes.push(event),
    logger: createLogger({ level: 'warn', destination: { write: (line: string) => void logs.push(JSON.parse(line)) } }),
    ...options,
  });
  const db = new Database(join(stack.dataDir, DB_FILE_NAME), { readonly: true });
  return {
    stack,
    db,
    outcomes,
    logs,
    control: (method, path, body) => stackControl(stack, method, path, body),
    async create(value = 10) {
      const res = await fetch(`${stack.apiUrl}/payments`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ value }) });
      const view = await res.json();
      assert.equal(res.status, 201, JSON.stringify(view));
      assert.equal(view.status, 'pending');
      return view.reference as string;
    },
    async status(reference) {
      const res = await fetch(`${stack.apiUrl}/payments/${reference}`);
      const view = await res.json();
      assert.equal(res.status, 200, JSON.stringify(view));
      return view.status as string;
    },
    events: (reference) =>
      db.prepare('SELECT result, raw_body FROM webhook_events WHERE raw_body LIKE ? ORDER BY id').all(`%${reference}%`) as {
        result: string | null;
        raw_body: string;
      }[],
    notify: (body) => fetch(stack.webhookUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
    async close() {
      db.close();
      await stack.close();
    },
  };
}

const ready = async (stack: DevStack) => (await fetch(`${stack.url}/ready`)).json();
/** The status the proxy stored, in its own numbering (PARTNER_STATUS). */
const partnerStatusOf = async (p: Proxied, reference: string) => (await p.stack.store.payments.get(reference))?.partnerStatus;
/** The proxy shows the payment as anything but paid: its view, its store, its outcomes. */
async function neverPaid(p: Proxied, reference: string): Promise<void> {
  assert.notEqual(await p.status(reference), 'paid');
  assert.notEqual(await partnerStatusOf(p, reference), PARTNER_STATUS.approved);
  assert.equal(
    p.outcomes.some((e) => e.data.reference === reference && e.type === 'payment.paid'),
    false,
    'no payment.paid outcome',
  );
}
/** Every stored notification naming the reference has been processed. */
const processed =
  (p: Proxied, reference: string, n = 1) =>
  () => {
    const events = p.events(reference);
    return events.length >= n && events.every((e) => e.result !== null);
  };

for (const dialect of DIALECT_NAMES) {
  const expected = EXPECTED[dialect];

  describe(`dialect ${dialect}: the partner client, outcome unknown, the command line`, () => {
    let sandbox: RunningSandbox;
    let control: ReturnType<typeof controlOf>;
    /** The dialect's numbering, as the sandbox says it. */
    let codes: Readonly<Record<'pending' | 'approved' | 'canceled', number>>;
    let dir: string;
    let env: Record<string, string>;

    before(async () => {
      sandbox = await startSandbox({
        dialect,
        clock: createClock(() => T0),
        settleIntervalMs: 0,
        webhooks: { timeoutMs: 2000, retryDelayMs: 5 },
        bank: { answerAfterSeconds: 5, lateAnswerAfterSeconds: 600 },
        // Its own copy: one test changes the tenant.
        account: { ...DEFAULT_ACCOUNT, tenant: { ...DEFAULT_ACCOUNT.tenant } },
      });
      control = controlOf(sandbox);
      const view = await control('GET', '/dialect');
      assert.equal(view.name, dialect);
      codes = view.status_codes;
      dir = await mkdtemp(join(tmpdir(), `pix-dialect-${dialect}-`));
      await writeFile(join(dir, 'ca.pem'), sandbox.ca);
      env = {
        PIX_BASE_URL: sandbox.url,
        PIX_EMAIL: DEFAULT_ACCOUNT.email,
        PIX_ACCESS_KEY: DEFAULT_ACCOUNT.accessKey,
        PIX_USER_AGENT: UA,
        PIX_CA_FILE: join(dir, 'ca.pem'),
        PIX_TOKEN_FILE: join(dir, 'token.json'),
        PIX_STATUS_CODES: formatStatusCodes(asStatusCodes(dialectSetting(dialect).statusCodes)),
        PIX_TRANSFER_STATUS_CODES: formatStatusCodes(asStatusCodes(dialectSetting(dialect).transferStatusCodes)),
      };
    });
    after(async () => {
      control.close();
      await sandbox.close();
      await rm(dir, { recursive: true, force: true });
    });

    function client(extra: Partial<PartnerClientOptions> = {}) {
      const log: PartnerLogEntry[] = [];
      const observed: ObservedAnswer[] = [];
      const partner = createPartnerClient({
        baseUrl: sandbox.url,
        ca: sandbox.ca,
        userAgent: UA,
        credentials: { email: DEFAULT_ACCOUNT.email, accessKey: DEFAULT_ACCOUNT.accessKey },
        backoffMs: 10,
        log: (entry) => log.push(entry),
        observe: (answer) => observed.push(answer),
        ...extra,
      });
      const count = (operation: string) => log.filter((e) => e.operation === operation).length;
      return { partner, log, observed, count };
    }

    function cli(args: string[], overrides: Record<string, string | undefined> = {}) {
      return runCli(args, { ...env, ...overrides });
    }

    test('the dialect numbers statuses as its description says', () => {
      assert.deepEqual(codes, { ...SANDBOX_DIALECTS[dialect].statusCodes });
      if (dialect === 'numbered') assert.deepEqual(codes, { pending: 0, approved: 1, canceled: 2 });
      else if (dialect === 'swapped') assert.deepEqual(codes, { pending: 1, approved: 3, canceled: 2 });
      else if (dialect === 'expiring') assert.deepEqual(codes, { pending: 1, approved: 2, canceled: 4 });
      else assert.deepEqual(codes, { ...PARTNER_STATUS });
    });

    describe('client', () => {
      test('login: the token is read where the dialect puts it, once; getTenant gives the tenant id', async () => {
        const { partner, observed, count } = client();
        await partner.login();
        const tenant = await partner.getTenant();
        assert.equal(tenant.id, DEFAULT_ACCOUNT.tenant.id);
        // The tenant was asked for with the token read from the login: a misread one would be refused (401) and logged in again.
        assert.equal(count('login'), 1);
        assert.equal(observed.find((o) => o.operation === 'login')?.found.token, expected.tokenAt);
        assert.equal(observed.find((o) => o.operation === 'getTenant')?.found.id, expected.tenantAt);
      });

      test('createPayment: reference, a valid BR Code, createdAt a number or null, status the dialect’s pending code', async () => {
        const { partner } = client();
        const created = await partner.createPayment({ value: 10.5, description: 'Pedido 13' });
        const stored = sandbox.state.payments.get(created.externalReference);
        assert.ok(stored, 'the reference is the sandbox’s');
        assert.equal(stored.transactionId, created.transactionId);
        const code = parseBrCode(created.pixKey);
        assert.ok(code.ok, 'the BR Code parses and its CRC holds');
        assert.equal(code.code.amount, '10.50');
        if (expected.createdAtInCreate) assert.equal(created.createdAt, stored.createdAt);
        else assert.equal(created.createdAt, null, 'the answer has no created_at: null, not a guess');
        assert.deepEqual(created.status, { code: codes.pending, word: null });
      });

      test('getPayment: status {code, word} in the dialect’s numbering, value a number, through pending, paid and canceled', async () => {
        const { partner } = client();
        const { externalReference } = await partner.createPayment({ value: 10.5 });
        const pending = await partner.getPayment(externalReference);
        assert.deepEqual(pending.status, { code: codes.pending, word: null });
        // terse sends "10.50": read as the number.
        assert.equal(pending.value, 10.5);
        assert.ok(
          pending.createdAt !== null && Math.abs(pending.createdAt - sandbox.state.payments.get(externalReference)!.createdAt) < 1000,
          'pending.createdAt !== null && Math.abs(pending.createdAt - sandbox.sta',
        );
        const paid = await control('POST', `/payments/${externalReference}/pay`);
        assert.equal(paid.status, codes.approved);
        assert.deepEqual((await partner.getPayment(externalReference)).status, { code: codes.approved, word: null });

        const other = (await partner.createPayment({ value: 1 })).externalReference;
        assert.equal((await control('POST', `/payments/${other}/cancel`)).status, codes.canceled);
        assert.deepEqual((await partner.getPayment(other)).status, { code: codes.canceled, word: null });
      });

      test('checkPayment (HEAD) is {httpStatus, hint}: a hint, which in terse says 200 for a pending payment too', async () => {
        const { partner } = client();
        const pending = (await partner.createPayment({ value: 2 })).externalReference;
        assert.deepEqual(await partner.checkPayment(pending), expected.headPending);
        assert.deepEqual((await partner.getPayment(pending)).status, { code: codes.pending, word: null }, 'the details say pending, whatever HEAD said');
        const canceled = (await partner.createPayment({ value: 2 })).externalReference;
        await control('POST', `/payments/${canceled}/cancel`);
        assert.deepEqual(await partner.checkPayment(canceled), expected.headCanceled);
        await control('POST', `/payments/${pending}/pay`);
        assert.deepEqual(await partner.checkPayment(pending), { httpStatus: 200, hint: 'paid' });
        assert.deepEqual(await partner.checkPayment('no-such-reference'), { httpStatus: 404, hint: 'not_found' });
      });

      test('transfers: pending, then the bank’s answer read in the dialect’s numbering (approved, and canceled)', async () => {
        const { partner } = client();
        const transferCodes = SANDBOX_DIALECTS[dialect].transferStatusCodes ?? codes;
        const approved = await partner.transferToKey({ value: 25, pix_key: ANA_EMAIL });
        assert.deepEqual(approved.status, { code: transferCodes.pending, word: null });
        assert.equal(approved.value, 25);
        assert.equal(approved.pixKeyType, 'EMAIL');
        assert.equal(sandbox.state.transfers.get(approved.externalReference)?.transactionId, approved.transactionId);
        const canceled = await partner.solicitTransferForCustomer({ customer_document: ELISA.document, value: 3, pix_key: ELISA.email, pix_key_type: 'EMAIL' });
        assert.deepEqual(canceled.status, { code: transferCodes.pending, word: null });

        await control('POST', '/clock/advance', { seconds: 10 });
        const settled = await partner.checkTransfer(approved.externalReference);
        assert.deepEqual(settled.status, { code: transferCodes.approved, word: null });
        assert.match(settled.end2end ?? '', /^E\d{8}/);
        assert.deepEqual((await partner.checkTransfer(canceled.externalReference)).status, { code: transferCodes.canceled, word: null });
      });

      test('a KYC refusal: kind refused, reason kyc_not_approved and a readable message from the dialect’s error body', async () => {
        const { partner } = client();
        const error = await rejection(
          partner.solicitTransferForCustomer({ customer_document: BRUNO.document, value: 5, pix_key: BRUNO.email, pix_key_type: 'EMAIL' }),
        );
        assert.equal(error.kind, 'refused');
        assert.equal(error.details.status, 403);
        assert.equal(error.details.reason, 'kyc_not_approved');
        assert.match(error.details.upstreamMessage ?? '', /KYC is pending/);
        assert.match(error.message, /refused \(HTTP 403\): The customer's KYC is pending/);
        assert.equal(error.message.includes(BRUNO.document), false);
        assert.notEqual(error.details.outcomeUnknown, true, 'a refusal is an answer: nothing happened');
      });

      test('invalid data the client cannot see (a tenant the service no longer has): 422 refused, the field named from the dialect’s body', async () => {
        const { partner, count } = client();
        await partner.getTenant();
        // The partner changed the tenant after the client cached it: only the service can tell.
        const original = sandbox.state.account.tenant;
        sandbox.state.account.tenant = { id: '0d9c8b7a-6f5e-4d3c-8b2a-1f0e9d8c7b6a', name: 'Outra Loja' };
        try {
          const before = sandbox.state.payments.size;
          const error = await rejection(partner.createPayment({ value: 4 }));
          assert.equal(error.kind, 'refused');
          assert.equal(error.details.status, 422);
          assert.match(error.details.fields?.tenant_id ?? '', /is not the tenant of this partner/);
          assert.ok(error.details.upstreamMessage, 'a readable message, whatever the body’s shape');
          assert.notEqual(error.details.outcomeUnknown, true);
          assert.equal(sandbox.state.payments.size, before, 'nothing created');
          assert.equal(count('createPayment'), 1, 'not repeated');
        } finally {
          sandbox.state.account.tenant = original;
        }
      });

      test('setNotificationUrl: any 2xx is success; confirmed only when the answer echoes the URL', async () => {
        const { partner } = client();
        const result = await partner.setNotificationUrl({ notification_url: HOOK, notify_type: 2 });
        assert.deepEqual(result, { notificationUrl: HOOK, notifyType: 2, confirmed: expected.notificationEchoed });
        assert.deepEqual((await control('GET', '/notification-url')).notification, { notification_url: HOOK, notify_type: 2, notify_type_given: true });
        await control('DELETE', '/notification-url');
      });

      test('a refused token: one new login, and the call succeeds', async () => {
        const { partner, count } = client();
        const { externalReference } = await partner.createPayment({ value: 2 });
        sandbox.state.tokens.clear();
        const record = await partner.getPayment(externalReference);
        assert.equal(record.externalReference, externalReference);
        assert.equal(count('login'), 2);
      });
    });

    describe('outcome unknown: a 2xx create whose answer cannot be read', () => {
      const fault = (path: string) => sandbox.state.faults.add({ kind: 'malformed_json', rate: 1, path_prefix: path, latency_ms: null, status: null });
      const transfersWith = (transactionId: string | undefined) => [...sandbox.state.transfers.values()].filter((t) => t.transactionId === transactionId);

      test('a transfer: outcome_unknown with the transaction_id of the transfer the sandbox did create, the body kept, no retry', async () => {
        const { partner, count } = client();
        await partner.getTenant();
        fault(PARTNER_PATHS.transferToKey);
        try {
          const error = await rejection(partner.transferToKey({ value: 25, pix_key: ANA_EMAIL }));
          assert.equal(error.kind, 'outcome_unknown');
          assert.equal(error.details.outcomeUnknown, true);
          assert.ok(error.details.status !== undefined && error.details.status >= 200 && error.details.status <= 299, `a 2xx: ${error.details.status}`);
          assert.equal(typeof error.details.rawBody, 'string');
          assert.ok(error.details.rawBody!.length > 0, 'the answer is kept for the operator');
          const created = transfersWith(error.details.transactionId);
          assert.equal(created.length, 1, 'the sandbox created exactly one transfer with that transaction_id');
          assert.equal(count('transferToKey'), 1, 'sent once');
          // It was carried out: the bank approves it, whatever the client could read.
          await control('POST', '/clock/advance', { seconds: 10 });
          assert.equal(created[0]!.status, PARTNER_STATUS.approved);
        } finally {
          sandbox.state.faults.reset();
        }
      });

      test('a payment: outcome_unknown with its transaction_id, exactly one payment created', async () => {
        const { partner, count } = client();
        await partner.getTenant();
        fault(PARTNER_PATHS.createPayment);
        try {
          const error = await rejection(partner.createPayment({ value: 3, transaction_id: `order-${dialect}-1` }));
          assert.equal(error.kind, 'outcome_unknown');
          assert.equal(error.details.outcomeUnknown, true);
          assert.equal(error.details.transactionId, `order-${dialect}-1`);
          assert.ok(error.details.rawBody, 'error.details.rawBody');
          assert.equal([...sandbox.state.payments.values()].filter((p) => p.transactionId === `order-${dialect}-1`).length, 1);
          assert.equal(count('createPayment'), 1);
        } finally {
          sandbox.state.faults.reset();
        }
      });

      test('the CLI: transfer create exits 3, says OUTCOME UNKNOWN and names the transaction_id', async () => {
        const known = new Set(sandbox.state.transfers.keys());
        fault(PARTNER_PATHS.transferToKey);
        try {
          const { code, out, err } = await cli(['transfer', 'create', '--value', '25', '--key', ANA_EMAIL]);
          assert.equal(code, 3, err);
          assert.match(out, /status\s+unknown/);
          assert.match(err, /OUTCOME UNKNOWN/);
          const created = [...sandbox.state.transfers.values()].filter((t) => !known.has(t.externalReference));
          assert.equal(created.length, 1, 'one transfer created, not retried');
          assert.ok(created[0]!.transactionId, 'created[0]!.transactionId');
          assert.ok(err.includes(`transaction_id: ${created[0]!.transactionId}`), err);
        } finally {
          sandbox.state.faults.reset();
        }
      });
    });

    describe('command line (PIX_STATUS_CODES set to the dialect’s numbering)', () => {
      test('login', async () => {
        const { code, out, err } = await cli(['login']);
        assert.equal(code, 0, err);
        assert.match(out, new RegExp(`tenant id\\s+${DEFAULT_ACCOUNT.tenant.id}`));
      });

      test('payment create, status (from the details; HEAD a hint only), then paid', async () => {
        const created = await cli(['payment', 'create', '--value', '12.30', '--json']);
        assert.equal(created.code, 0, created.err);
        const payment = JSON.parse(created.out);
        assert.ok(sandbox.state.payments.has(payment.reference), 'sandbox.state.payments.has(payment.reference)');
        assert.ok(parseBrCode(payment.brcode).ok, 'parseBrCode(payment.brcode).ok');
        assert.deepEqual([payment.status.code, payment.status.meaning], [codes.pending, 'pending']);

        const status = await cli(['payment', 'status', payment.reference]);
        assert.equal(status.code, 0, status.err);
        assert.match(status.out, new RegExp(`status\\s+pending \\(${codes.pending}\\) \\(from the details`));
        const head = expected.headPending;
        assert.match(status.out, new RegExp(`quick check\\s+HTTP ${head.httpStatus} \\(${head.hint} under the assumed mapping: a hint only\\)`));

        await control('POST', `/payments/${payment.reference}/pay`);
        const paid = await cli(['payment', 'status', payment.reference]);
        assert.match(paid.out, new RegExp(`status\\s+approved \\(${codes.approved}\\) \\(from the details`));
        const shown = await cli(['payment', 'show', payment.reference]);
        assert.match(shown.out, /value\s+12\.30/);
      });

      test('transfer create, then status after the bank answers', async () => {
        const created = await cli(['transfer', 'create', '--value', '25', '--key', ANA_EMAIL, '--json']);
        assert.equal(created.code, 0, created.err);
        const transfer = JSON.parse(created.out);
        assert.equal(transfer.status, 'pending');
        assert.equal(created.err, '', 'no warning: the new transfer is pending under the setting');
        await control('POST', '/clock/advance', { seconds: 10 });
        const status = await cli(['transfer', 'status', transfer.partner_reference]);
        const transferCodes = SANDBOX_DIALECTS[dialect].transferStatusCodes ?? codes;
        assert.match(status.out, new RegExp(`status\\s+approved \\(${transferCodes.approved}\\) \\(as PIX_TRANSFER_STATUS_CODES reads it`));
      });

      if (dialect === 'numbered') {
        test('PIX_STATUS_CODES left at the default: payment create says the new payment’s code is not the configured pending one', async () => {
          const { code, err } = await cli(['payment', 'create', '--value', '5'], { PIX_STATUS_CODES: undefined });
          assert.equal(code, 0, err);
          assert.match(err, /warning: the new payment's status is 0, but PIX_STATUS_CODES says pending is 1/, 'the evidence of a wrong setting is named');
          assert.match(err, /pix-checkout doctor --create/);
        });

        test('PIX_STATUS_CODES left at the default: transfer create checks no code (transfers verify no numbering); the payout waits for its outcome', async () => {
          const { code, out, err } = await cli(['transfer', 'create', '--value', '25', '--key', 'ana@cliente.example', '--json'], {
            PIX_STATUS_CODES: undefined,
          });
          assert.equal(code, 0, err);
          assert.doesNotMatch(err, /a new transfer/, "a transfer proves nothing about the payments' numbering");
          const shown = JSON.parse(out) as { status: string };
          assert.equal(shown.status, 'pending', "the proxy's own state: sent, its outcome awaited");
        });
      }

      test('webhook set exits 0 (terse answers 204 with no body)', async () => {
        const { code, out, err } = await cli(['webhook', 'set', HOOK]);
        assert.equal(code, 0, err);
        assert.match(out, new RegExp(`notification url\\s+${HOOK}`));
        assert.match(out, expected.notificationEchoed ? /answer\s+the service echoed the URL/ : /answer\s+accepted \(2xx\) without echoing it/);
        assert.equal((await control('GET', '/notification-url')).notification.notification_url, HOOK);
      });
    });
  });

  describe(`dialect ${dialect}: the proxy and its webhook receiver (statusCodes set to the dialect’s numbering)`, () => {
    let p: Proxied;
    before(async () => {
      p = await openProxied({ dialect, ...dialectSetting(dialect) });
    });
    after(() => p.close());

    const storedStatus = (reference: string) => partnerStatusOf(p, reference);
    const final = (reference: string) => async () => (await p.stack.store.payments.get(reference))?.final === true;
    const paidEvents = (reference: string) => p.outcomes.filter((e) => e.data.reference === reference && e.type === 'payment.paid');

    test('a payment made through the proxy is pending and verifies the pending code; paid in time, shown paid by the webhook in this dialect’s payload, it verifies approved', async () => {
      const reference = await p.create(12.34);
      assert.equal(await p.status(reference), 'pending');
      const report = await ready(p.stack);
      assert.equal(report.status, 'ready');
      assert.equal(report.checks.status_codes, 'unverified');
      assert.deepEqual(required(report.status_codes.codes), { pending: 'verified', approved: 'unverified', canceled: 'unverified' });

      await p.control('POST', `/payments/${reference}/pay`);
      // Stale after 60 s and nothing polls: only the sandbox's notification can bring it this soon.
      await waitFor('the payment final', final(reference));
      await waitFor('the notification processed', processed(p, reference));
      assert.equal(await p.status(reference), 'paid');
      assert.deepEqual(required(p.stack.pix.numbering.report().codes), { pending: 'verified', approved: 'verified', canceled: 'unverified' });
      assert.equal(paidEvents(reference).length, 1);
      const events = p.events(reference);
      assert.deepEqual(
        events.map((e) => e.result),
        ['applied'],
      );
      assert.ok(Object.hasOwn(JSON.parse(events[0]!.raw_body), expected.oldKey), `the dialect's old payload: ${events[0]!.raw_body}`);
    });

    test('with no webhook, the read after staleness shows paid', async () => {
      const reference = await p.create(3);
      const drop = await p.control('POST', '/faults', { kind: 'drop_webhook', rate: 1 });
      try {
        await p.control('POST', `/payments/${reference}/pay`);
        assert.equal(await p.status(reference), 'pending', 'within the staleness window the stored status is served');
        await p.control('POST', '/clock/advance', { seconds: STALE_MS / 1000 + 1 });
        assert.equal(await p.status(reference), 'paid');
        assert.equal(await storedStatus(reference), PARTNER_STATUS.approved);
        assert.equal(p.events(reference).length, 0, 'no notification came');
      } finally {
        await p.control('DELETE', `/faults/${drop.fault.id}`);
      }
    });

    test('canceled by the clock an hour past expiration, once a payment paid in time verified approved: verifies canceled, shown canceled, never paid', async () => {
      const paid = await p.create(2);
      const later = await p.create(2);
      const next = await p.create(2);
      await p.control('POST', `/payments/${paid}/pay`);
      await waitFor('the paid one final', final(paid));

      await p.control('POST', '/clock/advance', { seconds: 3600 + 3600 + CANCELED_MARGIN_MS / 1000 + 1 });
      assert.equal(await p.status(later), 'canceled');
      assert.equal(await storedStatus(later), PARTNER_STATUS.canceled);
      assert.equal(p.stack.pix.numbering.report().state, 'verified');
      assert.equal(await p.status(next), 'canceled');
      for (const reference of [later, next]) assert.equal(paidEvents(reference).length, 0);
    });

    test('a payout through the proxy: pending, approved by the bank’s notification in this dialect, told once naming the transfer', async () => {
      const { status, transfer } = await payout(p, { value: 25, pix_key: ANA_EMAIL, reference: `payout-${dialect}` });
      assert.equal(status, 201);
      assert.equal(transfer.status, 'pending');
      assert.ok(transfer.partner_reference, 'transfer.partner_reference');
      await p.control('POST', `/transfers/${transfer.partner_reference}/approve`);
      await waitFor('the payout approved', async () => (await transferStatus(p, transfer.transfer_id)) === 'approved');
      const told = p.outcomes.filter((e) => e.type === 'transfer.approved' && e.data.transfer_id === transfer.transfer_id);
      assert.equal(told.length, 1);
      assert.equal(told[0]!.data.transfer_reference, `payout-${dialect}`);
    });

    test('a payout refused for KYC, read from this dialect’s error body: refused with its reason; a lost answer: unknown, sent once', async () => {
      const refused = await payout(p, { value: 5, pix_key: BRUNO.email, customer_document: BRUNO.document });
      assert.deepEqual([refused.status, refused.transfer.status, refused.transfer.reason], [201, 'refused', 'kyc_not_approved']);
      const before = p.stack.sandbox.state.transfers.size;
      const fault = await p.control('POST', '/faults', { kind: 'malformed_json', rate: 1, path_prefix: PARTNER_PATHS.transferToKey, times: 1 });
      try {
        const lost = await payout(p, { value: 6, pix_key: ANA_EMAIL });
        assert.deepEqual([lost.status, lost.transfer.status], [201, 'unknown']);
        assert.equal(p.stack.sandbox.state.transfers.size, before + 1);
      } finally {
        await p.control('DELETE', `/faults/${fault.fault.id}`).catch(() => undefined);
      }
    });

    describe('webhook receiver', () => {
      test('the sandbox’s own deliveries in the old and the new format are stored, confirmed and applied', async () => {
        for (const notifyType of [1, 2] as const) {
          await p.stack.partner.setNotificationUrl({ notification_url: p.stack.webhookUrl, notify_type: notifyType });
          const paid = await p.create(5);
          const canceled = await p.create(5);
          await p.control('POST', `/payments/${paid}/pay`);
          // Canceled as the spec says: an hour after its expiration.
          await p.control('POST', '/clock/advance', { seconds: 3600 + 3600 + CANCELED_MARGIN_MS / 1000 + 1 });
          await waitFor(`both final (notify_type ${notifyType})`, async () => (await final(paid)()) && (await final(canceled)()));
          await waitFor('both notifications processed', () => processed(p, paid)() && processed(p, canceled)());
          assert.equal(await p.status(paid), 'paid');
          assert.equal(await p.status(canceled), 'canceled');
          const events = p.events(paid);
          assert.deepEqual(
            events.map((e) => e.result),
            ['applied'],
          );
          if (notifyType === 1) assert.ok(Object.hasOwn(JSON.parse(events[0]!.raw_body), expected.oldKey), events[0]!.raw_body);
          else assert.ok(events[0]!.raw_body.includes(expected.newPaid), events[0]!.raw_body);
          assert.deepEqual(
            p.events(canceled).map((e) => e.result),
            ['applied'],
          );
        }
      });

      test('a notification posted by hand naming the reference under an unusual field: 2xx, and applied once the sandbox says paid', async () => {
        const reference = await p.create(7);
        const drop = await p.control('POST', '/faults', { kind: 'drop_webhook', rate: 1 });
        const body = { data: { externalReference: reference }, event: 'PAYMENT_PAID' };
        try {
          // Before the payment: kept and confirmed with the partner, who says pending; not applied,
          // and kept (`waiting`) to be confirmed again.
          const early = await p.notify(body);
          assert.ok(early.status >= 200 && early.status <= 299, String(early.status));
          await waitFor('the early one processed', processed(p, reference));
          assert.deepEqual(
            p.events(reference).map((e) => e.result),
            ['waiting'],
          );
          assert.equal(await p.status(reference), 'pending');

          await p.control('POST', `/payments/${reference}/pay`);
          const answer = await p.notify(body);
          assert.ok(answer.status >= 200 && answer.status <= 299, String(answer.status));
          await waitFor('the payment final', final(reference));
          await waitFor('the second one processed', () => p.events(reference).filter((e) => e.result === 'applied').length === 2);
          assert.equal(await p.status(reference), 'paid');
          // The kept one is settled by the confirmation that applied the second.
          assert.deepEqual(
            p.events(reference).map((e) => e.result),
            ['applied', 'applied'],
          );
        } finally {
          await p.control('DELETE', `/faults/${drop.fault.id}`);
        }
      });
    });
  });

  describe(`dialect ${dialect}: a notification's words never override a verified code`, () => {
    test('canceled at the partner, then "paid" by an authenticated notification: never shown paid; the contradiction makes the numbering a mismatch', async () => {
      // A secret path: the intake is authenticated, so the notification's words are heard.
      const p = await openProxied({ dialect, ...dialectSetting(dialect), webhooks: { secretPath: SECRET_PATH } });
      try {
        // Every code verified: a payment paid in time (approved), another canceled an hour past its expiration (canceled).
        const paid = await p.create(9);
        const canceled = await p.create(9);
        const reference = await p.create(9);
        await p.control('POST', `/payments/${paid}/pay`);
        await waitFor('the paid one final', async () => (await p.stack.store.payments.get(paid))?.final === true);
        await p.control('POST', '/faults', { kind: 'drop_webhook', rate: 1 });
        await p.control('POST', '/clock/advance', { seconds: 3600 + 3600 + CANCELED_MARGIN_MS / 1000 + 1 });
        assert.equal(await p.status(canceled), 'canceled');
        assert.equal(p.stack.pix.numbering.report().state, 'verified');
        const answer = await p.notify({ external_reference: reference, event: PAID_WORDS[dialect] });
        assert.equal(answer.status, 202);
        await waitFor('the notification processed', processed(p, reference));
        assert.notEqual(await partnerStatusOf(p, reference), PARTNER_STATUS.approved, 'a canceled payment shown paid');
        assert.notEqual(await p.status(reference), 'paid');
        assert.equal(p.outcomes.filter((e) => e.type === 'payment.paid' && e.data.reference === reference).length, 0);
        // The partner's own (authenticated) words contradict the setting's reading of its code: the
        // setting may have approved and canceled swapped, so no code decides any more.
        assert.equal(p.stack.pix.numbering.report().state, 'mismatch');
        assert.match(p.stack.pix.numbering.report().problem ?? '', /said approved for payment \S+, whose status is \d+, which was verified as canceled/);
      } finally {
        await p.close();
      }
    });
  });
}

describe('a wrong status numbering (numbered’s 0/1/2 read with the default 1/2/3): fails safe', () => {
  let p: Proxied;
  before(async () => {
    // No statusCodes: the default numbering, where numbered's canceled 2 means approved. An
    // authenticated intake (a secret path), so explicit notification words may still settle.
    p = await openProxied({ dialect: 'numbered', webhooks: { secretPath: SECRET_PATH } });
  });
  after(() => p.close());

  test('a fresh payment’s code 0 is not the configured pending 1: an error names it, /ready reports the mismatch', async () => {
    await p.create(5);
    const report = await ready(p.stack);
    assert.equal(report.checks.status_codes, 'mismatch');
    assert.ok(
      report.warnings?.some((w: string) => w.includes('PIX_STATUS_CODES') && w.includes('status 0')),
      JSON.stringify(report.warnings),
    );
    assert.ok(
      p.logs.some((line) => line.level >= 50 && line.msg.includes('has status 0') && line.msg.includes('PIX_STATUS_CODES')),
      'p.logs.some((line) => line.level >= 50 && line.msg.includes(’has statu',
    );
  });

  test('a payment canceled at the sandbox (2, "approved" under the setting) is never shown paid: webhook, stale read, confirm, reconciler', async () => {
    const reference = await p.create(5);
    await p.control('POST', `/payments/${reference}/cancel`);
    // The sandbox's old-format notification carries the bare code 2, no words: kept to be confirmed again.
    await waitFor('the notification processed', processed(p, reference));
    assert.equal(p.events(reference)[0]!.result, 'waiting');
    await neverPaid(p, reference);
    await p.control('POST', '/clock/advance', { seconds: STALE_MS / 1000 + 1 });
    await neverPaid(p, reference);
    const confirmed = await p.stack.pix.payments.reads.confirm(reference);
    assert.notEqual(confirmed?.partnerStatus, PARTNER_STATUS.approved);
    await p.stack.pix.reconciler.runOnce();
    await neverPaid(p, reference);
    assert.equal(p.stack.sandbox.state.payments.get(reference)?.status, PARTNER_STATUS.canceled, 'the sandbox did cancel it');
  });

  test('a payout canceled by the bank (numbered’s 2, "approved" under the setting) is never shown approved nor told approved', async () => {
    const { transfer } = await payout(p, { value: 7, pix_key: ANA_EMAIL });
    assert.equal(transfer.status, 'pending');
    await p.control('POST', `/transfers/${transfer.partner_reference}/cancel`);
    await p.stack.pix.reconciler.runOnce();
    await p.control('POST', '/clock/advance', { seconds: 3600 });
    await p.stack.pix.reconciler.runOnce();
    assert.notEqual(await transferStatus(p, transfer.transfer_id), 'approved');
    assert.equal(p.outcomes.filter((e) => e.type === 'transfer.approved' && e.data.transfer_id === transfer.transfer_id).length, 0);
  });

  test('a pending payment is never shown paid, even when a notification says so', async () => {
    const reference = await p.create(5);
    await p.control('POST', '/clock/advance', { seconds: STALE_MS / 1000 + 1 });
    assert.equal(await p.status(reference), 'pending');
    await p.stack.pix.reconciler.runOnce();
    assert.equal((await p.notify({ transaction: { externalReference: reference }, event_type: 'deposit.paid' })).status, 202);
    await waitFor('the notification processed', processed(p, reference));
    assert.equal(p.events(reference)[0]!.result, 'waiting');
    await neverPaid(p, reference);
    assert.equal((await p.stack.store.payments.get(reference))?.final, false);
  });

  test('explicit words still settle: the new format’s deposit.paid and deposit.cancelled, confirmed by the partner no longer reporting pending', async () => {
    await p.stack.partner.setNotificationUrl({ notification_url: p.stack.webhookUrl, notify_type: 2 });
    const paid = await p.create(6);
    const canceled = await p.create(6);
    await p.control('POST', `/payments/${paid}/pay`);
    await waitFor('the paid one final', async () => (await p.stack.store.payments.get(paid))?.final === true);
    await waitFor('its notification processed', processed(p, paid));
    assert.equal(await p.status(paid), 'paid');
    assert.ok(p.events(paid)[0]!.raw_body.includes('"event_type":"deposit.paid"'), 'p.events(paid)[0]!.raw_body.includes(’"event_type":"deposit.paid"’)');
    assert.equal(p.outcomes.filter((e) => e.data.reference === paid && e.type === 'payment.paid').length, 1);

    await p.control('POST', `/payments/${canceled}/cancel`);
    await waitFor('the canceled one final', async () => (await p.stack.store.payments.get(canceled))?.final === true);
    assert.equal(await p.status(canceled), 'canceled');
    await neverPaid(p, canceled);
    // Still a mismatch: fixing the setting is the operator's job.
    assert.equal(p.stack.pix.numbering.report().state, 'mismatch');
  });

  test('once an approval taught the approved code (1), a canceled payment (2) said "paid" is still never shown paid', async () => {
    // After the test above: the proxy learned that 1 is approved.
    const reference = await p.create(5);
    const drop = await p.control('POST', '/faults', { kind: 'drop_webhook', rate: 1 });
    try {
      await p.control('POST', `/payments/${reference}/cancel`);
      assert.equal((await p.notify({ transaction: { externalReference: reference }, event_type: 'deposit.paid' })).status, 202);
      await waitFor('the notification processed', processed(p, reference));
      await neverPaid(p, reference);
    } finally {
      await p.control('DELETE', `/faults/${drop.fault.id}`);
    }
  });

  test('an open intake: words from whoever can post decide nothing, so a canceled payment said "paid" is never shown paid', async () => {
    const open = await openProxied({ dialect: 'numbered' });
    try {
      const reference = await open.create(5);
      await open.control('POST', '/faults', { kind: 'drop_webhook', rate: 1 });
      await open.control('POST', `/payments/${reference}/cancel`);
      assert.equal((await open.notify({ transaction: { externalReference: reference }, event_type: 'deposit.paid' })).status, 202);
      await waitFor('the notification processed', processed(open, reference));
      await neverPaid(open, reference);
    } finally {
      await open.close();
    }
  });

  test('the mismatch outlives a restart: before any new payment, a pending payment said "paid" is never shown paid', async () => {
    const sandbox = await startSandbox({ dialect: 'numbered' });
    const dataDir = await mkdtemp(join(tmpdir(), 'pix-dialect-restart-'));
    const options = { sandbox, dataDir, webhooks: { secretPath: SECRET_PATH } };
    try {
      const first = await openProxied(options);
      let reference: string;
      try {
        reference = await first.create(5);
        assert.equal(first.stack.pix.numbering.report().state, 'mismatch');
      } finally {
        await first.close();
      }
      const second = await openProxied(options);
      try {
        assert.equal((await ready(second.stack)).checks.status_codes, 'mismatch', 'known at once, not unverified');
        assert.equal((await second.notify({ transaction: { externalReference: reference }, event_type: 'deposit.paid' })).status, 202);
        await waitFor('the notification processed', processed(second, reference));
        assert.equal(sandbox.state.payments.get(reference)?.status, PARTNER_STATUS.pending, 'still pending at the partner');
        await neverPaid(second, reference);
      } finally {
        await second.close();
      }
    } finally {
      await sandbox.close();
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});

describe('approved and canceled swapped (the swapped dialect’s 1/3/2 read with the default 1/2/3): a paid payment is never shown canceled, nor a canceled one paid', () => {
  test('the pending code alone verifies nothing else: each final code proves itself or shows the mismatch, and words still settle', async () => {
    // No statusCodes: the default numbering, whose pending 1 is the partner's too. An authenticated intake (a secret path).
    const p = await openProxied({ dialect: 'swapped', webhooks: { secretPath: SECRET_PATH } });
    const eventsOf = (reference: string, type: string) => p.outcomes.filter((e) => e.data.reference === reference && e.type === type);
    try {
      // Canceled by the partner an hour past its expiration (its code 2, the setting's approved), before any payment was paid.
      const canceled = await p.create(8);
      await p.control('POST', '/clock/advance', { seconds: 3600 + 3600 + CANCELED_MARGIN_MS / 1000 + 1 });
      await waitFor('its notification processed', processed(p, canceled));
      assert.notEqual(await p.status(canceled), 'paid');
      await neverPaid(p, canceled);
      assert.equal(p.stack.pix.numbering.report().codes.pending, 'verified', 'by the new payment');
      assert.equal(p.stack.pix.numbering.report().codes.approved, 'unverified', 'a final code after the hour may be a late payment: it proves nothing');

      // Paid in time (its code 3, the setting's canceled): only approved can be final this early, and 3 is not the configured 2.
      const paid = await p.create(8);
      await p.control('POST', `/payments/${paid}/pay`);
      await waitFor('its notification processed', processed(p, paid));
      assert.notEqual(await p.status(paid), 'canceled');
      assert.notEqual(await partnerStatusOf(p, paid), PARTNER_STATUS.canceled);
      assert.equal(eventsOf(paid, 'payment.canceled').length, 0);

      const report = await ready(p.stack);
      assert.equal(report.checks.status_codes, 'mismatch');
      assert.ok(
        report.warnings?.some(
          (w: string) => w.includes('PIX_STATUS_CODES') && w.includes('status code 3 (listed canceled) is a mismatch') && w.includes('never canceled'),
        ),
        JSON.stringify(report.warnings),
      );
      assert.ok(
        p.logs.some((line) => line.level >= 50 && line.msg.includes('payment status code 3 does not match PIX_STATUS_CODES')),
        'an error names the code and the setting',
      );

      // Words from the authenticated intake still settle, each the right way: 3 learned as approved, then 2 believed canceled.
      assert.equal((await p.notify({ external_reference: paid, event: 'payment.approved' })).status, 202);
      await waitFor('the approval processed', processed(p, paid, 2));
      assert.equal(await p.status(paid), 'paid');
      assert.equal(eventsOf(paid, 'payment.paid').length, 1);
      assert.equal((await p.notify({ external_reference: canceled, event: 'payment.canceled' })).status, 202);
      await waitFor('the cancellation processed', processed(p, canceled, 2));
      assert.equal(await p.status(canceled), 'canceled');
      await neverPaid(p, canceled);
      assert.equal(p.stack.pix.numbering.report().state, 'mismatch', 'still a mismatch: fixing the setting is the operator’s job');
    } finally {
      await p.close();
    }
  });

  test('with PIX_STATUS_CODES set to its numbering, every code proves itself: pending, approved paid in time, canceled an hour past expiry', async () => {
    const p = await openProxied({ dialect: 'swapped', statusCodes: { ...SANDBOX_DIALECTS.swapped.statusCodes } });
    try {
      const paid = await p.create(4);
      const canceled = await p.create(4);
      await p.control('POST', `/payments/${paid}/pay`);
      await waitFor('the paid one final', async () => (await p.stack.store.payments.get(paid))?.final === true);
      await p.control('POST', '/clock/advance', { seconds: 3600 + 3600 + CANCELED_MARGIN_MS / 1000 + 1 });
      await waitFor('the canceled one final', async () => (await p.stack.store.payments.get(canceled))?.final === true);
      assert.deepEqual([await p.status(paid), await p.status(canceled)], ['paid', 'canceled']);
      const report = await ready(p.stack);
      assert.equal(report.checks.status_codes, 'verified');
      assert.deepEqual(report.status_codes, {
        configured: 'pending=1,approved=3,canceled=2',
        codes: { pending: 'verified', approved: 'verified', canceled: 'verified' },
        transfers: 'ok',
        // Sandbox mode: the in-process sandbox states its transfer numbering (the setting's, for the swapped dialect).
        transfer_codes: {
          state: 'verified',
          configured: 'pending=1,approved=3,canceled=2',
          codes: { pending: 'verified', approved: 'verified', canceled: 'verified' },
        },
      });
    } finally {
      await p.close();
    }
  });
});

describe('the verdicts outlive a restart', () => {
  test('on the same SQLite store, every code proved before a restart is verified at once after it', async () => {
    const sandbox = await startSandbox({ dialect: 'swapped' });
    const dataDir = await mkdtemp(join(tmpdir(), 'pix-verdicts-restart-'));
    const options = { sandbox, dataDir, statusCodes: { ...SANDBOX_DIALECTS.swapped.statusCodes } };
    try {
      const first = await openProxied(options);
      try {
        await verifyStatusCodes(first.stack);
      } finally {
        await first.close();
      }
      const second = await openProxied(options);
      try {
        const report = await ready(second.stack);
        assert.equal(report.checks.status_codes, 'verified', 'known at once, not unverified');
        assert.deepEqual(report.status_codes.codes, { pending: 'verified', approved: 'verified', canceled: 'verified' });
      } finally {
        await second.close();
      }
    } finally {
      await sandbox.close();
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});

describe('transfers: their outcome comes from the bank, never from the create’s answer; a check contradicting the notification is a mismatch', () => {
  test('a create answered with the approved code (verified by payments) leaves the payout pending; the bank’s later cancellation decides', async () => {
    // A partner whose transfer create answers with its approved code already: the spec says the result comes later.
    const eager = {
      ...SANDBOX_DIALECTS.default,
      name: 'eager',
      transferAccepted: (t: Parameters<(typeof SANDBOX_DIALECTS)['default']['transferAccepted']>[0]) => {
        const answer = SANDBOX_DIALECTS.default.transferAccepted(t);
        const body = answer.body as { data: Record<string, unknown> };
        return { ...answer, body: { ...body, data: { ...body.data, status: PARTNER_STATUS.approved } } };
      },
    };
    const p = await openProxied({ dialect: eager });
    try {
      await verifyStatusCodes(p.stack);
      const { status, transfer } = await payout(p, { value: 9, pix_key: ELISA.email, customer_document: ELISA.document });
      assert.equal(status, 201);
      assert.equal(transfer.status, 'pending', 'not approved from the create’s answer');
      assert.equal(await transferStatus(p, transfer.transfer_id), 'pending');
      assert.equal(p.outcomes.filter((e) => e.type === 'transfer.approved').length, 0);
      // Elisa's bank cancels: that outcome, by its notification, is the one recorded.
      await p.control('POST', '/clock/advance', { seconds: 10 });
      await waitFor('the payout canceled', async () => (await transferStatus(p, transfer.transfer_id)) === 'canceled');
      assert.equal(p.outcomes.filter((e) => e.type === 'transfer.approved').length, 0);
    } finally {
      await p.close();
    }
  });

  test('a transfer approved at the partner, said canceled by an authenticated notification: neither applied; an error and /ready name the transfer code in mismatch', async () => {
    const p = await openProxied({ dialect: 'default', webhooks: { secretPath: SECRET_PATH } });
    try {
      await verifyStatusCodes(p.stack);
      await p.control('POST', '/faults', { kind: 'drop_webhook', rate: 1 });
      const { transfer } = await payout(p, { value: 11, pix_key: ANA_EMAIL });
      await p.control('POST', `/transfers/${transfer.partner_reference}/approve`);
      const answer = await p.notify({ type: 'transfer', external_reference: transfer.partner_reference, event: 'transfer.canceled' });
      assert.equal(answer.status, 202);
      await waitFor('the notification processed', processed(p, transfer.partner_reference!));
      assert.equal(await transferStatus(p, transfer.transfer_id), 'pending', 'no silent choice between the check and the words');
      const report = await ready(p.stack);
      assert.equal(report.status_codes.transfers, 'mismatch');
      assert.equal(report.checks.status_codes, 'verified', "the payments' codes stand");
      assert.ok(
        report.warnings?.some((w: string) => w.includes('PIX_TRANSFER_STATUS_CODES: transfer status code 2 (listed approved) is a mismatch')),
        JSON.stringify(report.warnings),
      );
      assert.ok(p.logs.some((line) => line.level >= 50 && line.msg.includes('transfer status code 2 does not match PIX_TRANSFER_STATUS_CODES')));
      // From now on the contradicted code decides nothing: a check finding it approved applies nothing either.
      await p.stack.pix.transfers.confirm(transfer.partner_reference!);
      assert.equal(await transferStatus(p, transfer.transfer_id), 'pending');
    } finally {
      await p.close();
    }
  });
});
