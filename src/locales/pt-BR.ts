import type { Translation } from './translation.ts';

export const ptBR: Translation = {
  loading: 'Gerando o código Pix…',
  scanTitle: 'Escaneie o QR code no app do seu banco',
  codeLabel: 'Pix copia e cola',
  copy: 'Copiar código',
  copied: 'Código copiado',
  copyFailed: 'Não foi possível copiar. O código está selecionado: copie manualmente.',
  qrAlt: (amount) => `QR code Pix para pagar ${amount}. Use o botão Copiar código se estiver no celular.`,
  openCheckout: 'Pagar na página de pagamento',
  pending: 'Aguardando pagamento',
  paid: 'Pagamento confirmado',
  expired: 'Este código Pix expirou',
  canceled: 'Pagamento cancelado',
  invalidCode: 'Não foi possível desenhar o QR code. Use a imagem ou a página de pagamento abaixo.',
  error: 'Não foi possível carregar o pagamento.',
  retry: 'Tentar novamente',
  reconnecting: 'Reconectando…',
};
