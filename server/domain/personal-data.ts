/**
 * Personal data with an end (LGPD): what of a customer the proxy keeps, how (a document encrypted at
 * rest under PIX_DATA_KEY), for how long (PIX_RETENTION_DAYS after a record is final), and the answers
 * to a data subject's request (export, erase) by CPF/CNPJ. docs/personal-data.md says the
 * same for an operator.
 *
 * What is personal: a checkout's customer name and document (sent to the partner with each of its
 * codes, so kept while it may issue one), a payout's Pix key (a CPF, an e-mail, a phone) and its
 * customer document (already forgotten once the partner answered), and the partner's raw
 * notifications. Money facts (amounts, references, transaction ids, states, times, refunds) stay.
 */
// A cipher's nonce is the operating system's (see seal).
// eslint-disable-next-line no-restricted-imports
import { createCipheriv, createDecipheriv, createHmac, hkdfSync, randomBytes } from 'node:crypto';
import { normalizeDocument } from '../../src/shared/document.ts';
import type { Logger } from '../log.ts';
import { storedStatusMeaning } from '../partner/wire.ts';
import type { CheckoutRecord, PaymentRecord, PayoutRecord, Store } from '../store/store.ts';
import { ERASED_KEY, SEALED_PREFIX } from '../store/personal-data/sql.ts';
import type { PurgeCounts } from '../store/personal-data/types.ts';
import { REAL_CLOCK, type Clock, type Runtime, type Timer } from '../runtime/runtime.ts';

export type { PurgeCounts } from '../store/personal-data/types.ts';

/** What an erased Pix key reads as (the column is required); an erased name or document is null. */
export const ERASED = ERASED_KEY;

const DAY_MS = 86_400_000;

/** The prefix of a value sealed with AES-256-GCM under the first key format; a later format (a rotation) takes `v2:`. */
const SEALED_V1 = SEALED_PREFIX;
const IV_BYTES = 12;
const TAG_BYTES = 16;

/** PIX_DATA_KEY's value as the setting checks it: 32 bytes as 64 hex digits or as base64 (44 characters). */
export function parseDataKey(text: string): Buffer | null {
  const trimmed = text.trim();
  if (/^[0-9a-fA-F]{64}$/.test(trimmed)) return Buffer.from(trimmed, 'hex');
  if (/^[A-Za-z0-9+/_-]{43}=?$/.test(trimmed)) {
    const bytes = Buffer.from(trimmed.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
    if (bytes.length === 32) return bytes;
  }
  return null;
}

/** A stored value that cannot be opened: sealed under another key, damaged, or sealed while no key is set now. Its message names no value. */
export class DataKeyError extends Error {
  override readonly name = 'DataKeyError';
}

/** Whether a stored value is sealed (encrypted) rather than in clear. */
export const isSealed = (stored: string): boolean => stored.startsWith(SEALED_V1);

/**
 * A document shown with its middle hidden, enough for a receipt or an operator's list:
 * `***.456.789-**` for a CPF, `**.345.678/0001-**` for a CNPJ, `***` for anything else.
 */
export function maskDocument(document: string): string {
  const d = normalizeDocument(document);
  if (d.length === 11) return `***.${d.slice(3, 6)}.${d.slice(6, 9)}-**`;
  if (d.length === 14) return `**.${d.slice(2, 5)}.${d.slice(5, 8)}/${d.slice(8, 12)}-**`;
  return '***';
}

/**
 * Seals and opens the personal fields kept at rest. With a key: AES-256-GCM, a random 12-byte IV per
 * value, stored as `v1:` + base64(iv | tag | ciphertext), and a keyed hash (HMAC-SHA256 under a key
 * derived from PIX_DATA_KEY) of the normalized document beside it, so a data subject's records are
 * found without opening every row. Without a key values stay as given (a checkout needs its
 * customer's document for each code it issues) and there is no hash: an unkeyed hash of an 11-digit
 * CPF is found by trying them all, so it would hide nothing. A value in clear (a row from before the
 * key) always reads back as it is.
 */
export class PersonalDataCipher {
  private readonly encryptionKey: Buffer | null;
  private readonly hashKey: Buffer | null;

  /** `key`: PIX_DATA_KEY's text (hex or base64 of 32 bytes), or undefined for none. */
  constructor(key?: string) {
    const bytes = key === undefined ? null : parseDataKey(key);
    if (key !== undefined && !bytes) throw new DataKeyError('PIX_DATA_KEY must be 32 bytes, as 64 hex digits or base64 (openssl rand -base64 32)');
    this.encryptionKey = bytes;
    this.hashKey = bytes ? Buffer.from(hkdfSync('sha256', bytes, Buffer.alloc(0), 'pix-checkout document hash v1', 32)) : null;
  }

  /** Whether values are sealed (PIX_DATA_KEY is set). */
  get keyed(): boolean {
    return this.encryptionKey !== null;
  }

  /** The value as stored: sealed with a key, as given without one. */
  seal(value: string): string;
  seal(value: string | null): string | null;
  seal(value: string | null): string | null {
    if (value === null || !this.encryptionKey) return value;
    // A cipher's nonce is the operating system's, never a runtime's: a seeded one repeats, and a repeated IV under one key reveals the plaintexts.
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.encryptionKey, iv);
    const sealed = Buffer.concat([cipher.update(value, 'utf8'), cipher.final()]);
    return SEALED_V1 + Buffer.concat([iv, cipher.getAuthTag(), sealed]).toString('base64');
  }

  /** The value a stored one holds; throws DataKeyError (naming no value) when a sealed one cannot be opened with this key. */
  open(stored: string): string;
  open(stored: string | null): string | null;
  open(stored: string | null): string | null {
    if (stored === null || !isSealed(stored)) return stored;
    if (!this.encryptionKey) throw new DataKeyError('a stored document is encrypted but PIX_DATA_KEY is not set: set the key it was stored under');
    const bytes = Buffer.from(stored.slice(SEALED_V1.length), 'base64');
    if (bytes.length < IV_BYTES + TAG_BYTES) throw new DataKeyError('a stored encrypted document is damaged');
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.encryptionKey, bytes.subarray(0, IV_BYTES));
      decipher.setAuthTag(bytes.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
      return Buffer.concat([decipher.update(bytes.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString('utf8');
    } catch {
      throw new DataKeyError('a stored document does not open with PIX_DATA_KEY: it was stored under another key (or is damaged)');
    }
  }

  /** The keyed hash of a document (normalized: punctuation off, letters upper-case), or null without a key. */
  documentHash(document: string | null): string | null {
    if (document === null || !this.hashKey) return null;
    return createHmac('sha256', this.hashKey).update(normalizeDocument(document)).digest('hex');
  }
}

/** Records final before this are erased: `days` before `now`. */
export const retentionCutoff = (now: number, days: number): number => now - days * DAY_MS;

/** What a data subject's export lists: every record held about one document, personal fields opened. */
export interface PersonalDataExport {
  document: string;
  checkouts: {
    checkout_id: string;
    order_id: string;
    value: number;
    description: string | null;
    name: string | null;
    document: string | null;
    created_at: string;
    erased_at: string | null;
    payments: {
      reference: string;
      value: number;
      /** The partner's status as stored, in the proxy's numbering (1, 2, 3: PARTNER_STATUS). */
      partner_status: number;
      /** What it means: `pending`, `approved`, `canceled`, or `unknown` for another number. */
      partner_status_meaning: ReturnType<typeof storedStatusMeaning>;
      final: boolean;
      transaction_id: string;
      created_at: string;
      updated_at: string;
    }[];
  }[];
  payouts: {
    transfer_id: string;
    kind: 'payout' | 'refund';
    checkout_id: string | null;
    value: number;
    pix_key: string;
    pix_key_type: string | null;
    state: string;
    partner_reference: string | null;
    transaction_id: string;
    created_at: string;
    updated_at: string;
    erased_at: string | null;
  }[];
}

/** What an erase would do (`data erase --dry-run`): the records whose personal fields it would clear, and those it would leave. */
export interface ErasurePlan {
  /** Checkouts whose name and document would be erased. */
  checkouts: { checkout_id: string; order_id: string; created_at: string }[];
  /** Payouts and refunds whose Pix key (and document) would be erased. */
  payouts: { transfer_id: string; kind: 'payout' | 'refund'; state: string; created_at: string }[];
  /** Payouts being sent this moment: erase leaves them as they are. */
  in_flight: { transfer_id: string; kind: 'payout' | 'refund' }[];
}

/** What an erase did. */
export interface ErasureReport {
  checkouts: number;
  payouts: number;
  /** Payouts being sent this moment (their document is forgotten as the partner answers): left as they are. */
  inFlight: number;
}

export interface PersonalDataOptions {
  store: Store;
  cipher: PersonalDataCipher;
  /** PIX_RETENTION_DAYS. */
  retentionDays: number;
  now: () => number;
  /** Time and timers (default the real ones). */
  runtime?: Pick<Runtime, 'clock'> | undefined;
  log: Logger;
  /** Time between purges when started (the proxy's periodic one). */
  everyMs?: number;
  /** Rows of each kind per purge statement (default 500). */
  batch?: number;
}

/** The lease one instance holds while it purges (a shared store); the purge's statements are idempotent anyway. */
export const PURGE_LEASE = 'personal-data-purge';
/** Rows of each kind erased or pruned per purge transaction. */
const PURGE_BATCH = 500;
/** Legacy clear rows sealed per statement batch. */
const SEAL_BATCH = 200;
const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

/** The retention purge, and a data subject's export and erase. */
export class PersonalData {
  private timers: Timer[] = [];
  private running: Promise<unknown> | null = null;
  /** Set by stop(): a purge under way ends after its current batch (the next one goes on from there). */
  private stopping = false;

  private get clock(): Clock {
    return this.options.runtime?.clock ?? REAL_CLOCK;
  }

  constructor(private readonly options: PersonalDataOptions) {}

  /**
   * One purge: personal fields of records final before the cutoff erased, processed notifications
   * received and delivered outbox rows delivered before it pruned, and (with a key) documents still
   * in clear sealed. Null when another instance holds the purge's lease.
   */
  async purge(): Promise<(PurgeCounts & { sealed: number; cutoff: number }) | null> {
    const { store, cipher, retentionDays, now, log } = this.options;
    const lease = store.cluster ? await store.cluster.lease(PURGE_LEASE, 10 * 60_000) : true;
    if (!lease) return null;
    try {
      const at = now();
      const cutoff = retentionCutoff(at, retentionDays);
      const counts: PurgeCounts = { checkouts: 0, payouts: 0, notifications: 0, deliveries: 0 };
      // In batches, each its own short transaction: a first purge of a large store never holds SQLite's writer (or a Postgres statement) for long.
      for (let full = true; full && !this.stopping;) {
        const batch = await store.personalData.purge(cutoff, at, this.options.batch ?? PURGE_BATCH);
        for (const key of Object.keys(counts) as (keyof PurgeCounts)[]) counts[key] += batch[key];
        full = Object.values(batch).some((n) => n >= (this.options.batch ?? PURGE_BATCH));
      }
      const sealed = cipher.keyed && !this.stopping ? await this.sealClearDocuments() : 0;
      if (counts.checkouts + counts.payouts + counts.notifications + counts.deliveries + sealed > 0) {
        log.info({ ...counts, sealed, cutoff: new Date(cutoff).toISOString() }, 'personal data past retention erased');
      }
      return { ...counts, sealed, cutoff };
    } finally {
      if (store.cluster) await store.cluster.release(PURGE_LEASE).catch(() => undefined);
    }
  }

  /** Rows stored in clear (before PIX_DATA_KEY was set) sealed now, with their hash. */
  private async sealClearDocuments(): Promise<number> {
    const { store, cipher } = this.options;
    let sealed = 0;
    while (!this.stopping) {
      const rows = await store.personalData.unsealed(SEAL_BATCH);
      if (rows.length === 0) return sealed;
      for (const row of rows) {
        const done = await store.personalData.seal(row.id, row, {
          name: row.name === null || isSealed(row.name) ? row.name : cipher.seal(row.name),
          document: row.document === null || isSealed(row.document) ? row.document : cipher.seal(row.document),
          documentHash: cipher.documentHash(row.document === null ? null : cipher.open(row.document)),
        });
        if (done) sealed++;
      }
      if (rows.length < SEAL_BATCH) return sealed;
    }
    return sealed;
  }

  /** Starts the periodic purge: one a minute after start (or sooner, with a shorter period), then every `everyMs`. */
  start(): void {
    if (this.timers.length > 0) return;
    this.stopping = false;
    const everyMs = this.options.everyMs ?? 3_600_000;
    const tick = () => {
      this.running ??= this.purge()
        .catch((error: unknown) =>
          this.options.log.warn(
            { err: { message: error instanceof Error ? error.message : String(error) } },
            'the personal data purge failed; tried again later',
          ),
        )
        .finally(() => (this.running = null));
    };
    this.timers = [this.clock.setInterval(tick, everyMs).unref(), this.clock.setTimeout(tick, Math.min(everyMs, 60_000)).unref()];
  }

  /** Stops the periodic purge and waits for one under way. */
  async stop(): Promise<void> {
    this.stopping = true;
    for (const timer of this.timers) this.clock.clearTimer(timer);
    this.timers = [];
    await this.running;
  }

  /** Everything held about the person of `document`, personal fields opened (DataKeyError when one does not open). */
  async export(document: string): Promise<PersonalDataExport> {
    const { cipher } = this.options;
    const found = await this.find(document);
    const paymentsOf = (id: string) => found.payments.filter((p) => p.checkoutId === id);
    return {
      document: maskDocument(document),
      checkouts: found.checkouts.map((c) => ({
        checkout_id: c.id,
        order_id: c.orderId,
        value: c.valueCents / 100,
        description: c.description,
        name: cipher.open(c.name),
        document: cipher.open(c.document),
        created_at: iso(c.createdAt)!,
        erased_at: iso(c.personalDataErasedAt ?? null),
        payments: paymentsOf(c.id).map((p: PaymentRecord) => ({
          reference: p.reference,
          value: p.valueCents / 100,
          partner_status: p.partnerStatus,
          partner_status_meaning: storedStatusMeaning(p.partnerStatus),
          final: p.final,
          transaction_id: p.transactionId,
          created_at: iso(p.createdAt)!,
          updated_at: iso(p.updatedAt)!,
        })),
      })),
      payouts: found.payouts.map((p: PayoutRecord) => ({
        transfer_id: p.id,
        kind: p.checkoutId ? 'refund' : 'payout',
        checkout_id: p.checkoutId,
        value: p.valueCents / 100,
        pix_key: p.pixKey,
        pix_key_type: p.pixKeyType,
        state: p.state,
        partner_reference: p.reference,
        transaction_id: p.transactionId,
        created_at: iso(p.createdAt)!,
        updated_at: iso(p.updatedAt)!,
        erased_at: iso(p.personalDataErasedAt ?? null),
      })),
    };
  }

  /**
   * Erases the personal fields of every record of `document` now, final or not: no money rule reads
   * them, and a checkout that issues another code afterwards issues it without customer data (the
   * spec's name and document are optional). A payout in the middle of its create call is left as it
   * is (its document is forgotten as the partner answers).
   */
  async erase(document: string): Promise<ErasureReport> {
    const { checkouts, payouts, inFlight } = await this.select(document);
    const erased = await this.options.store.personalData.erase(
      checkouts.map((c) => c.id),
      payouts.map((p) => p.id),
      this.options.now(),
    );
    return { ...erased, inFlight: inFlight.length };
  }

  /** What erase(document) would erase now, erasing nothing (`data erase --dry-run`). */
  async planErase(document: string): Promise<ErasurePlan> {
    const { checkouts, payouts, inFlight } = await this.select(document);
    const kind = (p: PayoutRecord) => (p.checkoutId ? ('refund' as const) : ('payout' as const));
    return {
      checkouts: checkouts.map((c) => ({ checkout_id: c.id, order_id: c.orderId, created_at: iso(c.createdAt)! })),
      payouts: payouts.map((p) => ({ transfer_id: p.id, kind: kind(p), state: p.state, created_at: iso(p.createdAt)! })),
      in_flight: inFlight.map((p) => ({ transfer_id: p.id, kind: kind(p) })),
    };
  }

  /** The records erase clears (not erased yet), and the payouts it leaves because they are being sent: one rule for erase and its dry run. */
  private async select(document: string) {
    const found = await this.find(document);
    return {
      checkouts: found.checkouts.filter((c) => c.personalDataErasedAt == null),
      payouts: found.payouts.filter((p) => p.state !== 'sending' && p.personalDataErasedAt == null),
      inFlight: found.payouts.filter((p) => p.state === 'sending'),
    };
  }

  private find(document: string) {
    return this.options.store.personalData.find({ hash: this.options.cipher.documentHash(document), normalized: normalizeDocument(document) });
  }
}

/** The customer fields of a new checkout as stored: sealed, with the document's keyed hash. */
export function sealedCustomer(
  cipher: PersonalDataCipher,
  name: string | null,
  document: string | null,
): Pick<CheckoutRecord, 'name' | 'document' | 'documentHash'> {
  return { name: cipher.seal(name), document: cipher.seal(document), documentHash: cipher.documentHash(document) };
}
