// One line per tool: export { default as <camelCaseId> } from './<group>/<id>.js';
// Append only (concurrent appends are atomic); keep nothing else in this file.
export {};
export { default as resize } from './essentials/resize.js';
export { default as qrGenerate } from './utilities/qr-generate.js';
export { default as barcodeRead } from './utilities/barcode-read.js';
export { default as imageToBase64 } from './utilities/image-to-base64.js';
export { default as lqipPlaceholder } from './utilities/lqip-placeholder.js';
export { default as barcodeGenerate } from './utilities/barcode-generate.js';
export { default as crop } from './essentials/crop.js';
export { default as rotate } from './essentials/rotate.js';
export { default as convert } from './essentials/convert.js';
