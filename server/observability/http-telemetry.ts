/**
 * Each request's metrics and span (http/request-log.ts's RequestTelemetry): the HTTP histogram by
 * route pattern and status, and, when an OpenTelemetry SDK is loaded, a server span named
 * `METHOD /route/pattern` with the HTTP attributes, an error status on a 5xx, and the request's id.
 */
import { ROOT_CONTEXT, SpanKind, SpanStatusCode, context, propagation, trace } from '@opentelemetry/api';
import type { RequestTelemetry } from '../http/request-log.ts';
import type { Metrics } from './metrics.ts';
import { tracer, tracing } from './tracing.ts';

/** `maskPath` hides what a path may carry that a span must not (the webhook's secret segment). */
export function requestTelemetry(metrics: Metrics, maskPath: (path: string) => string): RequestTelemetry {
  return {
    start(method, path, carrier, getter, startTime) {
      if (!tracing()) return undefined;
      // The caller's trace (a load balancer's or a merchant server's traceparent), if it sent one.
      const parent = propagation.extract(ROOT_CONTEXT, carrier, getter);
      return tracer.startSpan(
        method,
        { kind: SpanKind.SERVER, ...(startTime === undefined ? {} : { startTime }), attributes: { 'http.request.method': method, 'url.path': maskPath(path) } },
        parent,
      );
    },
    within(span, next) {
      return context.with(trace.setSpan(context.active(), span), next);
    },
    answered(method, route, status, started, reqId, span) {
      metrics.httpServed(method, route, status, (performance.now() - started) / 1000);
      if (!span) return;
      span.updateName(`${method} ${route}`);
      span.setAttribute('http.route', route);
      span.setAttribute('http.response.status_code', status);
      span.setAttribute('pix.request_id', reqId);
      if (status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
      span.end();
    },
  };
}
