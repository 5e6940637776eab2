/**
 * The payments the proxy serves to browsers: creation, reads and live watching, all turned into the
 * browser's view. Concurrent reads of one payment share one upstream call, and every watcher of a
 * payment shares one poller, so a thousand open pages cost the partner service one call at a time.
 */
import { randomUUID } from 'node:crypto';
import type { CreatePaymentRequest, PaymentView } from '../src/shared/contract.ts';
import { PARTNER_STATUS } from '../src/shared/partner.ts';
import { isFinalStatus, type PaymentStatus } from '../src/shared/status.ts';
import { HttpError } from './http-errors.ts';
import type { PartnerClient } from './upstream/client.ts';

export interface PaymentServiceOptions {
  /** Seconds each QR code stays payable; sent to the partner and used to derive `expires_at`. */
  expirationSeconds: number;
  now: () => number;
  /** How often a watched, unfinished payment is asked about. */
  watchIntervalMs?: number;
}

interface Snapshot {
  reference: string;
  partnerStatus: number;
  value: number;
  brcode: string;
  qrCodeUrl: string;
  checkoutUrl: string;
  createdAt: string;
}

type Listener = (view: PaymentView) => void;

interface Watch {
  listeners: Set<Listener>;
  timer: ReturnType<typeof setTimeout> | undefined;
  last: PaymentStatus | null;
}

export class PaymentService {
  private readonly inflight = new Map<string, Promise<Snapshot>>();
  private readonly watches = new Map<string, Watch>();

  constructor(
    private readonly partner: PartnerClient,
    private readonly options: PaymentServiceOptions,
  ) {}

  async create(input: CreatePaymentRequest): Promise<PaymentView> {
    const created = await this.partner.createPayment({
      ...input,
      expiration: this.options.expirationSeconds,
      // Our own reference travels with the request, so an unknown outcome can be reconciled later.
      transaction_id: randomUUID(),
    });
    return this.view({
      reference: created.externalReference,
      partnerStatus: PARTNER_STATUS.pending,
      value: input.value,
      brcode: created.pixKey,
      qrCodeUrl: created.qrCodeUrl,
      checkoutUrl: created.checkoutUrl,
      createdAt: created.createdAt,
    });
  }

  async read(reference: string): Promise<PaymentView> {
    return this.view(await this.fetch(reference));
  }

  /**
   * Calls `listener` with the current view at once, then on every status change, until the payment
   * is final or the returned function is called. Rejects when the first read fails.
   */
  async watch(reference: string, listener: Listener): Promise<() => void> {
    const first = await this.read(reference);
    listener(first);
    if (isFinalStatus(first.status)) return () => {};
    let watch = this.watches.get(reference);
    if (!watch) {
      watch = { listeners: new Set(), timer: undefined, last: first.status };
      this.watches.set(reference, watch);
      this.schedule(reference, watch);
    }
    watch.listeners.add(listener);
    const current = watch;
    return () => {
      current.listeners.delete(listener);
      if (current.listeners.size === 0) this.unwatch(reference, current);
    };
  }

  /** Stops every poller (shutdown). */
  close(): void {
    for (const [reference, watch] of this.watches) this.unwatch(reference, watch);
  }

  private unwatch(reference: string, watch: Watch): void {
    clearTimeout(watch.timer);
    if (this.watches.get(reference) === watch) this.watches.delete(reference);
  }

  private schedule(reference: string, watch: Watch): void {
    watch.timer = setTimeout(async () => {
      if (this.watches.get(reference) !== watch) return;
      let view: PaymentView;
      try {
        view = await this.read(reference);
      } catch (error) {
        // A failed poll changes nothing the browser sees; the next one may succeed.
        console.error(`[proxy] watching ${reference}: ${error instanceof Error ? error.message : String(error)}`);
        this.schedule(reference, watch);
        return;
      }
      if (this.watches.get(reference) !== watch) return;
      if (view.status !== watch.last) {
        watch.last = view.status;
        for (const listener of watch.listeners) listener(view);
      }
      if (isFinalStatus(view.status)) this.unwatch(reference, watch);
      else this.schedule(reference, watch);
    }, this.options.watchIntervalMs ?? 2000);
    watch.timer.unref?.();
  }

  private fetch(reference: string): Promise<Snapshot> {
    let pending = this.inflight.get(reference);
    if (!pending) {
      pending = this.partner
        .getPayment(reference)
        .then((record) => ({
          reference: record.external_reference,
          partnerStatus: record.status,
          value: record.value,
          brcode: record.pix_deposit.pix_key,
          qrCodeUrl: record.pix_deposit.qr_code_url,
          checkoutUrl: record.pix_deposit.checkout,
          createdAt: record.created_at,
        }))
        .finally(() => this.inflight.delete(reference));
      this.inflight.set(reference, pending);
    }
    return pending;
  }

  private view(p: Snapshot): PaymentView {
    const created = Date.parse(p.createdAt);
    const expires = created + this.options.expirationSeconds * 1000;
    const now = this.options.now();
    return {
      reference: p.reference,
      status: statusFor(p.partnerStatus, expires, now),
      value: p.value,
      brcode: p.brcode,
      qr_code_url: p.qrCodeUrl,
      checkout_url: p.checkoutUrl,
      created_at: new Date(created).toISOString(),
      expires_at: new Date(expires).toISOString(),
      server_time: new Date(now).toISOString(),
    };
  }
}

function statusFor(partnerStatus: number, expiresAtMs: number, nowMs: number): PaymentStatus {
  if (partnerStatus === PARTNER_STATUS.approved) return 'paid';
  if (partnerStatus === PARTNER_STATUS.canceled) return 'canceled';
  if (partnerStatus === PARTNER_STATUS.pending) return nowMs >= expiresAtMs ? 'expired' : 'pending';
  // A code we do not know is never shown as success, nor as final: report it and keep asking.
  throw new HttpError(502, 'upstream_unavailable', 'The payment service answered with an unknown status; try again.');
}
