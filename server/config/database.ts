/**
 * Postgres's deadlines as the store takes them (store/postgres/deadlines.ts): the statement timeout
 * setting (PIX_DATABASE_STATEMENT_TIMEOUT_MS) and the tunables beside it. The store reads no
 * configuration; whoever opens it passes these.
 */
import { DEFAULTS } from './parse.ts';

export function databaseDeadlines(statementTimeoutMs: number = DEFAULTS.databaseStatementTimeoutMs) {
  const { lockTimeoutMs, idleInTransactionMs, answerMarginMs } = DEFAULTS.database;
  return { statementTimeoutMs, lockTimeoutMs, idleInTransactionMs, answerMarginMs };
}
