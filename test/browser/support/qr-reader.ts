/**
 * Reads a QR code out of an image with jsQR (not our encoder), as a bank app reads a saved picture.
 * jsQR is CommonJS (UMD): loaded once as a classic script, it sets window.jsQR. Imports nothing of the
 * widget, so a test of the built bundle can use it too.
 */
type JsQR = typeof import('jsqr').default;

let loading: Promise<JsQR> | undefined;
const loadJsQr = () =>
  (loading ??= new Promise<JsQR>((resolve, reject) => {
    const script = document.createElement('script');
    script.src = '/node_modules/jsqr/dist/jsQR.js';
    script.onload = () => resolve((window as unknown as { jsQR: JsQR }).jsQR);
    script.onerror = () => reject(new Error('jsqr could not be loaded'));
    document.head.append(script);
  }));

/** The image's pixels, and the text jsQR reads in it (null: no QR found). */
export async function readQrImage(blob: Blob): Promise<{ width: number; height: number; pixels: Uint8ClampedArray; code: string | null }> {
  const jsQR = await loadJsQr();
  const bitmap = await createImageBitmap(blob);
  const canvas = Object.assign(document.createElement('canvas'), { width: bitmap.width, height: bitmap.height });
  const context = canvas.getContext('2d')!;
  context.drawImage(bitmap, 0, 0);
  const { data } = context.getImageData(0, 0, bitmap.width, bitmap.height);
  return { width: bitmap.width, height: bitmap.height, pixels: data, code: jsQR(data, bitmap.width, bitmap.height)?.data ?? null };
}
