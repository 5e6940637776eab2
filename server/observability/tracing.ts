/**
 * The proxy's traces, through `@opentelemetry/api` only: an operator who loads the OpenTelemetry SDK
 * (`node --import ./otel.mjs`, docs/tracing.md) gets a server span per request, a
 * child span per partner call, a span per merchant delivery whose `traceparent` the delivery carries.
 * Without an SDK, `tracing()` is false and nothing here starts a span or touches the context: the
 * request's cost is one check.
 */
import {
  ProxyTracerProvider,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  context,
  propagation,
  trace,
  type Span,
  type SpanContext,
  type Tracer,
} from '@opentelemetry/api';
import type { DeliveryTelemetry } from '../domain/telemetry.ts';
import { PartnerError } from '../partner/errors.ts';
import type { PartnerClient } from '../partner/client.ts';
import type { Metrics } from './metrics.ts';

/** The tracer's name: the instrumentation scope an operator filters on. */
export const TRACER_NAME = 'pix-checkout';

/** A ProxyTracer: it follows whichever SDK registers a provider, now or later. */
export const tracer: Tracer = trace.getTracer(TRACER_NAME);

/** The no-op provider the API falls back on while no SDK has registered one. */
const NOOP_PROVIDER = new ProxyTracerProvider().getDelegate();

/** Whether an OpenTelemetry SDK has registered a tracer provider (else every span would be a no-op). */
export function tracing(): boolean {
  const provider = trace.getTracerProvider();
  // Another copy of the API is not ours to inspect: trace, it costs only spans.
  return !(provider instanceof ProxyTracerProvider) || provider.getDelegate() !== NOOP_PROVIDER;
}

/** Ends a span with an error status naming `kind`. */
function failed(span: Span, kind: string, message?: string): void {
  span.setAttribute('error.type', kind);
  span.setStatus({ code: SpanStatusCode.ERROR, ...(message ? { message } : {}) });
}

/** The operations of the PartnerClient interface, each timed, counted and traced by `instrumentPartner`. */
export const PARTNER_OPERATIONS = [
  'login',
  'getTenant',
  'createPayment',
  'checkPayment',
  'getPayment',
  'solicitTransferForCustomer',
  'transferToKey',
  'checkTransfer',
  'setNotificationUrl',
] as const satisfies readonly (keyof PartnerClient)[];

/** What a partner call's metrics and span call its ending: `ok`, or the PartnerError's kind (`outcome_unknown` for a create that may have happened). */
export function partnerOutcome(error: unknown): string {
  if (!(error instanceof PartnerError)) return 'error';
  return error.details.outcomeUnknown ? 'outcome_unknown' : error.kind;
}

/**
 * The partner client with every operation timed into `metrics` and, when tracing, in a client span
 * `partner <operation>` (a child of the request's span, when a request made the call). The client
 * itself is unchanged: what is not an operation is read through to it.
 */
export function instrumentPartner(partner: PartnerClient, metrics: Metrics): PartnerClient {
  const instrumented = Object.create(partner) as Record<string, unknown>;
  for (const operation of PARTNER_OPERATIONS) {
    if (typeof partner[operation] !== 'function') continue;
    // Looked up at each call: a client whose method is replaced later (a test's spy) is called as it is then.
    const call = (args: unknown[]) => (partner[operation] as (this: PartnerClient, ...args: unknown[]) => Promise<unknown>).apply(partner, args);
    instrumented[operation] = async (...args: unknown[]) => {
      const started = performance.now();
      const span = tracing()
        ? tracer.startSpan(`partner ${operation}`, { kind: SpanKind.CLIENT, attributes: { 'pix.partner.operation': operation } })
        : undefined;
      try {
        const result = span ? await context.with(trace.setSpan(context.active(), span), () => call(args)) : await call(args);
        metrics.partnerCall(operation, 'ok', (performance.now() - started) / 1000);
        return result;
      } catch (error) {
        const outcome = partnerOutcome(error);
        metrics.partnerCall(operation, outcome, (performance.now() - started) / 1000);
        if (span) {
          const status = error instanceof PartnerError ? error.details.status : undefined;
          if (status) span.setAttribute('http.response.status_code', status);
          failed(span, outcome);
        }
        throw error;
      } finally {
        span?.end();
      }
    };
  }
  return instrumented as unknown as PartnerClient;
}

/** Outcomes whose recording request is remembered for their delivery's span, at most (the oldest forgotten first). */
const REMEMBERED_OUTCOMES = 1000;

/**
 * The merchant deliveries' telemetry: a client span per attempt, its context in the POST's headers,
 * and the counts. A delivery runs from the outbox, after the request that recorded its outcome has
 * been answered: `recorded(eventId)`, called as the outcome is published, remembers that request's
 * span, and each attempt at that event (here, while remembered) is its child. Otherwise (another
 * instance recorded it, or a restart came between) the attempt is a trace of its own.
 */
export function deliveryTelemetry(metrics: Metrics, url: string): DeliveryTelemetry & { recorded(eventId: string): void } {
  const target = new URL(url);
  const recordedIn = new Map<string, SpanContext>();
  return {
    recorded(eventId) {
      if (!tracing()) return;
      const span = trace.getSpanContext(context.active());
      if (!span) return;
      recordedIn.set(eventId, span);
      if (recordedIn.size > REMEMBERED_OUTCOMES) recordedIn.delete(recordedIn.keys().next().value!);
    },
    async send(delivery, headers, post) {
      if (!tracing()) return post();
      // Never the ambient context: the delivery worker's timers may run in whichever request woke them.
      const recording = recordedIn.get(delivery.eventId);
      const parent = recording ? trace.setSpanContext(ROOT_CONTEXT, recording) : ROOT_CONTEXT;
      const span = tracer.startSpan(
        'merchant webhook delivery',
        {
          kind: SpanKind.CLIENT,
          attributes: {
            'http.request.method': 'POST',
            // Not the path: a merchant's URL may carry a secret segment.
            'server.address': target.hostname,
            'pix.event.id': delivery.eventId,
            'pix.event.type': delivery.type,
            'pix.delivery.attempt': delivery.attempt,
          },
        },
        parent,
      );
      const active = trace.setSpan(parent, span);
      // Whatever propagator the SDK registered (W3C traceparent by default) writes the span's context.
      propagation.inject(active, headers);
      try {
        const response = await context.with(active, post);
        span.setAttribute('http.response.status_code', response.status);
        if (response.status < 200 || response.status >= 300) failed(span, String(response.status));
        else recordedIn.delete(delivery.eventId);
        return response;
      } catch (error) {
        failed(span, (error as Error).name === 'TimeoutError' ? 'timeout' : 'connection_failed');
        throw error;
      } finally {
        span.end();
      }
    },
    attempted: (result) => metrics.delivery(result),
  };
}
