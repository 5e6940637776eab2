/**
 * The one error body every endpoint of the proxy answers with, and the turning of zod issues into
 * it, so that a bad field is named the same way in the proxy, the client and the sandbox.
 */
import { z } from 'zod/mini';

export const ERROR_CODES = [
  'invalid_request',
  'invalid_json',
  'unsupported_media_type',
  'payload_too_large',
  'invalid_reference',
  'not_found',
  'method_not_allowed',
  'unauthorized',
  'forbidden',
  'rate_limited',
  /** Too many live status streams open from one address, or of one payment: poll instead. */
  'too_many_streams',
  /** The request contradicts what exists (an order id already used with another value). */
  'conflict',
  /** An Idempotency-Key sent again with a different request (payouts.ts). */
  'idempotency_key_reused',
  /** A refund of a checkout that has not been paid. */
  'checkout_not_paid',
  /** A refund that would take the refunds past what the checkout was paid. */
  'refund_exceeds_paid',
  /** A refund of a checkout whose payment is disputed (a final status an authenticated notification contradicts), until an operator resolves it. */
  'disputed',
  /** A checkout's payment expired and no more renewals are allowed. */
  'renewals_exhausted',
  /** Open-amount payments are off on this server: use a checkout. */
  'open_amount_disabled',
  /** The server is up but cannot serve yet (store closed, partner unreachable). */
  'not_ready',
  /** This instance is stopping (a deploy): /ready and new work answer it with Retry-After; send again, another instance takes it. */
  'shutting_down',
  /**
   * A checkout's earlier code cannot be confirmed unpaid right now (the partner is down, or its
   * answer decides nothing), so no new code is issued: it may have been paid. Try again later.
   */
  'status_unverified',
  /** The proxy's database cannot serve (damaged, unwritable, full): the operator must act. */
  'store_unavailable',
  'upstream_refused',
  'upstream_unavailable',
  'upstream_timeout',
  'internal',
] as const;
export type ErrorCode = (typeof ERROR_CODES)[number];

export const ErrorBody = /* @__PURE__ */ z.object({
  error: z.object({
    code: z.string(),
    message: z.string(),
    /** Field path (dotted) to what is wrong with it. */
    fields: z.optional(z.record(z.string(), z.string())),
  }),
});
export type ErrorBody = z.infer<typeof ErrorBody>;

export function errorBody(code: ErrorCode, message: string, fields?: Record<string, string>): ErrorBody {
  return { error: fields ? { code, message, fields } : { code, message } };
}

/** The subset of a zod issue this module reads; zod and zod/mini issues both fit. */
export interface Issue {
  readonly code: string;
  readonly path: readonly PropertyKey[];
  readonly message: string;
  readonly expected?: unknown;
  readonly keys?: readonly string[];
  readonly input?: unknown;
}

function describe(issue: Issue): string {
  if (issue.code === 'invalid_type') {
    return issue.input === undefined ? 'is required' : `must be ${article(String(issue.expected))}`;
  }
  if (issue.code === 'invalid_value' && issue.message === 'Invalid input') return 'is not one of the accepted values';
  // Every other check in src/shared carries its own sentence.
  return issue.message === 'Invalid input' ? 'is invalid' : issue.message;
}

function article(type: string): string {
  return /^[aeiou]/.test(type) ? `an ${type}` : `a ${type}`;
}

/** Field path -> what is wrong, one entry per field (the first problem found). */
export function issuesToFields(issues: readonly Issue[]): Record<string, string> {
  // No prototype: a field named `toString` or `__proto__` is a key like any other.
  const fields = Object.create(null) as Record<string, string>;
  for (const issue of issues) {
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys ?? []) fields[[...issue.path, key].join('.')] ??= 'is not a known field';
      continue;
    }
    const path = issue.path.map(String).join('.') || 'body';
    fields[path] ??= describe(issue);
  }
  // Back to a plain object; a `__proto__` key stays an own property (fromEntries defines, never sets).
  return Object.fromEntries(Object.entries(fields));
}

/**
 * Parses `input` with `schema`; on failure, the 400 body naming every bad field. Issues carry the
 * input only so "is required" can be told from "must be a string"; it never reaches a message.
 */
export function parseInput<T>(
  schema: z.ZodMiniType<T>,
  input: unknown,
): { success: true; data: T } | { success: false; body: ErrorBody; issues: readonly Issue[] } {
  const result = schema.safeParse(input, { reportInput: true });
  // A `__proto__` key (JSON.parse makes it an own property) vanishes in an object's copy, so no
  // schema can see it: it is named here as the unknown field it is.
  const proto: Issue[] =
    typeof input === 'object' && input !== null && Object.hasOwn(input, '__proto__')
      ? [{ code: 'unrecognized_keys', path: [], keys: ['__proto__'], message: '' }]
      : [];
  const issues = [...(result.success ? [] : result.error.issues), ...proto];
  return issues.length === 0 && result.success ? { success: true, data: result.data } : { success: false, body: invalidRequest(issues), issues };
}

/** A 400 body naming every bad field: `value must be at least 0.20; name is required`. */
export function invalidRequest(issues: readonly Issue[]): ErrorBody {
  const fields = issuesToFields(issues);
  const message = Object.entries(fields)
    .map(([path, problem]) => `${path} ${problem}`)
    .join('; ');
  return errorBody('invalid_request', message, fields);
}
