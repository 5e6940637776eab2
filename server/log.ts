/**
 * The proxy's structured logs: pino, one JSON object a line. Redaction is a second line of defence:
 * the code never logs headers or bodies, and these paths blank a secret that slips into an object.
 */
import { pino, type DestinationStream, type Logger, type LevelWithSilent } from 'pino';

export type { Logger } from 'pino';

/** Keys that may hold a secret or a customer's data, at the top level or one or two levels down. */
const SECRET_KEYS = [
  'authorization',
  'cookie',
  'token',
  'access_token',
  'access_key',
  'accessKey',
  'apiKey',
  'api_key',
  'document',
  'customer_document',
  'password',
];
export const REDACT_PATHS = SECRET_KEYS.flatMap((key) => [key, `*.${key}`, `*.*.${key}`]);

export interface LoggerOptions {
  level?: LevelWithSilent;
  /** Where lines go (default stdout); tests pass a stream to read them. */
  destination?: DestinationStream;
}

export function createLogger(options: LoggerOptions = {}): Logger {
  return pino(
    {
      level: options.level ?? 'info',
      base: { service: 'pix-checkout' },
      redact: { paths: REDACT_PATHS, censor: '[redacted]' },
      timestamp: pino.stdTimeFunctions.isoTime,
    },
    // stdout written asynchronously (sonic-boom): a line per request must not cost a blocking write
    // each; lines that pile up while one write is in flight go out together. pino flushes what is
    // left synchronously when the process exits.
    options.destination ?? pino.destination({ dest: 1, sync: false }),
  );
}

// The request's id, set by the app on every request and carried by its log lines: c.get('reqId').
declare module 'hono' {
  interface ContextVariableMap {
    reqId: string;
  }
}
