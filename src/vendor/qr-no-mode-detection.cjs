// Stands in for qrcode's lib/core/regex.js in the widget's bundle (see vite.config.ts): only
// Mode.getBestModeForData reads these patterns, and with byte-mode segments (qr-byte-segments.cjs)
// nothing calls it. Answering "no" everywhere keeps any caller on byte mode.
exports.testKanji = () => false;
exports.testNumeric = () => false;
exports.testAlphanumeric = () => false;
