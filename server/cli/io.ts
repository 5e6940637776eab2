/**
 * What every command shares: its input and output, argument parsing, printing, and the partner
 * client built from the configuration.
 */
import { readFile } from 'node:fs/promises';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { z } from 'zod/mini';
import { Reference } from '../../src/shared/contract.ts';
import { normalizeDocument } from '../../src/shared/document.ts';
import { parseInput } from '../../src/shared/errors.ts';
import { databaseDeadlines } from '../config/database.ts';
import { readSettings, type PartnerConfig } from '../config/index.ts';
import { createPartnerClient, type ObservedAnswer, type PartnerClient } from '../partner/client.ts';
import { fileTokenStore, type TokenStore } from '../partner/token-store.ts';
import type { Store } from '../store/store.ts';

export interface CliIo {
  out: (text: string) => void;
  err: (text: string) => void;
  env: Record<string, string | undefined>;
  /** Raw output, a chunk at a time, awaited before the next (the streamed report); default: stdout. */
  write?: (chunk: string) => void | Promise<void>;
  /** Ends a long-running command (listen) as Ctrl-C would; default: SIGINT and SIGTERM. */
  signal?: AbortSignal;
}

/** Bad arguments, or arguments out of the shared limits: exit code 2, nothing sent. */
export class UsageError extends Error {}

/** A command that already reported its problem and only needs the exit code. */
export class ExitCode extends Error {
  constructor(readonly code: number) {
    super(`exit ${code}`);
  }
}

export type Row = [string, string | number | boolean | null | undefined];

const COMMON = { json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } } as const;

type Parsed<T extends NonNullable<ParseArgsConfig['options']>> = ReturnType<
  typeof parseArgs<{ args: string[]; options: typeof COMMON & T; allowPositionals: true; strict: true }>
>;

/** The command's options and positionals; a malformed argument is a UsageError (exit code 2). */
export function parse<T extends NonNullable<ParseArgsConfig['options']>>(args: string[], options: T): Parsed<T> {
  try {
    return parseArgs({ args, options: { ...COMMON, ...options }, allowPositionals: true, strict: true });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}

/**
 * Checks a command's arguments against a schema of the shared rules (src/shared/contract.ts, the
 * limits of src/shared/limits.ts), the one the partner client checks its input with, before anything
 * is sent: every problem is named by its option (`flags`: field -> option), as a UsageError (exit 2).
 */
export function checkArgs<T>(schema: z.ZodMiniType<T>, input: unknown, flags: Record<string, string>): T {
  const parsed = parseInput(schema, input);
  if (parsed.success) return parsed.data;
  const fields = parsed.body.error.fields ?? {};
  throw new UsageError(
    Object.entries(fields)
      .map(([field, problem]) => `${flags[field] ?? field} ${problem}`)
      .join('; '),
  );
}

const ReferenceArgument = z.object({ reference: Reference });

/** The `<reference>` argument of `what` (`payment show`), checked by the shared rule. */
export function referenceArg(text: string | undefined, what: string): string {
  if (!text) throw new UsageError(`${what} needs the reference`);
  return checkArgs(ReferenceArgument, { reference: text }, { reference: '<reference>' }).reference;
}

/** A positive whole number option (a count, a limit), or `fallback` when not given. */
export function count(text: string | undefined, flag: string, fallback: number): number {
  if (text === undefined) return fallback;
  if (!/^\d+$/.test(text) || Number(text) < 1) throw new UsageError(`${flag} must be a positive whole number`);
  return Number(text);
}

export function reais(text: string | undefined, flag: string): number {
  if (text === undefined) throw new UsageError(`${flag} is required`);
  if (!/^\d+(\.\d{1,2})?$/.test(text)) throw new UsageError(`${flag} must be an amount in reais like 10.50`);
  return Number(text);
}

/** An epoch ms as ISO 8601, or null. */
export const isoOrNull = (ms: number | null): string | null => (ms === null || Number.isNaN(new Date(ms).getTime()) ? null : new Date(ms).toISOString());

/** Shows only the ends of a document or CPF key (a CNPJ's letters too), so terminal output can be pasted safely. */
export function maskDocument(value: string): string {
  const plain = normalizeDocument(value);
  return plain.length >= 11 ? `${plain.slice(0, 3)}.***.***-${plain.slice(-2)}` : '***';
}

/** A list: as JSON, or a line a row, or `empty` where there is no row. */
export function printList<T>(io: CliIo, json: boolean | undefined, data: T[], empty: string, line: (row: T) => string): void {
  io.out(json ? JSON.stringify(data, null, 2) : data.length === 0 ? empty : data.map(line).join('\n'));
}

export function print(io: CliIo, json: boolean, data: unknown, rows: Row[]): void {
  if (json) {
    io.out(JSON.stringify(data, null, 2));
    return;
  }
  const width = Math.max(...rows.map(([k]) => k.length));
  io.out(rows.map(([k, v]) => `${k.padEnd(width)}  ${v ?? '-'}`).join('\n'));
}

/**
 * The partner client of a command. Its token (it lives five years: a command should not log in each
 * time) is kept where the proxy keeps its own (cliTokenStore).
 */
/**
 * The partner's answers a command saw (the client's `observe`), each with its shape (values replaced
 * by their types: no token, key or document shows): what `doctor` and `login` print of an answer the
 * client could not read.
 */
export function observedAnswers(): {
  observe: (answer: ObservedAnswer) => void;
  last: (operation: string, error?: boolean) => ObservedAnswer | undefined;
} {
  const answers: ObservedAnswer[] = [];
  return {
    observe: (answer) => answers.push(answer),
    last: (operation, error = false) => answers.filter((a) => a.operation === operation && (a.error === true) === error).at(-1),
  };
}

/** How an answer's shape is printed (`answer: {"data":{"token":"string"}}`). */
export const shapeLine = (shape: unknown): string => `answer: ${JSON.stringify(shape)}`;

export async function client(config: PartnerConfig, env: CliIo['env'], observe?: (answer: ObservedAnswer) => void): Promise<PartnerClient> {
  let ca: string | null = null;
  if (config.caFile) {
    try {
      ca = await readFile(config.caFile, 'utf8');
    } catch {
      throw new UsageError(
        config.sandbox
          ? `no sandbox certificate at ${config.caFile}: start the sandbox first, in this directory (pix-checkout sandbox; npm run sandbox in the repository)`
          : `cannot read PIX_CA_FILE ${config.caFile}`,
      );
    }
  }
  return createPartnerClient({
    baseUrl: config.baseUrl,
    credentials: config.credentials,
    token: config.token,
    tokenStore: cliTokenStore(config, env),
    userAgent: config.userAgent,
    ca,
    timeoutMs: config.timeoutMs,
    ...(observe ? { observe } : {}),
  });
}

/**
 * The proxy's own store, as the proxy opens it: Postgres when PIX_DATABASE_URL names one, else the
 * SQLite file in PIX_DATA_DIR. Nothing kept in memory: the command is short-lived.
 */
export async function openCliStore(env: CliIo['env']): Promise<Store> {
  // Imported here: only the commands that read or write the store open it.
  const { openStore } = await import('../store/open.ts');
  // Read as the proxy reads them; a bad PIX_DATABASE_URL is named, never repeated: it may hold a password.
  const { values, problems } = readSettings(env, ['PIX_DATABASE_URL', 'PIX_DATA_DIR']);
  if (problems.length > 0) throw new UsageError(problems.join('; '));
  return openStore({ dataDir: values.PIX_DATA_DIR, databaseUrl: values.PIX_DATABASE_URL, deadlines: databaseDeadlines(), cacheSize: 0 });
}

/**
 * Where the command line keeps the partner's token: with PIX_DATABASE_URL, in the proxy's database
 * (the room the proxy keeps its own in, under the same key: one token for both, nothing on the
 * disk of the machine a command runs on); else in the 0600 file PIX_TOKEN_FILE (SQLite, or no proxy).
 * The database is opened for each load or save only: a command is short-lived.
 */
export function cliTokenStore(config: PartnerConfig, env: CliIo['env']): TokenStore {
  const { values, problems } = readSettings(env, ['PIX_DATABASE_URL']);
  if (problems.length > 0) throw new UsageError(problems.join('; '));
  if (values.PIX_DATABASE_URL === undefined) return fileTokenStore(config.tokenFile);
  const withTokens = async <T>(use: (tokens: TokenStore) => Promise<T>): Promise<T> => {
    const store = await openCliStore(env);
    try {
      return await use(store.tokens);
    } finally {
      await store.close();
    }
  };
  return {
    load: (key) => withTokens((tokens) => tokens.load(key)),
    save: (key, token) => withTokens((tokens) => tokens.save(key, token)),
    clear: (key) => withTokens((tokens) => tokens.clear(key)),
  };
}
