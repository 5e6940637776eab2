import type { LaterKey, Translation } from './translation.ts';

/**
 * The texts a Brazilian page's first QR needs, in the script; the rest (LaterKey) come with the
 * chunk loaded after that QR (src/locales/pt-BR-later.ts, added here by src/load-later.ts), before
 * anything that says them is drawn.
 */
export const ptBR = {
  tag: 'pt-BR',
  loading: 'Gerando o código Pix…',
  scanHint: 'Escaneie o QR code no app do seu banco',
  codeLabel: 'Pix Copia e Cola',
  copy: 'Copiar código',
  copied: 'Código copiado',
  copyFailed: 'Não foi possível copiar. O código está selecionado: copie manualmente.',
  qrAlt: (amount) => `QR code Pix para pagar ${amount}. No celular, use o botão Copiar código e cole no app do banco.`,
  paying: (name) => `Pagando para ${name}`,
  openCheckout: 'Pagar na página de pagamento',
  pending: 'Aguardando pagamento',
  invalidCode: 'Não foi possível desenhar o QR code. Use a imagem ou a página de pagamento.',
  error: 'Não foi possível carregar o pagamento.',
  retry: 'Tentar novamente',
  expiresIn: 'Expira em',
} satisfies Omit<Translation, LaterKey> as Translation;
