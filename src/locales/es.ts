import type { Spoken, Translation } from './translation.ts';

/** Built with the bundle's `spoken` (src/locales/index.ts loads this module on demand). */

export const es = (spoken: Spoken): Translation => ({
  tag: 'es',
  loading: 'Generando el código Pix…',
  scanHint: 'Escanea el código QR con la app de tu banco',
  codeLabel: 'Pix Copia e Cola (código para copiar y pegar)',
  copy: 'Copiar código',
  copied: 'Código copiado',
  copyFailed: 'No se pudo copiar. El código está seleccionado: cópialo manualmente.',
  qrAlt: (amount) => `Código QR Pix para pagar ${amount}. En el móvil, usa el botón Copiar código y pégalo en la app de tu banco.`,
  share: 'Compartir código',
  save: 'Guardar código QR',
  paying: (name) => `Pagando a ${name}`,
  moreTime: 'Necesito más tiempo',
  moreTimeOffer: '¿Necesitas más tiempo? Pide un código nuevo.',
  moreTimeFailed: 'No se pudo generar un código nuevo; este sigue valiendo.',
  openCheckout: 'Pagar en la página de pago',
  pending: 'Esperando el pago',
  paid: 'Pago confirmado',
  paidAmount: (amount) => `Pagaste ${amount}.`,
  receiptAmount: 'Importe',
  receiptTo: 'Pagado a',
  receiptWhen: 'Fecha y hora',
  receiptReference: 'Referencia',
  print: 'Imprimir o guardar comprobante',
  expired: 'Este código Pix ha caducado',
  expiredHint: 'No se cobró nada. Genera un código nuevo para pagar.',
  renew: 'Generar un código nuevo',
  renewLimit: 'No se cobró nada. Vuelve a la tienda para intentarlo de nuevo.',
  renewalsExhausted: 'No se pueden generar más códigos para este pedido. No se cobró nada: vuelve a la tienda para intentarlo de nuevo.',
  unverified: 'Confirmando el pago anterior…',
  unverifiedHint:
    'Estamos confirmando si el código anterior fue pagado. No pague de nuevo todavía: pediremos un nuevo código automáticamente en unos instantes.',
  canceled: 'Pago cancelado',
  canceledHint: 'No se cobró nada.',
  invalidCode: 'No se pudo dibujar el código QR. Usa la imagen o la página de pago.',
  error: 'No se pudo cargar el pago.',
  retry: 'Reintentar',
  reconnecting: 'Reconectando…',
  offline: 'Sin conexión. Reconectando…',
  expiresIn: 'Caduca en',
  timeLeft: (h, m, s) =>
    `Quedan ${spoken(
      [
        [h, 'hora', 'horas'],
        [m, 'minuto', 'minutos'],
        [s, 'segundo', 'segundos'],
      ],
      'y',
    )} para pagar.`,
});
