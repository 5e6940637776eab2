/**
 * Webhook notifications (spec 6): every final outcome of a payment or a transfer becomes an event,
 * POSTed as JSON to the registered notification URL in the format notify_type chose, worded by the
 * sandbox's dialect (dialects.ts) at the time of sending. A non-2xx answer
 * or a timeout is retried LIMITS.webhookRetries more times, then given up. Every delivery and every
 * attempt is recorded for the control API, and an event can be sent again (the panel's "resend").
 */
import { randomUUID } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import { request as httpRequest, type ClientRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { setTimeout as sleep } from 'node:timers/promises';
import { LIMITS } from '../../src/shared/limits.ts';
import { NOTIFY_TYPE, partnerTimestamp, type NotifyType, type WebhookKind, type WebhookOutcome } from '../partner/wire.ts';

export interface WebhookOptions {
  /** How long one attempt may take before it counts as a timeout (real ms). Default 5000. */
  timeoutMs?: number;
  /** Pause between attempts (real ms). Default 1000. */
  retryDelayMs?: number;
}

/** The registration of operation 4.8. */
export interface NotificationSettings {
  url: string;
  notifyType: NotifyType;
  /** Whether the registration named its notify_type (the default applies when it did not). */
  notifyTypeGiven?: boolean;
}

/** A final outcome, frozen when it happened: a resend sends the same event again. */
export interface SandboxWebhookEvent {
  /** The event id the new format carries; a resend keeps it so receivers can deduplicate. */
  id: string;
  kind: WebhookKind;
  outcome: WebhookOutcome;
  occurredAt: number;
  transaction: {
    id: number;
    externalReference: string;
    value: number;
    transactionId: string | null;
    end2end: string | null;
    createdAt: number;
  };
  /** A return of a paid payment: reais given back in all (state.ts returnPayment). */
  returned?: number;
}

export interface WebhookAttempt {
  number: number;
  /** Sandbox time the attempt started, ISO 8601. */
  at: string;
  /** The receiver's HTTP status, or null when there was none (see error). */
  status: number | null;
  error: 'timeout' | 'connection_failed' | null;
  delivered: boolean;
}

export type DeliveryState = 'sending' | 'delivered' | 'failed' | 'not_sent' | 'dropped';

export interface WebhookDelivery {
  id: string;
  event_id: string;
  kind: WebhookKind;
  outcome: WebhookOutcome;
  external_reference: string;
  /** `outcome` for the automatic notification, `resend` for one asked through the control API. */
  trigger: 'outcome' | 'resend';
  /** Where it went, or null when no notification URL was registered. */
  url: string | null;
  format: 'old' | 'new' | null;
  /** The JSON sent, in the dialect of the time (the default's parse as OldWebhookPayload or NewWebhookPayload). */
  payload: Record<string, unknown> | null;
  /**
   * sending; delivered (a 2xx); failed (every attempt failed); not_sent (no notification URL);
   * dropped (lost on purpose by the drop_webhook fault).
   */
  state: DeliveryState;
  attempts: WebhookAttempt[];
  created_at: string;
}

/** Words an event's payload in one format (the sandbox's dialect does). */
export type WebhookPayloadBuilder = (event: SandboxWebhookEvent, format: 'old' | 'new') => Record<string, unknown>;

/**
 * A return added to a payload, whatever its dialect: the central bank's list of returns
 * (`devolucoes: [{valor, status}]`) on the record that names the payment.
 */
export function withReturns(payload: Record<string, unknown>, event: SandboxWebhookEvent): Record<string, unknown> {
  if (event.returned === undefined) return payload;
  const devolucoes = [{ id: `D${event.transaction.id}`, valor: event.returned.toFixed(2), status: 'DEVOLVIDO' }];
  const add = (node: unknown): unknown => {
    if (typeof node !== 'object' || node === null || Array.isArray(node)) return node;
    const record = node as Record<string, unknown>;
    if ('external_reference' in record || 'externalReference' in record) return { ...record, devolucoes };
    return Object.fromEntries(Object.entries(record).map(([k, v]) => [k, add(v)]));
  };
  return add(payload) as Record<string, unknown>;
}

export class WebhookDispatcher {
  readonly events = new Map<string, SandboxWebhookEvent>();
  readonly deliveries: WebhookDelivery[] = [];
  notification: NotificationSettings | null = null;
  /**
   * Batching (control API): events due within this many real milliseconds of the first are sent in
   * one POST, `{"pix": [payload, ...]}`, as partners that list several payments in one notification
   * do; null sends each on its own (the spec's way).
   */
  batchMs: number | null = null;
  private batch: { deliveries: WebhookDelivery[]; url: string; flush: () => void } | null = null;
  private readonly timeoutMs: number;
  private readonly retryDelayMs: number;
  /** Aborts every attempt and pause in flight when the sandbox closes. */
  private readonly closing = new AbortController();
  private readonly inFlight = new Set<Promise<void>>();

  constructor(
    private readonly now: () => number,
    /** True when the drop_webhook fault strikes this delivery. */
    private readonly dropped: () => boolean,
    options: WebhookOptions,
    private readonly buildPayload: WebhookPayloadBuilder,
  ) {
    // One listener per delivery and pause in flight: a burst of outcomes is many at once, not a leak.
    setMaxListeners(0, this.closing.signal);
    this.timeoutMs = options.timeoutMs ?? 5000;
    this.retryDelayMs = options.retryDelayMs ?? 1000;
  }

  /** Records a final outcome and notifies it. */
  emit(event: Omit<SandboxWebhookEvent, 'id'>): SandboxWebhookEvent {
    const recorded = { id: `evt_${randomUUID().replaceAll('-', '')}`, ...event };
    this.events.set(recorded.id, recorded);
    this.deliver(recorded, 'outcome');
    return recorded;
  }

  /** Sends the batch under way now (control API); false when none is held. */
  flushBatch(): boolean {
    const batch = this.batch;
    if (!batch) return false;
    this.batch = null;
    batch.flush();
    return true;
  }

  /** Sends an event again, to the notification URL and in the format registered now. */
  resend(eventId: string): WebhookDelivery | null {
    const event = this.events.get(eventId);
    return event ? this.deliver(event, 'resend') : null;
  }

  /** Resolves when no delivery is in flight (for a clean shutdown). */
  async idle(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight]);
  }

  async close(): Promise<void> {
    this.closing.abort();
    await this.idle();
  }

  private deliver(event: SandboxWebhookEvent, trigger: WebhookDelivery['trigger']): WebhookDelivery {
    const target = this.notification;
    const format = target ? (target.notifyType === NOTIFY_TYPE.new ? 'new' : 'old') : null;
    const delivery: WebhookDelivery = {
      id: `dlv_${randomUUID().replaceAll('-', '')}`,
      event_id: event.id,
      kind: event.kind,
      outcome: event.outcome,
      external_reference: event.transaction.externalReference,
      trigger,
      url: target?.url ?? null,
      format,
      payload: format ? withReturns(this.buildPayload(event, format), event) : null,
      state: 'sending',
      attempts: [],
      created_at: partnerTimestamp(this.now()),
    };
    this.deliveries.push(delivery);
    if (!target) delivery.state = 'not_sent';
    else if (this.dropped()) delivery.state = 'dropped';
    else if (this.batchMs !== null) this.addToBatch(delivery, target.url, this.batchMs);
    else {
      const sending = this.attemptAll([delivery], target.url).finally(() => this.inFlight.delete(sending));
      this.inFlight.add(sending);
    }
    return delivery;
  }

  /** Holds a delivery for the batch under way (one is started, sent after `batchMs`). */
  private addToBatch(delivery: WebhookDelivery, url: string, batchMs: number): void {
    if (this.batch && this.batch.url === url) {
      this.batch.deliveries.push(delivery);
      return;
    }
    const flushed = new AbortController();
    const batch = { deliveries: [delivery], url, flush: () => flushed.abort() };
    this.batch = batch;
    const sending = sleep(batchMs, undefined, { signal: AbortSignal.any([this.closing.signal, flushed.signal]) })
      .catch((error: unknown) => {
        // Flushed: sent now; closing: not at all.
        if (this.closing.signal.aborted) throw error;
      })
      .then(
        () => {
          if (this.batch === batch) this.batch = null;
          return this.attemptAll(batch.deliveries, url);
        },
        () => {
          for (const d of batch.deliveries) d.state = 'failed';
        },
      )
      .finally(() => this.inFlight.delete(sending));
    this.inFlight.add(sending);
  }

  /** Sends deliveries (one, or a batch in one body) with the spec's retries; each records every attempt. */
  private async attemptAll(deliveries: WebhookDelivery[], url: string): Promise<void> {
    const body = JSON.stringify(deliveries.length === 1 && this.batchMs === null ? deliveries[0]!.payload : { pix: deliveries.map((d) => d.payload) });
    const attempts = 1 + LIMITS.webhookRetries;
    for (let number = 1; number <= attempts; number++) {
      if (this.closing.signal.aborted) break;
      const at = partnerTimestamp(this.now());
      const result = await postJson(url, body, this.timeoutMs, this.closing.signal);
      const delivered = result.status !== null && result.status >= 200 && result.status < 300;
      for (const delivery of deliveries) delivery.attempts.push({ number, at, status: result.status, error: result.error, delivered });
      if (delivered) {
        for (const delivery of deliveries) delivery.state = 'delivered';
        return;
      }
      if (number < attempts) {
        try {
          await sleep(this.retryDelayMs, undefined, { signal: this.closing.signal });
        } catch {
          break;
        }
      }
    }
    for (const delivery of deliveries) delivery.state = 'failed';
  }
}

/** One POST; never throws: a failure is a null status with its kind. */
function postJson(url: string, body: string, timeoutMs: number, closing: AbortSignal): Promise<Pick<WebhookAttempt, 'status' | 'error'>> {
  return new Promise((resolve) => {
    let timedOut = false;
    let settled = false;
    let responded = false;
    let timer: NodeJS.Timeout | undefined;
    const finish = (result: Pick<WebhookAttempt, 'status' | 'error'>) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(result);
    };
    const failed = () => finish({ status: null, error: timedOut ? 'timeout' : 'connection_failed' });
    const options = {
      method: 'POST',
      signal: closing,
      headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), 'user-agent': 'pix-checkout-sandbox-webhooks' },
    };
    const onResponse = (res: IncomingMessage) => {
      responded = true;
      // The answer's body does not matter, but it must arrive within the deadline too.
      res.resume();
      res.on('end', () => finish({ status: res.statusCode ?? null, error: null }));
      res.on('error', failed);
      res.on('close', () => {
        if (!res.complete) failed();
      });
    };
    let req: ClientRequest;
    try {
      const target = new URL(url);
      req = target.protocol === 'https:' ? httpsRequest(target, options, onResponse) : httpRequest(target, options, onResponse);
    } catch {
      // A URL Node cannot send to (though it passed the schema): as good as no connection.
      return finish({ status: null, error: 'connection_failed' });
    }
    timer = setTimeout(() => {
      timedOut = true;
      req.destroy(new Error('webhook attempt timed out'));
    }, timeoutMs);
    req.on('error', failed);
    req.on('close', () => {
      if (!responded) failed();
    });
    req.end(body);
  });
}
