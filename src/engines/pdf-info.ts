/**
 * A PDF's document information dictionary (the trailer's /Info) read and written through qpdf's JSON,
 * so the file is streamed by qpdf and text of any script survives: qpdf decodes UTF-16 and ASCII strings
 * to "u:" text (other PDFDocEncoding strings come as bytes, decoded here) and writes "u:" text back in
 * whichever of PDFDocEncoding and UTF-16 holds it (ExifTool's PDF writer keeps only UCS-2 and dropped an emoji).
 */
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { KilnError } from '../core/errors.js';
import { parseQpdfJson, qpdf, type QpdfOptions } from './qpdf.js';

/** The descriptive text fields; Producer and the dates belong to whatever wrote the file. */
export const INFO_FIELDS = { title: '/Title', author: '/Author', subject: '/Subject', keywords: '/Keywords', creator: '/Creator' } as const;

export type InfoField = keyof typeof INFO_FIELDS;
export type DocInfo = Partial<Record<InfoField, string>>;

/** The trailer as qpdf's JSON v2 gives it with TRAILER_JSON: the highest object number, then the trailer dictionary. */
export interface TrailerJson {
  qpdf: [{ maxobjectid: number }, { trailer: { value: Record<string, unknown> } }];
}

/** qpdf `--json` arguments for the trailer: add them to any JSON run whose caller then reads /Info or /Lang. */
export const TRAILER_JSON = ['--json-key=qpdf', '--json-object=trailer'];

async function readTrailer(file: string, o: QpdfOptions): Promise<TrailerJson> {
  return parseQpdfJson<TrailerJson>((await qpdf(['--json', ...TRAILER_JSON, file], o)).stdout, 'the trailer');
}

/** The reference the trailer holds under `key` (/Info, /Root), when it is one. */
function trailerRef(head: TrailerJson, key: string): string | undefined {
  const ref = head.qpdf[1].trailer.value[key];
  return typeof ref === 'string' && /^\d+ \d+ R$/.test(ref) ? ref : undefined;
}

/** The dictionaries of `refs`, read in one qpdf run; a reference whose object is no dictionary is left out. */
async function readDicts(file: string, refs: string[], o: QpdfOptions): Promise<Map<string, Record<string, unknown>>> {
  const dicts = new Map<string, Record<string, unknown>>();
  if (!refs.length) return dicts;
  const j = parseQpdfJson<{ qpdf: [unknown, Record<string, { value?: unknown }>] }>(
    (await qpdf(['--json', '--json-key=qpdf', ...refs.map((r) => `--json-object=${r}`), file], o)).stdout,
    'the document dictionaries',
  );
  for (const r of refs) {
    const value = j.qpdf[1][`obj:${r}`]?.value;
    if (value && typeof value === 'object') dicts.set(r, { ...(value as Record<string, unknown>) });
  }
  return dicts;
}

/** What readFields found: the trailer, and each dictionary asked for with its reference (absent when the file has none). */
interface Fields {
  head: TrailerJson;
  info?: { ref: string; dict: Record<string, unknown> };
  root?: { ref: string; dict: Record<string, unknown> };
}

/**
 * The trailer and the information dictionary and/or catalog, in two qpdf runs at most: one for the
 * trailer (none when the caller passes the JSON of a run it made with TRAILER_JSON), one for both
 * dictionaries.
 */
async function readFields(file: string, want: { info?: boolean; root?: boolean }, o: QpdfOptions, trailer?: TrailerJson): Promise<Fields> {
  const head = trailer ?? (await readTrailer(file, o));
  const infoRef = want.info ? trailerRef(head, '/Info') : undefined;
  const rootRef = want.root ? trailerRef(head, '/Root') : undefined;
  const dicts = await readDicts(file, [...new Set([infoRef, rootRef].filter((r) => r !== undefined))], o);
  const entry = (ref: string | undefined) => {
    const dict = ref ? dicts.get(ref) : undefined;
    return ref && dict ? { ref, dict } : undefined;
  };
  return { head, info: entry(infoRef), root: entry(rootRef) };
}

/** PDFDocEncoding where it is not ISO Latin-1 (PDF 32000-1, annex D.2): bytes 0x18–0x1F, then 0x80–0xA0. */
const PDFDOC_LOW = '\u02d8\u02c7\u02c6\u02d9\u02dd\u02db\u02da\u02dc';
const PDFDOC_HIGH =
  '\u2022\u2020\u2021\u2026\u2014\u2013\u0192\u2044\u2039\u203a\u2212\u2030\u201e\u201c\u201d\u2018\u2019\u201a\u2122\ufb01\ufb02' +
  '\u0141\u0152\u0160\u0178\u017d\u0131\u0142\u0153\u0161\u017e\ufffd\u20ac';

/**
 * A PDF text string's bytes as text: UTF-16BE or UTF-8 after their byte-order mark, else PDFDocEncoding;
 * undefined for bytes that are no PDFDocEncoding text (control codes it leaves undefined, such as the NULs
 * of UTF-16 written without its mark).
 */
function pdfText(bytes: Buffer): string | undefined {
  if (bytes[0] === 0xfe && bytes[1] === 0xff) return new TextDecoder('utf-16be').decode(bytes.subarray(2));
  if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) return bytes.subarray(3).toString('utf8');
  let text = '';
  for (const b of bytes) {
    if (b < 0x18 && b !== 0x09 && b !== 0x0a && b !== 0x0d) return undefined;
    if (b >= 0x18 && b <= 0x1f) text += PDFDOC_LOW[b - 0x18];
    else if (b >= 0x80 && b <= 0xa0) text += PDFDOC_HIGH[b - 0x80];
    else text += b === 0x7f || b === 0xad ? '\ufffd' : String.fromCharCode(b);
  }
  return text;
}

/**
 * A string of qpdf's JSON v2 as text, undefined when empty or not a string. "u:" is text qpdf decoded;
 * "b:" is raw bytes, which is how qpdf gives a PDFDocEncoding string with any byte past ASCII ("Zoë"
 * written by qpdf itself from "u:Zoë" reads back as "b:5a6feb"): a text field holds text by definition.
 */
function textOf(v: unknown): string | undefined {
  if (typeof v !== 'string') return undefined;
  if (v.startsWith('u:')) return v.slice(2) || undefined;
  if (!/^b:(?:[0-9a-f]{2})+$/i.test(v)) return undefined;
  return pdfText(Buffer.from(v.slice(2), 'hex')) || undefined;
}

/** The non-empty text fields of an information dictionary. */
function infoFields(dict: Record<string, unknown> | undefined): DocInfo {
  const out: DocInfo = {};
  for (const [k, key] of Object.entries(INFO_FIELDS) as [InfoField, string][]) {
    const v = textOf(dict?.[key]);
    if (v) out[k] = v;
  }
  return out;
}

/** A catalog's /Lang, when it is text. */
function langOf(catalog: Record<string, unknown> | undefined): string | undefined {
  return textOf(catalog?.['/Lang']);
}

/** The non-empty text fields of the document information dictionary. */
export async function readDocInfo(file: string, o: QpdfOptions = {}): Promise<DocInfo> {
  return infoFields((await readFields(file, { info: true }, o)).info?.dict);
}

/**
 * The document's natural language (the catalog's /Lang, e.g. "de-DE"): what screen readers speak it in
 * and PDF/UA asks for. undefined when none is declared.
 */
export async function readLang(file: string, o: QpdfOptions = {}): Promise<string | undefined> {
  return langOf((await readFields(file, { root: true }, o)).root?.dict);
}

/**
 * readDocInfo and readLang together in two qpdf runs (the trailer, then both dictionaries) where the two
 * apart take four: merge-pdf reads both of up to 20 files. `trailer`: the JSON of a run the caller made
 * with TRAILER_JSON among its arguments, which saves the first run.
 */
export async function readDocInfoAndLang(
  file: string,
  o: QpdfOptions = {},
  trailer?: TrailerJson,
): Promise<{ info: DocInfo; lang?: string }> {
  const f = await readFields(file, { info: true, root: true }, o, trailer);
  return { info: infoFields(f.info?.dict), lang: langOf(f.root?.dict) };
}

/**
 * Writes `input` to `out` with `set.info` in its information dictionary (created if missing; other
 * entries kept) and/or `set.lang` as the catalog's /Lang (the rest of the catalog kept): one update pass
 * for both, after two reads.
 */
export async function writeDocFields(
  input: string,
  out: string,
  set: { info?: DocInfo; lang?: string },
  o: QpdfOptions & { workDir: string },
): Promise<void> {
  const f = await readFields(input, { info: !!set.info, root: set.lang !== undefined }, o);
  const objects: Record<string, { value: unknown }> = {};
  if (set.info) {
    const dict = f.info?.dict ?? {};
    for (const [k, v] of Object.entries(set.info) as [InfoField, string][]) dict[INFO_FIELDS[k]] = `u:${v}`;
    const target = f.info?.ref ?? `${f.head.qpdf[0].maxobjectid + 1} 0 R`;
    objects[`obj:${target}`] = { value: dict };
    if (!f.info) objects.trailer = { value: { ...f.head.qpdf[1].trailer.value, '/Info': target } };
  }
  if (set.lang !== undefined) {
    if (!f.root) throw new KilnError('INTERNAL', 'qpdf found no document catalog to set the language in.');
    f.root.dict['/Lang'] = `u:${set.lang}`;
    objects[`obj:${f.root.ref}`] = { value: f.root.dict };
  }
  const update = path.join(o.workDir, `qpdf-fields-${process.hrtime.bigint()}.json`);
  await writeFile(update, JSON.stringify({ qpdf: [{ jsonversion: 2 }, objects] }));
  await qpdf([input, out, `--update-from-json=${update}`], o);
}

/** Writes `input` to `out` with `fields` set in its document information dictionary (created if missing); other entries kept. */
export async function writeDocInfo(input: string, out: string, fields: DocInfo, o: QpdfOptions & { workDir: string }): Promise<void> {
  await writeDocFields(input, out, { info: fields }, o);
}

/** Writes `input` to `out` with the catalog's /Lang set to `lang`; the rest of the catalog kept. */
export async function writeLang(input: string, out: string, lang: string, o: QpdfOptions & { workDir: string }): Promise<void> {
  await writeDocFields(input, out, { lang }, o);
}
