/**
 * The proxy's structured logs: pino, one JSON object a line. Redaction is a second line of defence:
 * the code never logs headers or bodies, and a secret that slips into a logged object is blanked.
 */
import { pino, type DestinationStream, type Logger, type LevelWithSilent } from 'pino';

export type { Logger } from 'pino';

/** Keys that may hold a secret or a customer's data, blanked at the top level or up to three levels down. */
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
const SECRET = new Set(SECRET_KEYS);
const CENSOR = '[redacted]';
/** Levels below the top that are searched: `x`, `*.x`, `*.*.x` and `*.*.*.x`. */
const DEPTH = 3;

/**
 * `value` with every secret key's value replaced by the censor, searched `depth` levels down. The same
 * object when nothing is found, so the usual line (a handful of strings and numbers) costs a Set
 * lookup per key and no copy. A copy keeps its prototype and own properties, so an Error stays one.
 *
 * Why not pino's `redact`: with wildcard paths (`*.token`), its redactor runs over every value of
 * every line, a third of a status read's cost at `info` (bench:status).
 */
export function redactSecrets<T>(value: T, depth = DEPTH): T {
  if (value === null || typeof value !== 'object' || ArrayBuffer.isView(value)) return value;
  const object = value as Record<string, unknown>;
  let copy: Record<string, unknown> | undefined;
  for (const key of Object.keys(object)) {
    const inner = object[key];
    let next = inner;
    if (SECRET.has(key)) {
      if (inner !== undefined) next = CENSOR;
    } else if (depth > 0) next = redactSecrets(inner, depth - 1);
    if (next !== inner) {
      copy ??= Array.isArray(object)
        ? ([...object] as unknown as Record<string, unknown>)
        : (Object.defineProperties(Object.create(Object.getPrototypeOf(object)), Object.getOwnPropertyDescriptors(object)) as Record<string, unknown>);
      copy[key] = next;
    }
  }
  return (copy ?? value) as T;
}

export interface LoggerOptions {
  level?: LevelWithSilent;
  /** Where lines go (default stdout); tests pass a stream to read them. */
  destination?: DestinationStream;
}

export function createLogger(options: LoggerOptions = {}): Logger {
  const logger = pino(
    {
      level: options.level ?? 'info',
      base: { service: 'pix-checkout' },
      formatters: { log: (object) => redactSecrets(object) },
      timestamp: pino.stdTimeFunctions.isoTime,
    },
    // stdout written asynchronously (sonic-boom): a line per request must not cost a blocking write
    // each; lines that pile up while one write is in flight go out together. pino flushes what is
    // left synchronously when the process exits.
    options.destination ?? pino.destination({ dest: 1, sync: false }),
  );
  // A child's bindings are redacted too (pino's bindings formatter does not reach children). Every
  // child is created from this one, so they all inherit the wrapper.
  const child = logger.child;
  logger.child = function (this: Logger, bindings, childOptions) {
    return child.call(this, redactSecrets(bindings), childOptions);
  } as typeof logger.child;
  return logger;
}

// The request's id, set by the app on every request and carried by its log lines: c.get('reqId').
declare module 'hono' {
  interface ContextVariableMap {
    reqId: string;
  }
}
