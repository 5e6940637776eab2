/**
 * The proxy's structured logs: pino, one JSON object a line. Redaction is a second line of defence:
 * the code never logs headers or bodies, and a secret that slips into a logged object is blanked.
 */
import { writeSync } from 'node:fs';
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
  'metricsToken',
  'document',
  'customer_document',
  'password',
  'dataKey',
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
        : (Object.defineProperties(Object.create(Object.getPrototypeOf(object) as object | null), Object.getOwnPropertyDescriptors(object)) as Record<
            string,
            unknown
          >);
      copy[key] = next;
    }
  }
  return (copy ?? value) as T;
}

/**
 * Lines gathered for up to 50 ms (or 64 KiB), then handed to stdout as one asynchronous write, in
 * order. pino's asynchronous stdout (sonic-boom) alone writes as soon as it can: at a line per
 * request that is thousands of writes a second, each a round trip through the thread pool, which
 * with the line's formatting cost a third of a status read's throughput (bench:status). What is
 * pending is written synchronously on exit; a process killed outright loses at most those 50 ms.
 */
class BatchedLines implements DestinationStream {
  private lines: string[] = [];
  private pending = 0;
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly out: ReturnType<typeof pino.destination>,
    private readonly delayMs = 50,
    private readonly maxPending = 64 * 1024,
  ) {
    process.once('exit', () => {
      // Synchronously, both: an asynchronous write started now would go to the thread pool as the
      // process ends, and a busy machine ends it first (the last line, "stopped", was lost that way).
      const text = this.take();
      try {
        out.flushSync();
        if (text) writeSync(1, text); // this batcher is stdout's (createLogger)
      } catch {
        // Nothing more can be done for stdout as the process ends (closed, or not yet open).
      }
    });
  }

  write(line: string): void {
    this.lines.push(line);
    this.pending += line.length;
    if (this.pending >= this.maxPending) this.hand();
    // Not keeping the process alive: one about to exit writes what is pending on exit.
    else this.timer ??= setTimeout(this.hand, this.delayMs).unref();
  }

  /** pino's `logger.flush(callback)`: what is pending, written. */
  flush(callback?: (error?: Error) => void): void {
    this.hand();
    this.out.flush(callback);
  }

  private readonly hand = (): void => {
    const text = this.take();
    if (text) this.out.write(text);
  };

  /** The lines gathered so far, as one text ('' when none), no longer pending. */
  private take(): string {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (this.lines.length === 0) return '';
    const text = this.lines.length === 1 ? this.lines[0]! : this.lines.join('');
    this.lines = [];
    this.pending = 0;
    return text;
  }
}

/** One stdout destination for every logger in the process (each app builds one unless given it). */
let stdout: BatchedLines | undefined;

/**
 * pino's ISO time, built once per millisecond: at thousands of lines a second, most lines share
 * their millisecond with the one before.
 */
let lastMs = -1;
let lastTime = '';
function isoTime(): string {
  const ms = Date.now();
  if (ms !== lastMs) {
    lastMs = ms;
    lastTime = `,"time":"${new Date(ms).toISOString()}"`;
  }
  return lastTime;
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
      timestamp: isoTime,
    },
    options.destination ?? (stdout ??= new BatchedLines(pino.destination({ dest: 1, sync: false }))),
  );
  // A child's bindings are redacted too (pino's bindings formatter does not reach children). Every
  // child is created from this one, so they all inherit the wrapper.
  // eslint-disable-next-line @typescript-eslint/unbound-method -- called below with the logger it is called on, a child's child included
  const child = logger.child;
  // Each child is Object.create(parent): this wrapper, set on the root, is what every child calls too.
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
