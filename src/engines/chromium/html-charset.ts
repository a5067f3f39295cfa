/**
 * The Content-Type an HTML file is served with to Chromium. A fixed `charset=utf-8` overrode the
 * document's own `<meta charset>` (the HTTP header wins over it), so a page saved in Windows-1252 (Word's
 * "Web Page", older sites) or Shift_JIS printed as U+FFFD boxes. A document that names its encoding (a
 * BOM, or a meta tag where browsers look for it: the first 1024 bytes) is served without a charset and
 * the browser follows it; any other is served with the encoding read from its bytes.
 */
import { bomEncoding, detectBytesEncoding } from '../../core/text-encoding.js';

/** How far the HTML encoding prescan looks for a meta tag (WHATWG HTML, "prescan a byte stream"). */
const PRESCAN_BYTES = 1024;

/** Attribute text of a tag, quoted values skipped whole (so "charset=" inside a description is no declaration). */
const ATTRS = `(?:[^>"']|"[^"]*"|'[^']*')*?`;
/** A `<meta charset>`, or an http-equiv Content-Type whose content names a charset. */
const META_CHARSET = new RegExp(
  `<meta${ATTRS}\\scharset\\s*=|<meta(?=${ATTRS}\\shttp-equiv\\s*=\\s*["']?content-type)[^>]*\\scontent\\s*=\\s*["'][^"']*charset\\s*=`,
  'i',
);

/** Whether the head of the document declares its encoding: `<meta charset>` or an http-equiv Content-Type. */
export function declaresCharset(bytes: Uint8Array): boolean {
  const head = Buffer.from(bytes.buffer, bytes.byteOffset, Math.min(bytes.byteLength, PRESCAN_BYTES)).toString('latin1');
  return META_CHARSET.test(head);
}

export function htmlContentType(html: string | Uint8Array): string {
  if (typeof html === 'string') return 'text/html; charset=utf-8';
  const bytes = Buffer.from(html.buffer, html.byteOffset, html.byteLength);
  if (bomEncoding(bytes) || declaresCharset(bytes)) return 'text/html';
  return `text/html; charset=${detectBytesEncoding(bytes)}`;
}
