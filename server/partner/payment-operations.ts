/**
 * The partner's payment operations: create (4.3), the quick check (4.4) and the details (4.5). A
 * create is checked against the spec before the tenant is even fetched, and sent once.
 */
import { fillPath } from '../../src/shared/wire.ts';
import { CreatePartnerPaymentRequest, PARTNER_PATHS, PAYMENT_CHECK_HTTP } from './wire.ts';
import { PartnerError } from './errors.ts';
import { readPayment } from './read.ts';
import type { Sender } from './sender.ts';
import type { PartnerClient, PaymentCheck, PaymentDetails } from './client-types.ts';

export function paymentOperations(sender: Sender, getTenant: PartnerClient['getTenant']): Pick<PartnerClient, 'createPayment' | 'checkPayment' | 'getPayment'> {
  const { send, json, observed, unreadable, checkInput, create } = sender;
  return {
    async createPayment(input) {
      // Checked before the tenant is fetched: a bad input costs no request at all.
      checkInput('createPayment', CreatePartnerPaymentRequest, { ...input, tenant_id: 'checked-below' });
      const { id: tenant_id } = await getTenant();
      const { answer, transactionId } = await create(
        'createPayment',
        PARTNER_PATHS.createPayment,
        CreatePartnerPaymentRequest,
        { ...input, tenant_id },
        (res) => {
          const body = json('createPayment', res);
          const { found, ...read } = readPayment(body);
          observed('createPayment', res, body, found);
          // Without its reference the payment cannot be followed, without its code it cannot be paid.
          if (!read.externalReference) throw unreadable('createPayment', res, 'external_reference');
          if (!read.pixKey) throw unreadable('createPayment', res, 'pix_key (copy-and-paste code)');
          return { ...read, externalReference: read.externalReference, pixKey: read.pixKey };
        },
      );
      return {
        externalReference: answer.externalReference,
        pixKey: answer.pixKey,
        qrCodeUrl: answer.qrCodeUrl,
        checkoutUrl: answer.checkoutUrl,
        createdAt: answer.createdAt,
        status: answer.status,
        transactionId,
        favoured: answer.favoured,
      };
    },

    async checkPayment(externalReference) {
      const read = (httpStatus: number): PaymentCheck => {
        const hint = (Object.entries(PAYMENT_CHECK_HTTP).find(([, code]) => code === httpStatus)?.[0] ?? 'unknown') as
          keyof typeof PAYMENT_CHECK_HTTP | 'unknown';
        return { httpStatus, hint: hint === 'notFound' ? 'not_found' : hint };
      };
      return send({
        operation: 'checkPayment',
        method: 'HEAD',
        path: fillPath(PARTNER_PATHS.checkPayment, { external_reference: externalReference }),
        read: (res) => read(res.status),
        idempotent: true,
      }).catch((error: unknown) => {
        // Any answer but a refused token or a failure is an answer: HEAD says what it says with its status.
        const status = error instanceof PartnerError ? error.details.status : undefined;
        if (error instanceof PartnerError && status !== undefined && status < 500 && error.kind !== 'unauthorized') return read(status);
        throw error;
      });
    },

    async getPayment(externalReference) {
      const path = fillPath(PARTNER_PATHS.getPayment, { external_reference: externalReference });
      return send({
        operation: 'getPayment',
        method: 'GET',
        path,
        read: (res): PaymentDetails => {
          const body = json('getPayment', res);
          const { found, ...read } = readPayment(body);
          observed('getPayment', res, body, found);
          // An answer about another payment (a list, say) is no answer about this one.
          if (read.externalReference !== null && read.externalReference !== externalReference)
            throw unreadable('getPayment', res, `record of ${externalReference}`);
          return { ...read, externalReference };
        },
        idempotent: true,
      });
    },
  };
}
