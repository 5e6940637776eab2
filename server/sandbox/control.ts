/**
 * The sandbox's control API (under /_sandbox), which the real service does not have: tests and the
 * demo use it to play the payer, the customers' banks and the passing of time, to look at webhook
 * deliveries, to inject faults, and to switch the dialect. JSON in and out, in the same words in
 * every dialect but for the `status` codes it reports, which are the dialect's; every bad input is a
 * 4xx with `{error: {code, message, fields?}}` (the shape of src/shared/errors.ts).
 */
import { Hono, type Context } from 'hono';
import { z } from 'zod/mini';
import { isValidDocument } from '../../src/shared/document.ts';
import { parseInput } from '../../src/shared/errors.ts';
import { PIX_KEY_TYPES, isValidPixKey, type PixKeyType } from '../../src/shared/pix-keys.ts';
import { PARTNER_MAX_BODY_BYTES, type PartnerStatusCode } from '../partner/wire.ts';
import { jsonBody } from './body.ts';
import { BANK_BEHAVIOURS, KYC_STATUSES, type SandboxCustomer } from './customers.ts';
import { DIALECT_NAMES, SANDBOX_DIALECTS, isDialectName, statusName } from './dialects.ts';
import { FAULT_KINDS } from './faults.ts';
import type { Outcome, SandboxState } from './state.ts';

type ControlStatus = 400 | 404 | 405 | 409 | 413 | 415 | 422;
type ControlCode = 'invalid_request' | 'invalid_json' | 'unsupported_media_type' | 'payload_too_large' | 'not_found' | 'conflict' | 'method_not_allowed';

function controlError(c: Context, status: ControlStatus, code: ControlCode, message: string, fields?: Record<string, string>) {
  return c.json({ error: fields ? { code, message, fields } : { code, message } }, status);
}

/** The latest time the sandbox clock may show: the end of year 9999, which every date format can still write. */
const MAX_SANDBOX_TIME = Date.UTC(9999, 11, 31, 23, 59, 59, 999);

const AdvanceClock = z.strictObject({ seconds: z.number().check(z.gte(0, 'must be a non-negative number')) });
const SetClock = z.strictObject({ now: z.string().check(z.refine((s) => Number.isFinite(Date.parse(s)), 'must be an ISO 8601 date and time')) });

const FaultRequest = z
  .strictObject({
    kind: z.enum(FAULT_KINDS),
    rate: z.number().check(z.gte(0, 'must be between 0 and 1'), z.lte(1, 'must be between 0 and 1')),
    path_prefix: z.optional(z.string().check(z.regex(/^\//, 'must start with /'), z.maxLength(200, 'must be at most 200 characters'))),
    latency_ms: z.optional(z.int('must be a whole number of milliseconds').check(z.gte(1, 'must be at least 1'), z.lte(60_000, 'must be at most 60000'))),
    status: z.optional(z.int('must be an HTTP status').check(z.gte(500, 'must be 500 to 599'), z.lte(599, 'must be 500 to 599'))),
    times: z.optional(z.int('must be a whole number').check(z.gte(1, 'must be at least 1'))),
  })
  .check(
    z.superRefine((fault, ctx) => {
      const problem = (path: string, message: string) => ctx.issues.push({ code: 'custom', path: [path], message, input: fault });
      const timed = fault.kind === 'latency' || fault.kind === 'late_answer';
      if (timed && fault.latency_ms === undefined) problem('latency_ms', `is required for a ${fault.kind} fault`);
      if (!timed && fault.latency_ms !== undefined) problem('latency_ms', 'is only for a latency or late_answer fault');
      if (fault.kind !== 'server_error' && fault.status !== undefined) problem('status', 'is only for a server_error fault');
      if (fault.kind === 'drop_webhook' && fault.path_prefix !== undefined) problem('path_prefix', 'does not apply to webhooks');
    }),
  );

/** A customer's keys, at most one of each type, each in the form of its type (spec 2.3). */
const CustomerKeys = z.strictObject(
  Object.fromEntries(
    PIX_KEY_TYPES.map((type) => [type, z.optional(z.string().check(z.refine((key) => isValidPixKey(key, type), `is not a valid ${type} key`)))]),
  ) as Record<PixKeyType, z.ZodMiniOptional<z.ZodMiniString>>,
);

const DialectRequest = z.strictObject({ name: z.string() });

const ReturnRequest = z.strictObject({
  value: z.optional(z.number().check(z.positive('must be more than 0'), z.maximum(10_000, 'must be at most 10000'))),
});

const BatchingRequest = z.strictObject({
  window_ms: z.number().check(z.int('must be a whole number'), z.minimum(0, 'must be at least 0'), z.maximum(60_000, 'must be at most 60000')),
});

const CustomerRequest = z.strictObject({
  document: z.string().check(z.refine(isValidDocument, 'must be a valid CPF or CNPJ')),
  name: z.string().check(z.minLength(1, 'must not be empty'), z.maxLength(120, 'must be at most 120 characters')),
  kyc: z.enum(KYC_STATUSES),
  bank: z.optional(z.enum(BANK_BEHAVIOURS)),
  keys: CustomerKeys,
});

export function createControlApi(state: SandboxState): Hono {
  const control = new Hono();

  /** Reads and validates a JSON body; the refusal is ready to return. */
  async function input<T>(c: Context, schema: z.ZodMiniType<T>): Promise<{ ok: true; data: T } | { ok: false; response: Response }> {
    const read = await jsonBody(c);
    if (!read.ok) {
      const response =
        read.problem === 'media_type'
          ? controlError(c, 415, 'unsupported_media_type', 'Send a JSON body with Content-Type: application/json.')
          : read.problem === 'too_large'
            ? controlError(c, 413, 'payload_too_large', `The body is larger than ${PARTNER_MAX_BODY_BYTES} bytes.`)
            : controlError(c, 400, 'invalid_json', 'The body is not valid JSON.');
      return { ok: false, response };
    }
    const parsed = parseInput(schema, read.body);
    return parsed.success ? { ok: true, data: parsed.data } : { ok: false, response: c.json(parsed.body, 400) };
  }

  /** Answers a pay, cancel, approve: the new status (the dialect's code), or 409 when it already had a final one. */
  const settled = (c: Context, item: { externalReference: string; status: PartnerStatusCode }, outcome: Outcome, kind: 'payment' | 'transfer' = 'payment') =>
    outcome.ok
      ? c.json({
          reference: item.externalReference,
          status: (kind === 'transfer' ? (state.dialect.transferStatusCodes ?? state.dialect.statusCodes) : state.dialect.statusCodes)[statusName(item.status)],
        })
      : controlError(c, 409, 'conflict', `Not done: ${outcome.reason}.`);

  // The payer's bank.
  control.post('/payments/:reference/pay', (c) => {
    const payment = state.payments.get(c.req.param('reference'));
    if (!payment) return controlError(c, 404, 'not_found', 'No such payment in the sandbox.');
    return settled(c, payment, state.pay(payment));
  });
  // A Pix return of a paid payment (all that is left, or `value` reais): the payment stays paid, and a notification says so.
  control.post('/payments/:reference/return', async (c) => {
    const payment = state.payments.get(c.req.param('reference'));
    if (!payment) return controlError(c, 404, 'not_found', 'No such payment in the sandbox.');
    let value: number | undefined;
    if ((c.req.header('content-length') ?? '0') !== '0') {
      const read = await input(c, ReturnRequest);
      if (!read.ok) return read.response;
      value = read.data.value;
    }
    const outcome = state.returnPayment(payment, value);
    return outcome.ok
      ? c.json({ reference: payment.externalReference, returned: payment.returned })
      : controlError(c, 409, 'conflict', `Not done: ${outcome.reason}.`);
  });
  control.post('/payments/:reference/cancel', (c) => {
    const payment = state.payments.get(c.req.param('reference'));
    if (!payment) return controlError(c, 404, 'not_found', 'No such payment in the sandbox.');
    return settled(c, payment, state.cancelPayment(payment));
  });

  // The customers' banks.
  for (const [action, outcome] of [
    ['approve', 'approved'],
    ['cancel', 'canceled'],
  ] as const) {
    control.post(`/transfers/:reference/${action}`, (c) => {
      const transfer = state.transfers.get(c.req.param('reference'));
      if (!transfer) return controlError(c, 404, 'not_found', 'No such transfer in the sandbox.');
      return settled(c, transfer, state.settleTransfer(transfer, outcome), 'transfer');
    });
  }

  // The customer registry. Its documents are fake, so showing them here is fine.
  control.get('/customers', (c) => c.json({ customers: state.customers.list() }));
  control.post('/customers', async (c) => {
    const read = await input(c, CustomerRequest);
    if (!read.ok) return read.response;
    const customer: SandboxCustomer = { ...read.data, bank: read.data.bank ?? 'approves' };
    const added = state.customers.add(customer);
    if (!added.ok) return controlError(c, 409, 'conflict', `${added.field} ${added.reason}.`, { [added.field]: added.reason });
    return c.json({ customer }, 201);
  });

  // Webhooks.
  control.get('/webhooks/deliveries', (c) => {
    const reference = c.req.query('external_reference');
    const event = c.req.query('event_id');
    const deliveries = state.webhooks.deliveries.filter(
      (d) => (reference === undefined || d.external_reference === reference) && (event === undefined || d.event_id === event),
    );
    return c.json({ deliveries });
  });
  control.post('/webhooks/events/:id/resend', (c) => {
    const delivery = state.webhooks.resend(c.req.param('id'));
    if (!delivery) return controlError(c, 404, 'not_found', 'No such webhook event.');
    return c.json({ delivery }, 202);
  });
  // Several notifications in one POST (`{"pix": [...]}`), as some partners send them: those due within `window_ms` of the first; 0 turns it off.
  control.put('/webhooks/batching', async (c) => {
    const read = await input(c, BatchingRequest);
    if (!read.ok) return read.response;
    state.webhooks.batchMs = read.data.window_ms === 0 ? null : read.data.window_ms;
    return c.json({ window_ms: state.webhooks.batchMs ?? 0 });
  });
  control.post('/webhooks/batching/flush', (c) => c.json({ sent: state.webhooks.flushBatch() }));
  control.get('/notification-url', (c) => c.json({ notification: notificationView(state) }));
  control.delete('/notification-url', (c) => {
    state.webhooks.notification = null;
    return c.json({ notification: null });
  });

  // Time.
  const clockView = (c: Context) => c.json({ now: new Date(state.clock.now()).toISOString(), offset_seconds: state.clock.offset() / 1000 });
  const moveClockTo = (c: Context, target: number, field: string) => {
    if (target < state.clock.now())
      return controlError(c, 400, 'invalid_request', `${field} must not move the clock backward`, { [field]: 'must not move the clock backward' });
    if (target > MAX_SANDBOX_TIME)
      return controlError(c, 400, 'invalid_request', `${field} must keep the clock before the year 10000`, {
        [field]: 'must keep the clock before the year 10000',
      });
    state.clock.set(target);
    return clockView(c);
  };
  control.get('/clock', clockView);
  control.post('/clock/advance', async (c) => {
    const read = await input(c, AdvanceClock);
    if (!read.ok) return read.response;
    return moveClockTo(c, state.clock.now() + read.data.seconds * 1000, 'seconds');
  });
  control.post('/clock/set', async (c) => {
    const read = await input(c, SetClock);
    if (!read.ok) return read.response;
    return moveClockTo(c, Date.parse(read.data.now), 'now');
  });

  // Faults.
  control.get('/faults', (c) => c.json({ faults: state.faults.list() }));
  control.post('/faults', async (c) => {
    const read = await input(c, FaultRequest);
    if (!read.ok) return read.response;
    const { kind, rate, path_prefix, latency_ms, status, times } = read.data;
    const fault = state.faults.add({
      kind,
      rate,
      path_prefix: path_prefix ?? null,
      latency_ms: latency_ms ?? null,
      status: kind === 'server_error' ? (status ?? 503) : null,
      times: times ?? null,
    });
    return c.json({ fault }, 201);
  });
  control.delete('/faults', (c) => {
    state.faults.reset();
    return c.json({ faults: [] });
  });
  control.delete('/faults/:id', (c) => {
    const id = Number(c.req.param('id'));
    if (!Number.isSafeInteger(id) || !state.faults.remove(id)) return controlError(c, 404, 'not_found', 'No such fault.');
    return c.json({ faults: state.faults.list() });
  });

  // The dialect (dialects.ts): which one answers, and its status codes; switched at once.
  const dialectView = (c: Context) =>
    c.json({
      name: state.dialect.name,
      status_codes: { ...state.dialect.statusCodes },
      // A dialect numbering transfers apart, or with more than three states, says so.
      ...(state.dialect.transferStatusCodes ? { transfer_status_codes: { ...state.dialect.transferStatusCodes } } : {}),
      ...(state.dialect.setting ? { setting: state.dialect.setting } : {}),
    });
  control.get('/dialect', dialectView);
  control.put('/dialect', async (c) => {
    const read = await input(c, DialectRequest);
    if (!read.ok) return read.response;
    const { name } = read.data;
    if (!isDialectName(name)) {
      const problem = `must be one of ${DIALECT_NAMES.join(', ')}`;
      return controlError(c, 422, 'invalid_request', `name ${problem}`, { name: problem });
    }
    state.dialect = SANDBOX_DIALECTS[name];
    return dialectView(c);
  });

  control.notFound((c) => controlError(c, 404, 'not_found', `Nothing at ${c.req.method} ${c.req.path}.`));
  return control;
}

function notificationView(state: SandboxState) {
  const target = state.webhooks.notification;
  return target ? { notification_url: target.url, notify_type: target.notifyType, notify_type_given: target.notifyTypeGiven ?? false } : null;
}
