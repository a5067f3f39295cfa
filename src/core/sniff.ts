/**
 * What a file is, from its bytes (file-type) — never only from its name. Text formats have no magic
 * bytes, so for them the content decides first (SVG, HTML, RTF) and the extension second.
 */
import path from 'node:path';
import { KilnError } from './errors.js';
import { readHead } from './read-head.js';
import { sniffCommonImage } from './sniff-common.js';
import { utf16Text } from './text-encoding.js';
import type { AcceptToken } from './tool.js';

export interface FileKind {
  /** Canonical extension without dot: jpg, png, mp4, pdf, docx, svg, md, … */
  ext: string;
  mime: string;
  /** True for text files (no magic bytes). */
  text: boolean;
}

const HEAD = 64 * 1024;

const TEXT_EXT_MIME: Record<string, string> = {
  txt: 'text/plain',
  md: 'text/markdown',
  markdown: 'text/markdown',
  csv: 'text/csv',
  tsv: 'text/tab-separated-values',
  srt: 'application/x-subrip',
  vtt: 'text/vtt',
  ass: 'text/x-ssa',
  ssa: 'text/x-ssa',
  json: 'application/json',
  html: 'text/html',
  htm: 'text/html',
  svg: 'image/svg+xml',
  xml: 'application/xml',
  eps: 'application/postscript',
};

let fileTypeMod: Promise<typeof import('file-type')> | undefined;

/** The kind of a file on disk, or of bytes held in memory (`name` then gives the extension to fall back on). */
export async function sniffFile(source: string | Buffer, originalName = typeof source === 'string' ? source : ''): Promise<FileKind> {
  const head = typeof source === 'string' ? await readHead(source, HEAD) : source.subarray(0, HEAD);
  if (head.length === 0) throw new KilnError('UNSUPPORTED_INPUT', `${path.basename(originalName)} is empty.`);
  // Before file-type: UTF-16 text (Excel's "Unicode text" CSV) holds NULs, and its BOM FF FE reads as
  // an MPEG audio frame header.
  const utf16 = utf16Text(head);
  if (utf16 !== undefined) return sniffText(utf16, originalName);
  const common = sniffCommonImage(head);
  if (common) return common;

  fileTypeMod ??= import('file-type');
  const ft =
    typeof source === 'string' ? await (await fileTypeMod).fileTypeFromFile(source) : await (await fileTypeMod).fileTypeFromBuffer(source);
  if (ft && ft.ext !== 'xml') return { ext: normalizeExt(ft.ext), mime: ft.mime, text: false };
  // file-type reads a TIFF's first IFD (camera RAW formats are TIFFs too) and answers nothing when the
  // header points it past the end of the file. The header still says TIFF: the decoder then names the
  // damage, where a cut TIFF was refused as "not a recognised file type".
  if (!ft && tiffHeader(head)) return { ext: 'tiff', mime: 'image/tiff', text: false };
  // file-type calls every document that starts with <?xml "xml": SVG is told apart by its content.
  // Binary with no known signature. Some formats (raw AAC without ADTS, TGA…) have none: trust
  // nothing and call it unknown; the tool's engine may still take it.
  if (head.includes(0))
    return { ext: path.extname(originalName).slice(1).toLowerCase() || 'bin', mime: 'application/octet-stream', text: false };
  const kind = sniffText(head.toString('utf8'), originalName);
  return ft && kind.ext === 'txt' ? { ext: 'xml', mime: 'application/xml', text: true } : kind;
}

/** A classic TIFF header: byte order II or MM, then 42 in that order. */
function tiffHeader(head: Buffer): boolean {
  if (head.length < 8) return false;
  const order = head.toString('latin1', 0, 2);
  return (order === 'II' && head.readUInt16LE(2) === 42) || (order === 'MM' && head.readUInt16BE(2) === 42);
}

/** The kind of a text file from its decoded first characters, and its name. */
function sniffText(head: string, name: string): FileKind {
  const nameExt = path.extname(name).slice(1).toLowerCase();
  const s = head.replace(/^\uFEFF/, '');
  const start = s.trimStart().slice(0, 2048).toLowerCase();
  if (start.startsWith('{\\rtf')) return { ext: 'rtf', mime: 'application/rtf', text: true };
  if (start.startsWith('%!ps')) return { ext: 'eps', mime: 'application/postscript', text: true };
  if (
    /^((<\?[^>]*\?>|<!--[\s\S]*?-->)\s*)*(<!doctype svg[^[>]*(\[[\s\S]*?\])?\s*>\s*)?((<\?[^>]*\?>|<!--[\s\S]*?-->)\s*)*<svg[\s>]/.test(
      start,
    )
  )
    return { ext: 'svg', mime: 'image/svg+xml', text: true };
  if (nameExt === 'svg' && start.includes('<svg')) return { ext: 'svg', mime: 'image/svg+xml', text: true };
  if (/^(<!doctype html|<html[\s>])/.test(start) || ((nameExt === 'html' || nameExt === 'htm') && start.includes('<')))
    return { ext: 'html', mime: 'text/html', text: true };
  if (/^webvtt/.test(start)) return { ext: 'vtt', mime: 'text/vtt', text: true };
  if (/^\d+\s*\r?\n\d\d:\d\d:\d\d[,.]\d{3} --> /.test(start)) return { ext: 'srt', mime: 'application/x-subrip', text: true };
  if (start.startsWith('[script info]')) return { ext: 'ass', mime: 'text/x-ssa', text: true };
  const ext = nameExt === 'markdown' ? 'md' : nameExt;
  if (ext && TEXT_EXT_MIME[ext]) return { ext, mime: TEXT_EXT_MIME[ext]!, text: true };
  return { ext: 'txt', mime: 'text/plain', text: true };
}

function normalizeExt(ext: string): string {
  if (ext === 'jpeg') return 'jpg';
  if (ext === 'tif') return 'tiff';
  return ext;
}

const FAMILY_MATCH: Record<string, (k: FileKind) => boolean> = {
  'image/*': (k) => k.mime.startsWith('image/') || k.ext === 'eps',
  // Containers say little about their streams (an .mp4 may hold only audio): both families accept both,
  // and media tools probe the streams they need (UNSUPPORTED_INPUT when missing).
  'video/*': (k) => k.mime.startsWith('video/') || k.mime.startsWith('audio/') || k.ext === 'gif',
  'audio/*': (k) => k.mime.startsWith('audio/') || k.mime.startsWith('video/'),
  'subtitle/*': (k) => ['srt', 'vtt', 'ass', 'ssa'].includes(k.ext),
};

const EXT_ALIASES: Record<string, string[]> = {
  jpg: ['jpg', 'jpeg'],
  jpeg: ['jpg'],
  png: ['png', 'apng'],
  tiff: ['tiff', 'tif'],
  tif: ['tiff'],
  ogg: ['ogg', 'oga', 'ogv', 'opus'],
  mp4: ['mp4', 'm4v'],
  htm: ['html'],
  markdown: ['md'],
  svgz: ['gz'],
  // Legacy Office binaries are all Compound File Binary containers.
  doc: ['cfb', 'doc'],
  xls: ['cfb', 'xls'],
  ppt: ['cfb', 'ppt'],
  heic: ['heic', 'heif', 'avif'],
  heif: ['heic', 'heif'],
  m4a: ['m4a', 'mp4', 'aac'],
  aac: ['aac', 'm4a'],
  mov: ['mov', 'qt'],
  txt: ['txt', 'csv', 'md'],
};

export function matchesAccept(kind: FileKind, accept: AcceptToken[]): boolean {
  if (accept.length === 0) return true;
  return accept.some((token) => {
    if (FAMILY_MATCH[token]) return FAMILY_MATCH[token]!(kind);
    if (token.startsWith('.')) {
      const want = token.slice(1).toLowerCase();
      return (EXT_ALIASES[want] ?? [want]).includes(kind.ext) || want === kind.ext;
    }
    if (token.endsWith('/*')) return kind.mime.startsWith(token.slice(0, -1));
    return kind.mime === token;
  });
}

export function describeAccept(accept: AcceptToken[]): string {
  return accept.map((t) => (t.endsWith('/*') ? `${t.slice(0, -2)} files` : t)).join(', ');
}

/**
 * The file's kind, refused unless it is one of `accept`. PostScript (EPS/PS) is a program, not a
 * picture: reading it means running Ghostscript's interpreter on it, so a caller serving strangers
 * (the daemon) passes `postscript: false` and such files are refused before any engine sees them.
 */
export async function requireKind(
  /** The file's path, or its bytes when held in memory. */
  source: string | Buffer,
  name: string,
  accept: AcceptToken[],
  /** taker: who refuses the file, named in the message (a tool or preset id). */
  opts: { postscript?: boolean; taker?: string } = {},
): Promise<FileKind> {
  const kind = await sniffFile(source, name);
  if (kind.ext === 'eps' && opts.postscript === false && matchesAccept(kind, accept)) {
    throw new KilnError(
      'UNSUPPORTED_INPUT',
      `${path.basename(name)} is PostScript, which this server does not read (an administrator can allow it with ALLOW_POSTSCRIPT=true).`,
      { details: { file: path.basename(name), detected: kind.mime }, reason: 'postscript-disabled' },
    );
  }
  if (!matchesAccept(kind, accept)) {
    const file = path.basename(name);
    // A password-protected DOCX, XLSX or PPTX is an encrypted package inside a Compound File: its bytes
    // say "cfb", which named nothing a person would recognise.
    if (kind.ext === 'cfb' && /\.(docx|docm|xlsx|xlsm|pptx|pptm)$/i.test(file))
      throw new KilnError(
        'UNSUPPORTED_INPUT',
        `${file} is password-protected (encrypted): open it in its office program, remove the password and save it again.`,
        { details: { file, detected: kind.mime, accepted: accept }, reason: 'document-encrypted' },
      );
    throw new KilnError(
      'UNSUPPORTED_INPUT',
      `${file} is ${kind.mime === 'application/octet-stream' ? 'not a recognised file type' : `${indefinite(kind.ext)} ${kind.ext} file (${kind.mime})`}; ${opts.taker ?? 'this tool'} takes ${describeAccept(accept)}.`,
      { details: { file, detected: kind.mime, accepted: accept } },
    );
  }
  return kind;
}

/**
 * "a" or "an" before an extension as it is read aloud: a vowel (an ods, an epub), or a letter whose name
 * starts with one when the extension is spelled out (an mp4, an svg, an html); words take "a" (a flac).
 */
function indefinite(ext: string): string {
  const e = ext.toLowerCase();
  if (/^[aeiou]/.test(e)) return 'an';
  return /^[fhlmnrsx][^aeiou]/.test(e) && e !== 'flac' ? 'an' : 'a';
}
