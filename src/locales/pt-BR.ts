import { spoken, type Translation } from './translation.ts';

export const ptBR: Translation = {
  tag: 'pt-BR',
  loading: 'Gerando o código Pix…',
  scanHint: 'Escaneie o QR code no app do seu banco',
  codeLabel: 'Pix copia e cola',
  copy: 'Copiar código',
  copied: 'Código copiado',
  copyFailed: 'Não foi possível copiar. O código está selecionado: copie manualmente.',
  qrAlt: (amount) => `QR code Pix para pagar ${amount}. No celular, use o botão Copiar código e cole no app do banco.`,
  openCheckout: 'Pagar na página de pagamento',
  pending: 'Aguardando pagamento',
  paid: 'Pagamento confirmado',
  paidAmount: (amount) => `Você pagou ${amount}.`,
  expired: 'Este código Pix expirou',
  expiredHint: 'Nenhum valor foi cobrado. Gere um novo código para pagar.',
  renew: 'Gerar novo código',
  renewLimit: 'Nenhum valor foi cobrado. Volte à loja para tentar de novo.',
  renewalsExhausted: 'Não é possível gerar outro código para este pedido. Nenhum valor foi cobrado: volte à loja para tentar de novo.',
  canceled: 'Pagamento cancelado',
  canceledHint: 'Nenhum valor foi cobrado.',
  invalidCode: 'Não foi possível desenhar o QR code. Use a imagem ou a página de pagamento.',
  error: 'Não foi possível carregar o pagamento.',
  retry: 'Tentar novamente',
  reconnecting: 'Reconectando…',
  offline: 'Sem conexão. Reconectando…',
  expiresIn: 'Expira em',
  timeLeft: (h, m, s) =>
    `Faltam ${spoken(
      [
        [h, 'hora', 'horas'],
        [m, 'minuto', 'minutos'],
        [s, 'segundo', 'segundos'],
      ],
      'e',
    )} para pagar.`,
};
