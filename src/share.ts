/**
 * What the share and "Salvar QR Code" buttons do, in the chunk that draws them (src/later.ts). Both are
 * called in the tap itself: share() needs the customer's activation.
 */
import type { WidgetEnvironment } from './controllers/environment.ts';
import { kit } from './kit.ts';
import type { QrPath } from './qr.ts';

/**
 * "Salvar QR Code" draws and saves in a chunk of its own (src/save.ts, dist/pix-checkout.save.js),
 * loaded once for the page when the button first shows, so a tap finds it at hand.
 */
let saver: typeof import('./save.ts') | undefined;
/** A second import() of the module while it loads is the same request: the browser's module map keeps one. */
const loadSaver = () => import('./save.ts').then((module) => (saver = module));

/** The save button is on screen: its chunk loads now, not on the tap. */
export function preloadSave(): void {
  if (!saver) loadSaver().catch(() => {});
}

const failed = (host: EventTarget, error: unknown) => host.dispatchEvent(new kit.PixErrorEvent({ code: 'share_failed', message: String(error), fatal: false }));

/** The share sheet; a dismissed sheet (AbortError) is no failure. */
export function share(host: EventTarget, env: WidgetEnvironment, data: ShareData): void {
  env.share?.share(data).catch((error: unknown) => {
    if ((error as Error | null)?.name !== 'AbortError') failed(host, error);
  });
}

/**
 * With the chunk at hand (loaded when the button showed), the image is made and share() called
 * synchronously, inside the tap's activation.
 */
export function save(host: EventTarget, env: WidgetEnvironment, qr: QrPath, lines: (string | null)[], reference: string): void {
  const draw = (module: typeof import('./save.ts')) => module.saveQr(env, qr, lines, reference);
  (saver ? draw(saver) : loadSaver().then(draw)).then(
    (method) => method && host.dispatchEvent(new kit.PixSaveEvent({ method })),
    (error: unknown) => failed(host, error),
  );
}
