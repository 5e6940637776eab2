/**
 * `pix-checkout doctor`: checks what server/partner/ASSUMPTIONS.md guessed about the service against
 * the configured account, before any money moves (what cannot be seen without moving money, the
 * transfer answers and the approved and canceled codes, is listed as not checked). Each assumption is printed as held, different
 * (tolerated: the client reads it anyway) or broken (something would fail), with the shape the
 * service answered, values redacted; then the configuration to set. Exit 4 when something would break.
 */
import { checkBrCode, describeBrCodeProblem } from '../../src/shared/brcode.ts';
import { ConfigError, partnerConfig, readSettings, resolveSettings } from '../config/index.ts';
import { WEBHOOK_PATH, maskWebhookSecret } from '../routes/webhooks.ts';
import type { ObservedAnswer, PartnerClient } from '../partner/client.ts';
import { PartnerError } from '../partner/errors.ts';
import { formatStatusCodes, statusMeaning, wordMeaning } from '../partner/status-codes.ts';
import { NOTIFY_TYPE, NotificationUrlRequest, PAYMENT_CHECK_HTTP } from '../partner/wire.ts';
import { ExitCode, UsageError, checkArgs, client, observedAnswers, parse, shapeLine, type CliIo } from './io.ts';

export const HELP = `Usage: pix-checkout doctor [--create] [--webhook-url <url> [--format old|new]] [--json]

Checks the configured account against the assumptions of server/partner/ASSUMPTIONS.md that can be
observed without moving money: login (token field, lifetime), tenant; with --webhook-url, the notification URL (this sets it);
with --create, one R$ 0.20 payment created, read (4.5) and checked by HEAD (4.4), which shows the
status code of a new payment and checks PIX_STATUS_CODES. The payment is never paid: it expires.

With PIX_WEBHOOK_SECRET_PATH configured (in the environment or .env), --webhook-url must end with
it: a URL whose last path segment is anything else (an empty one, from a variable your shell did
not expand) is refused before anything is sent, since the proxy would answer 404 to every
notification sent there.

Each line says held, different (the client reads it anyway) or broken (something would fail), with
the shape observed (values redacted). Exit 0 when nothing would break, 4 when something would.
Run it first when going to production (docs/guides/production.md).`;

type Verdict = 'held' | 'different' | 'broken' | 'not_checked';

interface Finding {
  spec: string;
  assumption: string;
  verdict: Verdict;
  observed: string;
  shape?: unknown;
}

export async function doctorCommand(rest: string[], io: CliIo): Promise<void> {
  const { values } = parse(rest, { create: { type: 'boolean' }, 'webhook-url': { type: 'string' }, format: { type: 'string' } });
  if (values.help) return io.out(HELP);
  const format = values.format;
  if (format !== undefined && format !== 'old' && format !== 'new') throw new UsageError('--format must be old or new');
  if (format !== undefined && values['webhook-url'] === undefined) throw new UsageError('--format goes with --webhook-url');
  if (values['webhook-url'] !== undefined) {
    checkArgs(NotificationUrlRequest, { notification_url: values['webhook-url'] }, { notification_url: '--webhook-url' });
    checkWebhookUrl(values['webhook-url'], io.env);
  }
  const cfg = partnerConfig(io.env);
  const { observe, last } = observedAnswers();
  const partner = await client(cfg, io.env, observe);
  const findings: Finding[] = [];
  const settings: string[] = [];
  const add = (finding: Finding) => findings.push(finding);
  const failed = (error: unknown) => (error instanceof Error ? error.message : String(error));
  /** `held` when found where assumed, `different` when found elsewhere, `broken` when missing and needed. */
  const where = (spec: string, field: string, assumed: string, answer: ObservedAnswer | undefined, needed: boolean) => {
    const at = answer?.found[field] ?? null;
    add({
      spec,
      assumption: `${field} at ${assumed}`,
      verdict: at === assumed ? 'held' : at !== null ? 'different' : needed ? 'broken' : 'different',
      observed: at === null ? 'absent' : `at ${at}`,
      ...(at !== assumed ? { shape: answer?.shape } : {}),
    });
  };

  // 5 / 4.2: login.
  if (cfg.credentials) {
    try {
      await partner.login();
      const answer = last('login');
      where('5', 'token', 'data.access_token', answer, true);
      const lifetime = answer?.found.lifetime ?? null;
      add({
        spec: '5',
        assumption: 'token lifetime at data.expires_at',
        verdict: lifetime === 'data.expires_at' ? 'held' : 'different',
        observed: lifetime ? `at ${lifetime}` : 'absent (the spec’s 5 years are assumed)',
      });
    } catch (error) {
      add({ spec: '5', assumption: 'login answers a token', verdict: 'broken', observed: failed(error), shape: last('login')?.shape });
    }
  } else {
    add({ spec: '5', assumption: 'login', verdict: 'not_checked', observed: 'PIX_TOKEN is used (no PIX_EMAIL/PIX_ACCESS_KEY)' });
  }

  // 4.1: tenant.
  let tenantOk = false;
  try {
    await partner.getTenant();
    tenantOk = true;
    where('4.1', 'id', 'data.id', last('getTenant'), true);
  } catch (error) {
    add({ spec: '4.1', assumption: 'get-tenant answers the tenant id', verdict: 'broken', observed: failed(error), shape: last('getTenant')?.shape });
  }

  // 4.8: notification URL, only when asked (it changes the account's setting).
  if (values['webhook-url'] !== undefined) {
    try {
      const set = await partner.setNotificationUrl({ notification_url: values['webhook-url'], ...(format ? { notify_type: NOTIFY_TYPE[format] } : {}) });
      const answer = last('setNotificationUrl');
      add({
        spec: '4.8',
        assumption: 'PATCH answers 200 {message, data: {notification_url, notify_type}}',
        verdict: answer?.status === 200 && answer.found.notification_url === 'data.notification_url' ? 'held' : 'different',
        observed: `HTTP ${answer?.status ?? '?'}${set.confirmed ? `, URL echoed at ${answer?.found.notification_url}` : ', no URL echoed'}`,
        ...(answer?.found.notification_url !== 'data.notification_url' ? { shape: answer?.shape } : {}),
      });
    } catch (error) {
      add({ spec: '4.8', assumption: 'the notification URL can be set', verdict: 'broken', observed: failed(error) });
    }
  } else {
    add({ spec: '4.8', assumption: 'notification URL', verdict: 'not_checked', observed: 'pass --webhook-url <url> to set and check it' });
  }

  if (values.create && tenantOk) await checkPayment(partner, cfg.statusCodes, add, settings, last, where);
  else if (values.create) add({ spec: '4.3', assumption: 'create a payment', verdict: 'not_checked', observed: 'no tenant id' });
  else add({ spec: '4.3-4.5', assumption: 'payments and status codes', verdict: 'not_checked', observed: 'pass --create to create one R$ 0.20 payment' });

  const broken = findings.some((f) => f.verdict === 'broken');
  if (values.json) {
    io.out(
      JSON.stringify(
        { base_url: cfg.baseUrl, sandbox: cfg.sandbox, status_codes: formatStatusCodes(cfg.statusCodes), ok: !broken, findings, settings },
        null,
        2,
      ),
    );
  } else {
    io.out(`pix-checkout doctor: ${cfg.baseUrl}${cfg.sandbox ? ' (sandbox)' : ''}, PIX_STATUS_CODES ${formatStatusCodes(cfg.statusCodes)}`);
    const width = Math.max(...findings.map((f) => `${f.spec} ${f.assumption}`.length));
    const shown = new Set<string>();
    for (const f of findings) {
      io.out(`${f.verdict.padEnd(11)} ${`${f.spec} ${f.assumption}`.padEnd(width)}  ${f.observed}`);
      // Each answer's shape once, under the first line it explains.
      const text = f.shape === undefined ? '' : JSON.stringify(f.shape);
      if (text && f.verdict !== 'held' && !shown.has(text)) {
        shown.add(text);
        io.out(`${' '.repeat(12)}${shapeLine(f.shape)}`);
      }
    }
    if (settings.length > 0) io.out(`\nSet:\n${settings.map((s) => `  ${s}`).join('\n')}`);
    io.out(broken ? '\nSomething would break: see the lines marked broken.' : '\nNothing would break.');
  }
  if (broken) throw new ExitCode(4);
}

async function checkPayment(
  partner: PartnerClient,
  codes: ReturnType<typeof partnerConfig>['statusCodes'],
  add: (finding: Finding) => void,
  settings: string[],
  last: (operation: string, error?: boolean) => ObservedAnswer | undefined,
  where: (spec: string, field: string, assumed: string, answer: ObservedAnswer | undefined, needed: boolean) => void,
): Promise<void> {
  let reference: string;
  let freshCode: number | null = null;
  let freshWord: string | null = null;
  try {
    const created = await partner.createPayment({ value: 0.2, description: 'pix-checkout doctor', expiration: 300 });
    reference = created.externalReference;
    const answer = last('createPayment');
    add({
      spec: '4.3',
      assumption: 'create answers HTTP 201',
      verdict: answer?.status === 201 ? 'held' : 'different',
      observed: `HTTP ${answer?.status ?? '?'}`,
    });
    for (const field of ['external_reference', 'pix_key', 'qr_code_url', 'checkout'])
      where('4.3', field, `data.${field}`, answer, field === 'external_reference' || field === 'pix_key');
    where('4.3', 'created_at', 'data.created_at', answer, false);
    const check = checkBrCode(created.pixKey);
    add({
      spec: 'BR Code',
      assumption: 'pix_key is a BR Code we can draw',
      verdict: check.ok ? 'held' : 'different',
      observed: check.ok ? 'valid' : `not drawn locally (${describeBrCodeProblem(check.at)}): the widget shows the service's image`,
    });
    if (created.status) ({ code: freshCode, word: freshWord } = created.status);
  } catch (error) {
    const outcome = error instanceof PartnerError && error.details.outcomeUnknown ? ` (outcome unknown, transaction ${error.details.transactionId})` : '';
    add({
      spec: '4.3',
      assumption: 'a payment can be created and read',
      verdict: 'broken',
      observed: `${error instanceof Error ? error.message : String(error)}${outcome}`,
      shape: last('createPayment')?.shape,
    });
    return;
  }

  try {
    const details = await partner.getPayment(reference);
    const answer = last('getPayment');
    where('4.5', 'status', 'data.status', answer, true);
    where('4.5', 'value', 'data.value', answer, false);
    const record = (answer?.shape as { data?: Record<string, unknown> } | null)?.data;
    const valueForm = record?.value;
    add({
      spec: '2.1',
      assumption: 'value is a number',
      verdict: valueForm === 'number' ? 'held' : 'different',
      observed: typeof valueForm === 'string' ? `a ${valueForm}` : 'absent from data',
    });
    const createdForm = record?.created_at;
    add({
      spec: '2.1',
      assumption: 'created_at is ISO 8601 UTC with microseconds and Z',
      verdict: createdForm === 'timestamp (6 fraction digits, Z)' ? 'held' : 'different',
      observed: typeof createdForm === 'string' ? createdForm : 'absent from data (the time of the request is used)',
    });
    const status = details.status;
    if (freshCode === null && freshWord === null && status) ({ code: freshCode, word: freshWord } = status);
    if (status?.word) {
      add({
        spec: '3',
        assumption: 'status is a number',
        verdict: 'different',
        observed: `a word: "${status.word}" (read as ${statusMeaning(codes, status) ?? 'unknown'})`,
      });
    }
  } catch (error) {
    add({ spec: '4.5', assumption: 'payment details can be read', verdict: 'broken', observed: error instanceof Error ? error.message : String(error) });
  }

  // 3: the numbering. A new payment is pending by definition.
  if (freshCode !== null) {
    const held = codes.pending.includes(freshCode);
    add({
      spec: '3',
      assumption: `a new payment has status ${codes.pending.join(' or ')} (pending in PIX_STATUS_CODES)`,
      verdict: held ? 'held' : 'broken',
      observed: `status ${freshCode}`,
    });
    if (!held) {
      settings.push(
        `PIX_STATUS_CODES=pending=${freshCode},approved=<ask>,canceled=<ask>   (a new payment has ${freshCode}; approved and canceled cannot be seen without paying or waiting: take them from the partner, with its expired, returned and failed codes if it has them: docs/partner-status-codes.md)`,
      );
    }
  } else if (freshWord !== null) {
    // A word means what it says: no numbering needed for it.
    const meaning = wordMeaning(freshWord);
    add({
      spec: '3',
      assumption: 'a new payment is pending',
      verdict: meaning === 'pending' ? 'different' : 'broken',
      observed: `status "${freshWord}" (a word, read as ${meaning ?? 'unknown'})`,
    });
  } else {
    add({ spec: '3', assumption: 'status code of a new payment', verdict: 'broken', observed: 'no status in the create answer nor in the details' });
  }
  // What no check here can see: approved and canceled cannot be observed without paying, or waiting an
  // hour past expiry. The proxy catches a swap at the first authenticated notification that contradicts it.
  add({
    spec: '3',
    assumption: `approved is ${codes.approved.join('|')}, canceled is ${codes.canceled.join('|')}${
      codes.expired.length + codes.returned.length + codes.failed.length > 0 ? `, and the others as ${formatStatusCodes(codes)}` : ''
    }`,
    verdict: 'not_checked',
    observed: "cannot be observed without paying or waiting: take them from the partner's documentation",
  });

  try {
    await partner.getPayment('pix-checkout-doctor-unknown');
    add({ spec: '7', assumption: 'an unknown reference answers 404', verdict: 'different', observed: 'answered 2xx' });
  } catch (error) {
    const answer = last('getPayment', true);
    const body = answer?.shape as Record<string, unknown> | null | undefined;
    const held = answer?.status === 404 && body !== null && typeof body === 'object' && body.message === 'string';
    add({
      spec: '7',
      assumption: 'errors answer {message, errors?, reason?}; an unknown reference 404',
      verdict: held ? 'held' : 'different',
      observed: answer
        ? `HTTP ${answer.status}${held ? '' : `, read as: ${error instanceof PartnerError ? (error.details.upstreamMessage ?? 'no words') : 'no words'}`}`
        : error instanceof Error
          ? error.message
          : String(error),
      ...(held ? {} : { shape: answer?.shape }),
    });
  }

  try {
    const check = await partner.checkPayment(reference);
    const held = check.httpStatus === PAYMENT_CHECK_HTTP.pending;
    add({
      spec: '4.4',
      assumption: `HEAD answers ${PAYMENT_CHECK_HTTP.pending} for a pending payment`,
      verdict: held ? 'held' : 'different',
      observed: `HTTP ${check.httpStatus}${held ? '' : ` (the assumed mapping reads it as ${check.hint}; HEAD is a hint only, never used for a payment's state)`}`,
    });
  } catch (error) {
    add({ spec: '4.4', assumption: 'HEAD answers', verdict: 'different', observed: error instanceof Error ? error.message : String(error) });
  }
}

/**
 * Refuses a notification URL the proxy would answer 404 at: with PIX_WEBHOOK_SECRET_PATH configured,
 * its last path segment must be that secret (`.../webhooks/partner/$PIX_WEBHOOK_SECRET_PATH` with the
 * variable only in .env reaches the shell as `.../webhooks/partner/`); an empty last segment (a
 * trailing slash) never matches a route. The secret is never printed: segments equal to it, and a
 * wrong last segment (perhaps an old secret), are shown as `…`. Returns how to print a URL: the
 * secret, and whatever follows the proxy's webhook path, as `…`.
 */
export function checkWebhookUrl(url: string, env: Record<string, string | undefined>): (shown: string) => string {
  const { values, problems } = readSettings(env, ['PIX_WEBHOOK_SECRET_PATH']);
  if (problems.length > 0) throw new ConfigError(problems);
  const secret = values.PIX_WEBHOOK_SECRET_PATH;
  const parsed = new URL(url);
  const segments = parsed.pathname.split('/');
  const last = segments.at(-1) ?? '';
  // What the command prints of a URL (the partner's echo too): the secret path as `…`, as the guide shows it.
  const mask = (shown: string) => maskWebhookSecret(secret === undefined ? shown : shown.split(secret).join('…'));
  if (secret !== undefined && last === secret) return mask;
  // With a secret configured, a wrong last segment is not shown either: it may be an old or mistyped secret.
  const hidden = (segment: string, at: number) => secret !== undefined && (segment === secret || (at === segments.length - 1 && segment !== ''));
  const shown = `${parsed.origin}${segments.map((segment, at) => (hidden(segment, at) ? '…' : segment)).join('/')}`;
  const found =
    last === ''
      ? 'it ends with "/" (an empty last segment: a variable that was not expanded?)'
      : `its last segment (${last.length} characters, not shown: it may be an old secret) is another`;
  if (secret !== undefined)
    throw new UsageError(
      `--webhook-url ${shown} does not end with the configured secret path (PIX_WEBHOOK_SECRET_PATH): ${found}. ` +
        `The proxy would answer 404 to every notification; use ${WEBHOOK_URL_SHAPE} with the secret written out.`,
    );
  if (last === '')
    throw new UsageError(
      `--webhook-url ${shown}: ${found}. The proxy would answer 404 to every notification; use ${WEBHOOK_URL_SHAPE.replace('/<PIX_WEBHOOK_SECRET_PATH>', '')}.`,
    );
  return mask;
}

/** Where the proxy takes the partner's notifications (routes/webhooks.ts, under the API's base path). */
const WEBHOOK_URL_SHAPE = `https://<your host>${resolveSettings({}).basePath}${WEBHOOK_PATH}/<PIX_WEBHOOK_SECRET_PATH>`;
