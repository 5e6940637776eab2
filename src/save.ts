/**
 * "Salvar QR Code", on phones: the payment's QR as a PNG the customer's bank app reads from the
 * gallery, made on the tap, handed to the share sheet as a file where the browser takes files, else
 * downloaded. A chunk of its own (dist/pix-checkout.save.js), loaded when the button first shows
 * (src/pix-checkout.ts), so the script-tag bundle carries none of it; it imports nothing at run time:
 * the element hands it the QR path it already drew and the texts on screen.
 */
import type { WidgetEnvironment } from './controllers/environment.ts';
import type { QrPath } from './qr.ts';

/** How the image left: the share sheet (with the file) or a download. */
export type SaveMethod = 'share' | 'download';

/** Pixels per QR module: large enough to scan from the image itself or from a photo of it. */
export const MODULE_PX = 10;
/** The texts under the QR: the amount (bold), then who is paid; each line's height in pixels. */
const FONTS = ['700 40px system-ui,sans-serif', '28px system-ui,sans-serif'];
const LINE_PX = 56;
/** Light below the last line, as wide as the QR's quiet zone (four modules). */
const MARGIN_PX = 4 * MODULE_PX;
/** The download's blob URL is revoked this long after the click (some browsers read it after click() returns). */
export const REVOKE_AFTER_MS = 60_000;

/**
 * The PNG: white, the QR with its quiet zone at MODULE_PX per module, and `lines` centred under it in
 * black. Synchronous (toDataURL, not toBlob), so share() still runs inside the customer's tap.
 */
export function qrImage(path: QrPath, lines: string[], name: string): File {
  const canvas = document.createElement('canvas');
  const context = canvas.getContext('2d')!;
  const font = (i: number) => (context.font = FONTS[Math.min(i, 1)]!);
  const side = path.size * MODULE_PX;
  const width = Math.ceil(Math.max(side, ...lines.map((line, i) => (font(i), context.measureText(line).width + 2 * MARGIN_PX))));
  // Setting the size clears the canvas and its state: measured first, drawn after.
  canvas.width = width;
  canvas.height = side + lines.length * LINE_PX + MARGIN_PX;
  context.fillStyle = '#fff';
  context.fillRect(0, 0, width, canvas.height);
  context.fillStyle = '#000';
  context.textAlign = 'center';
  context.textBaseline = 'top';
  lines.forEach((line, i) => (font(i), context.fillText(line, width / 2, side + i * LINE_PX)));
  // Whole pixels, so every module's edge falls on a pixel's.
  context.translate(Math.floor((width - side) / 2), 0);
  context.scale(MODULE_PX, MODULE_PX);
  context.fill(new Path2D(path.d));
  const bytes = atob(canvas.toDataURL('image/png').slice('data:image/png;base64,'.length));
  return new File([Uint8Array.from(bytes, (c) => c.charCodeAt(0))], name, { type: 'image/png' });
}

/** The browser's own download: an `<a download>` with a blob URL, clicked, revoked later. */
export function download(file: File, clock: WidgetEnvironment['clock']): void {
  const a = document.createElement('a');
  a.download = file.name;
  a.href = URL.createObjectURL(file);
  // In the document for the click (Firefox downloads only from a connected anchor), out at once.
  document.body.append(a);
  a.click();
  a.remove();
  clock.setTimeout(() => URL.revokeObjectURL(a.href), REVOKE_AFTER_MS);
}

/**
 * Makes the image of `path` with `lines` under it (absent ones skipped) and saves it as
 * `pix-<reference>.png`: the share sheet with the file where `canShare` accepts files, else a
 * download. Call it inside the tap: everything before share() is synchronous. The customer closing
 * the sheet (AbortError) resolves null; a share refused for want of the tap's activation
 * (NotAllowedError: the chunk was still loading, a slow phone) downloads instead; any other failure
 * rejects.
 */
export async function saveQr(env: WidgetEnvironment, path: QrPath, lines: (string | null)[], reference: string): Promise<SaveMethod | null> {
  const file = qrImage(
    path,
    lines.filter((line): line is string => !!line),
    `pix-${reference}.png`,
  );
  const data = { files: [file] };
  if (env.share?.canShare?.(data)) {
    try {
      await env.share.share(data);
      return 'share';
    } catch (error) {
      const reason = (error as Error | null)?.name;
      if (reason === 'AbortError') return null;
      if (reason !== 'NotAllowedError') throw error;
    }
  }
  (env.download ?? ((file) => download(file, env.clock)))(file);
  return 'download';
}
