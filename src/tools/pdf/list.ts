// One line per tool: export { default as <camelCaseId> } from './<group>/<id>.js';
// Append only (concurrent appends are atomic); keep nothing else in this file.
export {};
export { default as mergePdf } from './document/merge-pdf.js';
export { default as splitPdf } from './document/split-pdf.js';
export { default as compressPdf } from './document/compress-pdf.js';
export { default as rotatePdf } from './document/rotate-pdf.js';
export { default as extractPages } from './document/extract-pages.js';
export { default as removePages } from './document/remove-pages.js';
export { default as organizePdf } from './document/organize-pdf.js';
export { default as protectPdf } from './document/protect-pdf.js';
export { default as unlockPdf } from './document/unlock-pdf.js';
export { default as repairPdf } from './document/repair-pdf.js';
export { default as grayscalePdf } from './document/grayscale-pdf.js';
export { default as linearizePdf } from './document/linearize-pdf.js';
export { default as pdfaConvert } from './document/pdfa-convert.js';
