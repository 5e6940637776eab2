/**
 * `pix-checkout numbering [show] | reset`: what the proxy knows of the partner's status codes
 * (domain/numbering/status-numbering.ts), from its store, and ending a mismatch once the setting is fixed.
 */
import { userInfo } from 'node:os';
import { partnerConfig } from '../config/index.ts';
import { StatusNumbering, type BookReport } from '../domain/numbering/status-numbering.ts';
import { createLogger } from '../log.ts';
import { tokenStoreKey } from '../partner/token-session.ts';
import { UsageError, openCliStore, parse, type CliIo } from './io.ts';

export const HELP = `Usage: pix-checkout numbering [show] [--json]
       pix-checkout numbering reset [--json]

What the proxy knows of the partner's status codes, read from its store (PIX_DATA_DIR, default .data,
or PIX_DATABASE_URL), under the setting given here (PIX_STATUS_CODES, PIX_TRANSFER_STATUS_CODES):
show prints every code, payments' and transfers', with what the setting says it means, its state
(unverified, verified, mismatch, or unknown: a code the setting does not list, seen) and the evidence.
reset forgets every verdict of this setting (mismatches included) in every instance sharing the store,
after you fixed the setting; each code then proves itself again. It writes an audit line (printed,
kept in the store and shown by show, and logged by each running instance when it reads it).`;

/** The store's key of the reset audit lines, per partner service and account. */
const auditKey = (scope: string) => `status-numbering-audit|${scope}`;
const AUDIT_KEPT = 20;

export async function numberingCommand(rest: string[], io: CliIo): Promise<void> {
  const { values, positionals } = parse(rest, {});
  if (values.help) return io.out(HELP);
  const [sub = 'show', extra] = positionals;
  if (sub !== 'show' && sub !== 'reset') throw new UsageError(`unknown numbering command ${sub}; use show or reset`);
  if (extra !== undefined) throw new UsageError(`numbering ${sub} takes no argument (got ${extra})`);
  const config = partnerConfig(io.env);
  const scope = tokenStoreKey(config.baseUrl, config.credentials?.email);
  const store = await openCliStore(io.env);
  try {
    const numbering = new StatusNumbering(config.statusCodes, createLogger({ level: 'silent' }), store.tokens, scope, {
      transferCodes: config.transferStatusCodes,
    });
    await numbering.load();
    const audit = parseAudit(await store.tokens.load(auditKey(scope)).catch(() => null));
    if (sub === 'show') {
      const report = numbering.report();
      const data = { payments: bookJson(report), transfers: bookJson(report.transfers), resets: audit };
      if (values.json) return io.out(JSON.stringify(data, null, 2));
      io.out([...bookLines('Payments (PIX_STATUS_CODES)', report), '', ...bookLines('Transfers (PIX_TRANSFER_STATUS_CODES)', report.transfers)].join('\n'));
      if (audit.length > 0) io.out(['', 'Resets:', ...audit.map((a) => `  ${a.at}  by ${a.by}: ${a.cleared}`)].join('\n'));
      return;
    }
    const before = numbering.report();
    const cleared = [before, before.transfers]
      .flatMap((book) => book.code_states.filter((c) => c.state === 'mismatch' || c.state === 'verified').map((c) => `${c.code} ${c.state}`))
      .join(', ');
    await numbering.reset();
    const line = {
      at: new Date().toISOString(),
      by: safeUser(),
      payments: before.configured,
      transfers: before.transfers.configured,
      cleared: `payments ${before.configured} (${before.state}), transfers ${before.transfers.configured} (${before.transfers.state}); forgot ${cleared || 'nothing'}`,
    };
    await store.tokens.save(auditKey(scope), JSON.stringify([...audit, line].slice(-AUDIT_KEPT)));
    if (values.json) return io.out(JSON.stringify(line));
    io.out(
      `pix-checkout numbering reset at ${line.at} by ${line.by}: ${line.cleared}. Every code proves itself again; running instances forget theirs at their next read (within seconds).`,
    );
  } finally {
    await store.close();
  }
}

function bookJson(book: BookReport) {
  return { configured: book.configured, state: book.state, codes: book.code_states };
}

function bookLines(title: string, book: BookReport): string[] {
  const lines = [`${title}: ${book.configured}  (${book.state})`];
  for (const c of book.code_states) {
    lines.push(`  ${String(c.code).padStart(4)}  ${(c.listed ?? 'not listed').padEnd(10)}  ${c.state}`);
    for (const e of c.evidence) lines.push(`          ${e}`);
  }
  return lines;
}

interface AuditLine {
  at: string;
  by: string;
  cleared: string;
}

function parseAudit(text: string | null): AuditLine[] {
  if (!text) return [];
  try {
    const lines = JSON.parse(text) as unknown;
    return Array.isArray(lines) ? (lines as AuditLine[]) : [];
  } catch {
    return [];
  }
}

function safeUser(): string {
  try {
    return userInfo().username;
  } catch {
    return 'unknown';
  }
}
