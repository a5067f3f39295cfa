/**
 * A PDF's document information dictionary (the trailer's /Info) read and written through qpdf's JSON,
 * so the file is streamed by qpdf and text of any script survives: qpdf decodes PDFDocEncoding and
 * UTF-16 strings to "u:" text and writes them back in whichever of the two holds them (ExifTool's PDF
 * writer keeps only UCS-2 and dropped an emoji).
 */
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { KilnError } from '../core/errors.js';
import { qpdf, type QpdfOptions } from './qpdf.js';

/** The descriptive text fields; Producer and the dates belong to whatever wrote the file. */
export const INFO_FIELDS = { title: '/Title', author: '/Author', subject: '/Subject', keywords: '/Keywords', creator: '/Creator' } as const;

export type InfoField = keyof typeof INFO_FIELDS;
export type DocInfo = Partial<Record<InfoField, string>>;

interface Head {
  qpdf: [{ maxobjectid: number }, { trailer: { value: Record<string, unknown> } }];
}

function parse<T>(text: string, what: string): T {
  try {
    return JSON.parse(text) as T;
  } catch (e) {
    throw new KilnError('INTERNAL', `qpdf gave unreadable JSON for ${what}.`, { cause: e });
  }
}

/** The trailer (qpdf's JSON v2 head: the highest object number, then the trailer dictionary). */
async function readTrailer(file: string, o: QpdfOptions): Promise<Head> {
  return parse<Head>((await qpdf(['--json', '--json-key=qpdf', '--json-object=trailer', file], o)).stdout, 'the trailer');
}

/** The reference the trailer holds under `key` (/Info, /Root), when it is one. */
function trailerRef(head: Head, key: string): string | undefined {
  const ref = head.qpdf[1].trailer.value[key];
  return typeof ref === 'string' && /^\d+ \d+ R$/.test(ref) ? ref : undefined;
}

/** The dictionaries of `refs`, read in one qpdf run; a reference whose object is no dictionary is left out. */
async function readDicts(file: string, refs: string[], o: QpdfOptions): Promise<Map<string, Record<string, unknown>>> {
  const dicts = new Map<string, Record<string, unknown>>();
  if (!refs.length) return dicts;
  const j = parse<{ qpdf: [unknown, Record<string, { value?: unknown }>] }>(
    (await qpdf(['--json', '--json-key=qpdf', ...refs.map((r) => `--json-object=${r}`), file], o)).stdout,
    'the document dictionaries',
  );
  for (const r of refs) {
    const value = j.qpdf[1][`obj:${r}`]?.value;
    if (value && typeof value === 'object') dicts.set(r, { ...(value as Record<string, unknown>) });
  }
  return dicts;
}

/** The trailer, and the /Info dictionary with its reference (undefined when the file has none). */
async function readRaw(file: string, o: QpdfOptions): Promise<{ head: Head; ref?: string; dict: Record<string, unknown> }> {
  const head = await readTrailer(file, o);
  const ref = trailerRef(head, '/Info');
  if (!ref) return { head, dict: {} };
  return { head, ref, dict: (await readDicts(file, [ref], o)).get(ref) ?? {} };
}

/** The non-empty text fields of an information dictionary. */
function infoFields(dict: Record<string, unknown>): DocInfo {
  const out: DocInfo = {};
  for (const [k, key] of Object.entries(INFO_FIELDS) as [InfoField, string][]) {
    const v = dict[key];
    // qpdf's JSON v2: "u:" is a text string decoded to Unicode ("b:" is bytes that are not text).
    if (typeof v === 'string' && v.startsWith('u:') && v.length > 2) out[k] = v.slice(2);
  }
  return out;
}

/** A catalog's /Lang, when it is text. */
function langOf(catalog: Record<string, unknown> | undefined): string | undefined {
  const lang = catalog?.['/Lang'];
  return typeof lang === 'string' && lang.startsWith('u:') && lang.length > 2 ? lang.slice(2) : undefined;
}

/** The non-empty text fields of the document information dictionary. */
export async function readDocInfo(file: string, o: QpdfOptions = {}): Promise<DocInfo> {
  return infoFields((await readRaw(file, o)).dict);
}

/**
 * readDocInfo and readLang together in two qpdf runs (the trailer, then both dictionaries) where the two
 * take up to five: merge-pdf reads both of up to 20 files.
 */
export async function readDocInfoAndLang(file: string, o: QpdfOptions = {}): Promise<{ info: DocInfo; lang?: string }> {
  const head = await readTrailer(file, o);
  const info = trailerRef(head, '/Info');
  const root = trailerRef(head, '/Root');
  const dicts = await readDicts(file, [...new Set([info, root].filter((r) => r !== undefined))], o);
  return { info: infoFields((info && dicts.get(info)) || {}), lang: langOf(root ? dicts.get(root) : undefined) };
}

/** Writes `input` to `out` with `fields` set in its document information dictionary (created if missing); other entries kept. */
export async function writeDocInfo(input: string, out: string, fields: DocInfo, o: QpdfOptions & { workDir: string }): Promise<void> {
  const { head, ref, dict } = await readRaw(input, o);
  for (const [k, v] of Object.entries(fields) as [InfoField, string][]) dict[INFO_FIELDS[k]] = `u:${v}`;
  const objects: Record<string, { value: unknown }> = {};
  const target = ref ?? `${head.qpdf[0].maxobjectid + 1} 0 R`;
  objects[`obj:${target}`] = { value: dict };
  if (!ref) objects.trailer = { value: { ...head.qpdf[1].trailer.value, '/Info': target } };
  const update = path.join(o.workDir, `qpdf-info-${process.hrtime.bigint()}.json`);
  await writeFile(update, JSON.stringify({ qpdf: [{ jsonversion: 2 }, objects] }));
  await qpdf([input, out, `--update-from-json=${update}`], o);
}

/** The catalog (trailer /Root) of `file`: its reference and dictionary. */
async function readCatalog(file: string, o: QpdfOptions): Promise<{ ref: string; dict: Record<string, unknown> } | undefined> {
  const root = trailerRef(await readTrailer(file, o), '/Root');
  const dict = root ? (await readDicts(file, [root], o)).get(root) : undefined;
  return root && dict ? { ref: root, dict } : undefined;
}

/**
 * The document's natural language (the catalog's /Lang, e.g. "de-DE"): what screen readers speak it in
 * and PDF/UA asks for. undefined when none is declared.
 */
export async function readLang(file: string, o: QpdfOptions = {}): Promise<string | undefined> {
  return langOf((await readCatalog(file, o))?.dict);
}

/** Writes `input` to `out` with the catalog's /Lang set to `lang`; the rest of the catalog kept. */
export async function writeLang(input: string, out: string, lang: string, o: QpdfOptions & { workDir: string }): Promise<void> {
  const catalog = await readCatalog(input, o);
  if (!catalog) throw new KilnError('INTERNAL', 'qpdf found no document catalog to set the language in.');
  catalog.dict['/Lang'] = `u:${lang}`;
  const update = path.join(o.workDir, `qpdf-lang-${process.hrtime.bigint()}.json`);
  await writeFile(update, JSON.stringify({ qpdf: [{ jsonversion: 2 }, { [`obj:${catalog.ref}`]: { value: catalog.dict } }] }));
  await qpdf([input, out, `--update-from-json=${update}`], o);
}
