/** The browser API for payments: thin handlers that validate with src/shared and call the partner. */
import { randomUUID } from 'node:crypto';
import { Hono, type Context } from 'hono';
import { API_PATHS, CreatePaymentRequest, Reference, fillPath, type PaymentView } from '../../src/shared/contract.ts';
import { parseInput } from '../../src/shared/errors.ts';
import { PARTNER_STATUS } from '../../src/shared/partner.ts';
import type { PaymentStatus } from '../../src/shared/status.ts';
import { HttpError } from '../http-errors.ts';
import { readJson } from '../json-body.ts';
import type { PartnerClient } from '../upstream/client.ts';

export interface PaymentRoutesDeps {
  partner: PartnerClient;
  /** Seconds each QR code stays payable; sent to the partner and used to derive `expires_at`. */
  expirationSeconds: number;
  now: () => number;
}

/** The largest create body accepted; a real one is under 300 bytes. */
export const MAX_CREATE_BODY_BYTES = 4 * 1024;

async function readJsonBody(c: Context, maxBytes: number): Promise<unknown> {
  const read = await readJson(c, maxBytes);
  if (read.ok) return read.body;
  switch (read.problem) {
    case 'media_type':
      throw new HttpError(415, 'unsupported_media_type', 'Send the body as JSON with Content-Type: application/json.');
    case 'too_large':
      throw new HttpError(413, 'payload_too_large', `The body must be at most ${maxBytes} bytes.`);
    default:
      throw new HttpError(400, 'invalid_json', 'The body is not valid JSON.');
  }
}

function statusFor(partnerStatus: number, expiresAtMs: number, nowMs: number): PaymentStatus {
  if (partnerStatus === PARTNER_STATUS.approved) return 'paid';
  if (partnerStatus === PARTNER_STATUS.canceled) return 'canceled';
  if (partnerStatus === PARTNER_STATUS.pending) return nowMs >= expiresAtMs ? 'expired' : 'pending';
  // A code we do not know is never shown as success, nor as final: report it and keep asking.
  throw new HttpError(502, 'upstream_unavailable', 'The payment service answered with an unknown status; try again.');
}

export function paymentRoutes(deps: PaymentRoutesDeps): Hono {
  const routes = new Hono();

  function view(p: {
    reference: string;
    partnerStatus: number;
    value: number;
    brcode: string;
    qrCodeUrl: string;
    checkoutUrl: string;
    createdAt: string;
  }): PaymentView {
    const created = Date.parse(p.createdAt);
    const expires = created + deps.expirationSeconds * 1000;
    const now = deps.now();
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

  routes.post(API_PATHS.payments, async (c) => {
    const parsed = parseInput(CreatePaymentRequest, await readJsonBody(c, MAX_CREATE_BODY_BYTES));
    if (!parsed.success) return c.json(parsed.body, 400);
    const input = parsed.data;
    const created = await deps.partner.createPayment({
      ...input,
      expiration: deps.expirationSeconds,
      // Our own reference travels with the request, so an unknown outcome can be reconciled later.
      transaction_id: randomUUID(),
    });
    const body = view({
      reference: created.externalReference,
      partnerStatus: PARTNER_STATUS.pending,
      value: input.value,
      brcode: created.pixKey,
      qrCodeUrl: created.qrCodeUrl,
      checkoutUrl: created.checkoutUrl,
      createdAt: created.createdAt,
    });
    return c.json(body, 201, { location: fillPath(API_PATHS.payment, { reference: body.reference }) });
  });

  routes.get(API_PATHS.payment, async (c) => {
    const reference = Reference.safeParse(c.req.param('reference'));
    if (!reference.success) {
      const message = reference.error.issues[0]?.message ?? 'is invalid';
      throw new HttpError(400, 'invalid_reference', `reference ${message}`, { reference: message });
    }
    const record = await deps.partner.getPayment(reference.data);
    c.header('cache-control', 'no-store');
    return c.json(
      view({
        reference: record.external_reference,
        partnerStatus: record.status,
        value: record.value,
        brcode: record.pix_deposit.pix_key,
        qrCodeUrl: record.pix_deposit.qr_code_url,
        checkoutUrl: record.pix_deposit.checkout,
        createdAt: record.created_at,
      }),
    );
  });

  return routes;
}
