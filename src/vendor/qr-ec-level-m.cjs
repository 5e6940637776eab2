// Stands in for qrcode's lib/core/error-correction-code.js in the widget's bundle (see
// vite.config.ts): the widget always encodes at level M (brcode.md), so only M's column of the
// tables ships. Values for versions 1 to 40, copied from qrcode and checked against it in
// test/browser/bundle.test.ts.
const ECLevel = require('qrcode/lib/core/error-correction-level.js');

const BLOCKS = [1, 1, 1, 2, 2, 4, 4, 4, 5, 5, 5, 8, 9, 9, 10, 10, 11, 13, 14, 16, 17, 17, 18, 20, 21, 23, 25, 26, 28, 29, 31, 33, 35, 37, 38, 40, 43, 45, 47, 49];
const CODEWORDS = [
  10, 16, 26, 36, 48, 64, 72, 88, 110, 130, 150, 176, 198, 216, 240, 280, 308, 338, 364, 416, 442, 476, 504, 560, 588, 644, 700, 728,
  784, 812, 868, 924, 980, 1036, 1064, 1120, 1204, 1260, 1316, 1372,
];

function at(table, version, level) {
  if (level !== ECLevel.M) throw new Error('this build of the QR encoder has error correction level M only');
  return table[version - 1];
}

exports.getBlocksCount = (version, level) => at(BLOCKS, version, level);
exports.getTotalCodewordsCount = (version, level) => at(CODEWORDS, version, level);
