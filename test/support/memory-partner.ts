/**
 * An in-memory partner for unit tests of the domain: the PartnerClient interface
 * (server/partner/client.ts) answered from two Maps, with no TLS, no sandbox and no clock of its own.
 * A created payment carries a dynamic BR Code with a valid CRC (src/shared/brcode.ts) and starts
 * pending, as the spec's do; the test moves a payment or a transfer with `setStatus`. It plays no
 * rule of the spec (no expiry, no cancellation an hour later, no refusals, no webhooks): tests that
 * prove those, or the client and its HTTPS, keep the real sandbox.
 */
import { randomUUID } from 'node:crypto';
import { buildDynamicBrCode } from '../../src/shared/brcode.ts';
import { detectPixKeyType } from '../../src/shared/pix-keys.ts';
import type { CreatePaymentInput, CreatedPayment, PartnerClient, PaymentCheck, PaymentDetails, TransferDetails } from '../../server/partner/client.ts';
import { PartnerError } from '../../server/partner/errors.ts';
import { PARTNER_STATUS, PAYMENT_CHECK_HTTP, type KeyTransferRequest, type SolicitTransferRequest } from '../../server/partner/wire.ts';

export interface MemoryPartnerOptions {
  /** The clock of created_at and of a transfer's updates (default Date.now). */
  now?: () => number;
  /** Who is paid, as the create answer and the details name them. */
  favoured?: string;
}

export interface MemoryPartner extends PartnerClient {
  /** Every payment created, by external reference, as getPayment answers it. */
  readonly payments: Map<string, PaymentDetails & { transactionId: string }>;
  /** Every transfer asked for, by external reference, as checkTransfer answers it. */
  readonly transfers: Map<string, TransferDetails>;
  /** The operations called, in order (`createPayment`, `getPayment`, …). */
  readonly calls: string[];
  /** Moves a payment or a transfer to `code` (PARTNER_STATUS); `null` makes its status unreadable. Throws on an unknown reference. */
  setStatus(reference: string, code: number | null, word?: string | null): void;
}

const notFound = (operation: string, reference: string) =>
  new PartnerError('not_found', `${operation}: not found (HTTP 404)`, { operation, status: 404, upstreamMessage: `no record ${reference}` });

export function memoryPartner(options: MemoryPartnerOptions = {}): MemoryPartner {
  const now = options.now ?? Date.now;
  const favoured = options.favoured ?? 'Loja Exemplo';
  const payments: MemoryPartner['payments'] = new Map();
  const transfers: MemoryPartner['transfers'] = new Map();
  const calls: string[] = [];
  let created = 0;

  function transfer(operation: string, input: SolicitTransferRequest | KeyTransferRequest): TransferDetails {
    calls.push(operation);
    const externalReference = `mem-tr-${++created}`;
    const at = now();
    const record: TransferDetails = {
      externalReference,
      status: { code: PARTNER_STATUS.pending, word: null },
      value: input.value,
      pixKey: input.pix_key,
      pixKeyType: 'pix_key_type' in input ? input.pix_key_type : detectPixKeyType(input.pix_key),
      transactionId: input.transaction_id ?? randomUUID(),
      end2end: null,
      createdAt: at,
      updatedAt: at,
      isPayment: false,
    };
    transfers.set(externalReference, record);
    return { ...record };
  }

  return {
    payments,
    transfers,
    calls,
    setStatus(reference, code, word = null) {
      const record = payments.get(reference) ?? transfers.get(reference);
      if (!record) throw new Error(`the memory partner has no payment or transfer ${reference}`);
      record.status = code === null && word === null ? null : { code, word };
      if (transfers.has(reference)) (record as TransferDetails).updatedAt = now();
    },

    async login() {
      calls.push('login');
    },
    async getTenant() {
      calls.push('getTenant');
      return { id: 'memory-tenant', name: favoured };
    },
    async createPayment(input: CreatePaymentInput): Promise<CreatedPayment> {
      calls.push('createPayment');
      const externalReference = `mem-${++created}`;
      const record = {
        externalReference,
        pixKey: buildDynamicBrCode({
          locationUrl: `partner.example/pix/v2/${externalReference}`,
          merchantName: 'LOJA EXEMPLO',
          merchantCity: 'SAO PAULO',
          amount: input.value,
        }),
        qrCodeUrl: `https://partner.example/qr/${externalReference}.png`,
        checkoutUrl: `https://partner.example/checkout/${externalReference}`,
        createdAt: now(),
        status: { code: PARTNER_STATUS.pending, word: null },
        value: input.value,
        favoured,
        transactionId: input.transaction_id ?? randomUUID(),
      };
      payments.set(externalReference, record);
      const { value: _value, ...answer } = record;
      return { ...answer, status: { ...record.status } };
    },
    async checkPayment(externalReference: string): Promise<PaymentCheck> {
      calls.push('checkPayment');
      const code = payments.get(externalReference)?.status?.code;
      if (code === undefined) return { httpStatus: PAYMENT_CHECK_HTTP.notFound, hint: 'not_found' };
      if (code === PARTNER_STATUS.approved) return { httpStatus: PAYMENT_CHECK_HTTP.paid, hint: 'paid' };
      if (code === PARTNER_STATUS.canceled) return { httpStatus: PAYMENT_CHECK_HTTP.canceled, hint: 'canceled' };
      return { httpStatus: PAYMENT_CHECK_HTTP.pending, hint: 'pending' };
    },
    async getPayment(externalReference: string): Promise<PaymentDetails> {
      calls.push('getPayment');
      const record = payments.get(externalReference);
      if (!record) throw notFound('getPayment', externalReference);
      const { transactionId: _transactionId, ...details } = record;
      return { ...details, status: details.status && { ...details.status } };
    },
    async solicitTransferForCustomer(input: SolicitTransferRequest) {
      return transfer('solicitTransferForCustomer', input);
    },
    async transferToKey(input: KeyTransferRequest) {
      return transfer('transferToKey', input);
    },
    async checkTransfer(externalReference: string): Promise<TransferDetails> {
      calls.push('checkTransfer');
      const record = transfers.get(externalReference);
      if (!record) throw notFound('checkTransfer', externalReference);
      return { ...record, status: record.status && { ...record.status } };
    },
    async setNotificationUrl(input) {
      calls.push('setNotificationUrl');
      return { notificationUrl: input.notification_url, notifyType: input.notify_type ?? null, confirmed: true };
    },
  };
}
