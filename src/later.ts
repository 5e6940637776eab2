/**
 * What the customer needs once the first QR is on screen, and not before: a chunk of its own
 * (dist/pix-checkout.later.js), loaded right after that QR is painted (src/load-later.ts), one
 * request for the page whatever the widgets, beside the status controller's (following the status:
 * the stream, and polling when streams fail; dist/pix-checkout.status.js). The screens of a code's end (paid with its receipt, expired, canceled, a renewal the
 * proxy cannot decide yet), the pending screen's buttons no first QR needs (more time, share, save),
 * the payment session's paths past the first QR (a status read applied, more time, a new code
 * refused), and the pt-BR texts of those.
 */
export { install } from './kit.ts';
export { ptBRLater } from './locales/pt-BR-later.ts';
export { announceTimeLeft, fireOutcome, refused, statusOptions } from './controllers/session-later.ts';
export { announcementSlot } from './controllers/time-announcements.ts';
export { renderEnd } from './views/outcome.ts';
export { moreTimeButton, saveButton, shareButton } from './views/pending-extras.ts';
