/**
 * jsQR in Node, for tests that read a QR back with a decoder that is not ours. It is CommonJS: Node's
 * default import is its module.exports, which TypeScript types as the module, hence the unwrapping.
 */
import jsQRModule from 'jsqr';

export const jsQR = ((jsQRModule as unknown as { default?: unknown }).default ?? jsQRModule) as unknown as typeof jsQRModule.default;
