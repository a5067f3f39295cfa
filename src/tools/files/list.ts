/** The files tools of the catalog, one line each (docs/DEVELOPING.md, "Adding a tool"). */
export { default as convertDocument } from './document/convert-document.js';
export { default as convertPresentation } from './document/convert-presentation.js';
export { default as convertSpreadsheet } from './document/convert-spreadsheet.js';
export { default as wordprocessorToPdf } from './document/wordprocessor-to-pdf.js';
export { default as spreadsheetToPdf } from './document/spreadsheet-to-pdf.js';
export { default as presentationToPdf } from './document/presentation-to-pdf.js';
export { default as htmlToPdf } from './document/html-to-pdf.js';
export { default as markdownToPdf } from './document/markdown-to-pdf.js';
export { default as markdownToDocx } from './document/markdown-to-docx.js';
export { default as markdownToHtml } from './document/markdown-to-html.js';
export { default as epubConvert } from './document/epub-convert.js';
export { default as toEpub } from './document/to-epub.js';
