// Stands in for qrcode's lib/core/segments.js in the widget's bundle (see vite.config.ts): a BR Code
// is ASCII, so one byte-mode segment always fits, and the mode optimiser (its Dijkstra search, kanji
// and alphanumeric tables) is weight the customer's phone would download for nothing.
const ByteData = require('qrcode/lib/core/byte-data.js');

const segment = (data) => new ByteData(typeof data === 'string' ? data : data.data);

exports.fromArray = (array) => array.map(segment);
exports.fromString = (data) => [segment(data)];
exports.rawSplit = (data) => [segment(data)];
