// One line per tool: export { default as <camelCaseId> } from './<group>/<id>.js';
// Append only (concurrent appends are atomic); keep nothing else in this file.
export {};
export { default as convertDocument } from './document/convert-document.js';
export { default as convertPresentation } from './document/convert-presentation.js';
export { default as convertSpreadsheet } from './document/convert-spreadsheet.js';
export { default as wordprocessorToPdf } from './document/wordprocessor-to-pdf.js';
export { default as spreadsheetToPdf } from './document/spreadsheet-to-pdf.js';
export { default as presentationToPdf } from './document/presentation-to-pdf.js';
