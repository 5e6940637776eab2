import type { LaterKey, Spoken, Translation } from './translation.ts';

/**
 * The pt-BR texts no first QR needs (src/locales/pt-BR.ts has the others): in the later chunk, which
 * imports nothing, so it is handed `spoken` (as the language chunks are).
 */
export const ptBRLater = (spoken: Spoken): Pick<Translation, LaterKey> => ({
  paid: 'Pagamento confirmado',
  expired: 'Este código Pix expirou',
  renewalsExhausted: 'Não é possível gerar outro código para este pedido. Nenhum valor foi cobrado: volte à loja para tentar de novo.',
  unverified: 'Confirmando o pagamento anterior…',
  canceled: 'Pagamento cancelado',
  reconnecting: 'Reconectando…',
  offline: 'Sem conexão. Reconectando…',
  share: 'Compartilhar código',
  save: 'Salvar QR Code',
  moreTime: 'Preciso de mais tempo',
  moreTimeFailed: 'Não foi possível gerar um novo código; este ainda vale.',
  paidAmount: (amount) => `Você pagou ${amount}.`,
  receiptAmount: 'Valor',
  receiptTo: 'Recebedor',
  receiptWhen: 'Data e hora',
  receiptReference: 'Referência',
  print: 'Imprimir ou salvar comprovante',
  expiredHint: 'Nenhum valor foi cobrado. Gere um novo código para pagar.',
  renew: 'Gerar novo código',
  renewLimit: 'Nenhum valor foi cobrado. Volte à loja para tentar de novo.',
  unverifiedHint: 'Estamos confirmando se o código anterior foi pago. Não pague de novo por enquanto: pediremos um novo código sozinhos em instantes.',
  canceledHint: 'Nenhum valor foi cobrado.',
  moreTimeOffer: 'Precisa de mais tempo? Peça um novo código.',
  timeLeft: (h, m, s) =>
    `Faltam ${spoken(
      [
        [h, 'hora', 'horas'],
        [m, 'minuto', 'minutos'],
        [s, 'segundo', 'segundos'],
      ],
      'e',
    )} para pagar.`,
});
