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

/** The trailer, and the /Info dictionary with its reference (undefined when the file has none). */
async function readRaw(file: string, o: QpdfOptions): Promise<{ head: Head; ref?: string; dict: Record<string, unknown> }> {
  const head = parse<Head>((await qpdf(['--json', '--json-key=qpdf', '--json-object=trailer', file], o)).stdout, 'the trailer');
  const info = head.qpdf[1].trailer.value['/Info'];
  if (typeof info !== 'string' || !/^\d+ \d+ R$/.test(info)) return { head, dict: {} };
  const j = parse<{ qpdf: [unknown, Record<string, { value?: unknown }>] }>(
    (await qpdf(['--json', '--json-key=qpdf', `--json-object=${info}`, file], o)).stdout,
    'the document information',
  );
  const value = j.qpdf[1][`obj:${info}`]?.value;
  return { head, ref: info, dict: value && typeof value === 'object' ? { ...(value as Record<string, unknown>) } : {} };
}

/** The non-empty text fields of the document information dictionary. */
export async function readDocInfo(file: string, o: QpdfOptions = {}): Promise<DocInfo> {
  const { dict } = await readRaw(file, o);
  const out: DocInfo = {};
  for (const [k, key] of Object.entries(INFO_FIELDS) as [InfoField, string][]) {
    const v = dict[key];
    // qpdf's JSON v2: "u:" is a text string decoded to Unicode ("b:" is bytes that are not text).
    if (typeof v === 'string' && v.startsWith('u:') && v.length > 2) out[k] = v.slice(2);
  }
  return out;
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
  const { head } = await readRaw(file, o);
  const root = head.qpdf[1].trailer.value['/Root'];
  if (typeof root !== 'string' || !/^\d+ \d+ R$/.test(root)) return undefined;
  const j = parse<{ qpdf: [unknown, Record<string, { value?: unknown }>] }>(
    (await qpdf(['--json', '--json-key=qpdf', `--json-object=${root}`, file], o)).stdout,
    'the document catalog',
  );
  const value = j.qpdf[1][`obj:${root}`]?.value;
  return value && typeof value === 'object' ? { ref: root, dict: { ...(value as Record<string, unknown>) } } : undefined;
}

/**
 * The document's natural language (the catalog's /Lang, e.g. "de-DE"): what screen readers speak it in
 * and PDF/UA asks for. undefined when none is declared.
 */
export async function readLang(file: string, o: QpdfOptions = {}): Promise<string | undefined> {
  const lang = (await readCatalog(file, o))?.dict['/Lang'];
  return typeof lang === 'string' && lang.startsWith('u:') && lang.length > 2 ? lang.slice(2) : undefined;
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
