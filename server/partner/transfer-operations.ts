/**
 * The partner's transfer operations: a transfer to a customer (4.6), to a PIX key (4.6) and its
 * check (4.7). A create is sent once, and only a refusal the service states releases the money
 * (refusals.ts): any other 4xx is an unknown outcome.
 */
import { fillPath } from '../../src/shared/wire.ts';
import { KeyTransferRequest, PARTNER_PATHS, SolicitTransferRequest } from './wire.ts';
import type { HttpResponse } from './http.ts';
import { readTransfer } from './read.ts';
import { unstatedRefusal } from './refusals.ts';
import type { Sender } from './sender.ts';
import type { PartnerClient, TransferDetails } from './client-types.ts';

export function transferOperations(sender: Sender): Pick<PartnerClient, 'solicitTransferForCustomer' | 'transferToKey' | 'checkTransfer'> {
  const { send, json, observed, unreadable, create, random } = sender;

  function readTransferAnswer(operation: string, res: HttpResponse, fallbackReference?: string): TransferDetails {
    const body = json(operation, res);
    const { found, ...read } = readTransfer(body);
    observed(operation, res, body, found);
    // A check of a known reference may omit it, but an answer with neither reference nor status (`{"data": null}`) says nothing,
    // and an answer about another transaction is no answer about this one.
    if (fallbackReference !== undefined && read.externalReference !== null && read.externalReference !== fallbackReference) {
      throw unreadable(operation, res, `record of ${fallbackReference}`);
    }
    const externalReference = read.externalReference ?? (read.status ? fallbackReference : undefined);
    if (!externalReference) throw unreadable(operation, res, 'external_reference');
    return { ...read, externalReference };
  }

  return {
    async solicitTransferForCustomer(given) {
      const operation = 'solicitTransferForCustomer';
      const input = { ...given, transaction_id: given.transaction_id ?? random.uuid() };
      try {
        return (await create(operation, PARTNER_PATHS.solicitTransferForCustomer, SolicitTransferRequest, input, (res) => readTransferAnswer(operation, res)))
          .answer;
      } catch (error) {
        throw unstatedRefusal(error, input.transaction_id);
      }
    },

    async transferToKey(given) {
      const operation = 'transferToKey';
      const input = { ...given, transaction_id: given.transaction_id ?? random.uuid() };
      try {
        return (await create(operation, PARTNER_PATHS.transferToKey, KeyTransferRequest, input, (res) => readTransferAnswer(operation, res))).answer;
      } catch (error) {
        throw unstatedRefusal(error, input.transaction_id);
      }
    },

    checkTransfer(externalReference) {
      return send({
        operation: 'checkTransfer',
        method: 'GET',
        path: fillPath(PARTNER_PATHS.checkTransfer, { external_reference: externalReference }),
        read: (res) => readTransferAnswer('checkTransfer', res, externalReference),
        idempotent: true,
      });
    },
  };
}
