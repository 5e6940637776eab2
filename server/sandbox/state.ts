/**
 * The sandbox's memory: the partner account, its tokens, and the payments it has issued. Status is
 * derived from the sandbox clock on every read, so advancing the clock is enough to cancel a payment
 * an hour after it expired.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { LIMITS } from '../../src/shared/limits.ts';
import { PARTNER_STATUS, type PartnerStatusCode } from '../../src/shared/partner.ts';
import type { SandboxClock } from './clock.ts';

export interface SandboxAccount {
  email: string;
  accessKey: string;
  tenant: { id: string; name: string };
  partner: { name: string; document: string };
  /** Name and city printed in every BR Code this account issues. */
  merchant: { name: string; city: string };
}

/** The test account `npm run sandbox` prints; documented in server/sandbox/README.md. */
export const DEFAULT_ACCOUNT: SandboxAccount = {
  email: 'sandbox@pix-checkout.test',
  accessKey: 'sandbox-access-key',
  tenant: { id: '6f1c2a4e-8b3d-4c5e-9f60-7a8b9c0d1e2f', name: 'Loja Sandbox' },
  partner: { name: 'Loja Sandbox LTDA', document: '11.222.333/0001-81' },
  merchant: { name: 'Loja Sandbox', city: 'Sao Paulo' },
};

export interface SandboxPayment {
  id: number;
  externalReference: string;
  value: number;
  callback: string | null;
  description: string | null;
  customer: { name: string; document: string } | null;
  expirationSeconds: number;
  transactionId: string | null;
  createdAt: number;
  paidAt: number | null;
  pixKey: string;
}

export class SandboxState {
  readonly tokens = new Set<string>();
  readonly payments = new Map<string, SandboxPayment>();
  private nextId = 1;

  constructor(
    readonly account: SandboxAccount,
    readonly clock: SandboxClock,
  ) {}

  issueToken(): string {
    const token = randomBytes(32).toString('base64url');
    this.tokens.add(token);
    return token;
  }

  newPaymentIdentity(): { id: number; externalReference: string } {
    return { id: this.nextId++, externalReference: randomUUID().replaceAll('-', '') };
  }

  expiresAt(payment: SandboxPayment): number {
    return payment.createdAt + payment.expirationSeconds * 1000;
  }

  statusOf(payment: SandboxPayment): PartnerStatusCode {
    if (payment.paidAt !== null) return PARTNER_STATUS.approved;
    const cancelAt = this.expiresAt(payment) + LIMITS.cancelAfterExpirationSeconds * 1000;
    return this.clock.now() >= cancelAt ? PARTNER_STATUS.canceled : PARTNER_STATUS.pending;
  }

  /** Marks a payment paid, as the payer's bank would; refused once it is canceled or already paid. */
  pay(payment: SandboxPayment): { ok: true } | { ok: false; reason: string } {
    const status = this.statusOf(payment);
    if (status === PARTNER_STATUS.approved) return { ok: false, reason: 'the payment is already paid' };
    if (status === PARTNER_STATUS.canceled) return { ok: false, reason: 'the payment is canceled' };
    payment.paidAt = this.clock.now();
    return { ok: true };
  }
}
