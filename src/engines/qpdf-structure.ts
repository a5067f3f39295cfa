/**
 * Document-level parts (bookmarks, attached files, form fields) across qpdf page operations. qpdf keeps
 * the primary input's outline when it selects pages (items of dropped pages then point nowhere), and
 * writes no outline and no attachments for `--empty --pages` (merge) or `--split-pages`. These helpers
 * read them as qpdf resolves them (page positions, named destinations included), write a new outline
 * with `--update-from-json` and copy attachments with `--copy-attachments-from`, so files are still
 * streamed by qpdf, never loaded whole in memory.
 */
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { parseQpdfJson, qpdf, toRange, type QpdfOptions } from './qpdf.js';

export interface OutlineItem {
  title: string;
  /** 1-based page the item opens, or null when it goes nowhere in this file (a link, a dropped page, a heading). */
  page: number | null;
  open: boolean;
  kids: OutlineItem[];
}

interface QpdfOutline {
  title?: string;
  destpageposfrom1?: number | null;
  open?: boolean;
  kids?: QpdfOutline[];
}

export interface PdfStructure {
  outline: OutlineItem[];
  /** Keys (names) of the embedded files of the document's EmbeddedFiles name tree. */
  attachments: string[];
  /** Interactive form fields (AcroForm terminal fields). */
  formFields: number;
}

/** The part of qpdf's JSON that STRUCTURE_JSON asks for. */
export interface StructureJson {
  outlines?: QpdfOutline[];
  attachments?: Record<string, unknown>;
  acroform?: { fields?: unknown[] };
}

/** qpdf `--json` arguments for the keys structureOf reads: add them to any JSON run that needs the structure too. */
export const STRUCTURE_JSON = ['--json-key=outlines', '--json-key=attachments', '--json-key=acroform'];

/** Bookmarks, attachments and form fields from the JSON of a qpdf run given STRUCTURE_JSON. */
export function structureOf(j: StructureJson): PdfStructure {
  const conv = (x: QpdfOutline): OutlineItem => ({
    title: x.title ?? '',
    page: x.destpageposfrom1 ?? null,
    open: x.open ?? false,
    kids: (x.kids ?? []).map(conv),
  });
  return {
    outline: (j.outlines ?? []).map(conv),
    attachments: Object.keys(j.attachments ?? {}),
    formFields: j.acroform?.fields?.length ?? 0,
  };
}

/** Bookmarks, attachments and form fields of a PDF, from one qpdf call. */
export async function readStructure(file: string, o: QpdfOptions = {}): Promise<PdfStructure> {
  return structureOf(parseQpdfJson((await qpdf(['--json', ...STRUCTURE_JSON, file], o)).stdout, 'the document structure'));
}

/** `input` written to `out` with the attached files of each of `sources` added (a prefix per source avoids clashing names). */
export async function copyAttachments(
  input: string,
  sources: { file: string; prefix?: string }[],
  out: string,
  o: QpdfOptions = {},
): Promise<void> {
  await qpdf(
    [input, out, ...sources.flatMap((s) => ['--copy-attachments-from', s.file, ...(s.prefix ? [`--prefix=${s.prefix}`] : []), '--'])],
    o,
  );
}

/**
 * The outline with every page moved by `map` (null: the page is not in the new file). An item whose page
 * is gone disappears unless some item below it stays; then it stays as a heading that opens no page.
 */
export function remapOutlines(items: OutlineItem[], map: (page: number) => number | null): OutlineItem[] {
  const out: OutlineItem[] = [];
  for (const it of items) {
    const kids = remapOutlines(it.kids, map);
    const page = it.page === null ? null : map(it.page);
    if (page !== null || kids.length) out.push({ ...it, page, kids });
  }
  return out;
}

export function countOutlineItems(items: OutlineItem[]): number {
  return items.reduce((n, it) => n + 1 + countOutlineItems(it.kids), 0);
}

/** Items shown when the parent is open: each kid, plus its own visible items when it is open. */
function visible(items: OutlineItem[]): number {
  return items.reduce((n, it) => n + 1 + (it.open ? visible(it.kids) : 0), 0);
}

/**
 * Writes `input` to `out` with `items` as its whole outline (none when empty), the old outline dropped.
 * Item pages are 1-based positions in `input`. `workDir` holds the update file.
 */
export async function writeOutlines(input: string, items: OutlineItem[], out: string, o: QpdfOptions & { workDir: string }): Promise<void> {
  const head = parseQpdfJson<{
    qpdf: [{ maxobjectid: number }, { trailer: { value: Record<string, unknown> } }];
    pages: { object: string }[];
  }>((await qpdf(['--json', '--json-key=qpdf', '--json-key=pages', '--json-object=trailer', input], o)).stdout, 'the trailer');
  const rootRef = String(head.qpdf[1].trailer.value['/Root']);
  const rootJson = parseQpdfJson<{ qpdf: [unknown, Record<string, { value: Record<string, unknown> }>] }>(
    (await qpdf(['--json', '--json-key=qpdf', `--json-object=${rootRef}`, input], o)).stdout,
    'the catalog',
  );
  const root = { ...rootJson.qpdf[1][`obj:${rootRef}`]!.value };
  const pageRefs = head.pages.map((p) => p.object);
  const objects: Record<string, { value: Record<string, unknown> }> = {};
  let next = head.qpdf[0].maxobjectid;
  const ref = () => `${++next} 0 R`;

  /** Writes one level of items under `parent`; returns the first and last item refs. */
  const level = (list: OutlineItem[], parent: string): [string, string] => {
    const refs = list.map(() => ref());
    list.forEach((it, i) => {
      const dict: Record<string, unknown> = { '/Title': `u:${it.title}`, '/Parent': parent };
      if (i > 0) dict['/Prev'] = refs[i - 1];
      if (i < list.length - 1) dict['/Next'] = refs[i + 1];
      const target = it.page === null ? undefined : pageRefs[it.page - 1];
      if (target) dict['/Dest'] = [target, '/XYZ', null, null, null];
      if (it.kids.length) {
        const [first, last] = level(it.kids, refs[i]!);
        dict['/First'] = first;
        dict['/Last'] = last;
        // Positive: open, that many items visible below; negative: closed (PDF 32000 12.3.3).
        dict['/Count'] = (it.open ? 1 : -1) * visible(it.kids);
      }
      objects[`obj:${refs[i]}`] = { value: dict };
    });
    return [refs[0]!, refs[refs.length - 1]!];
  };

  if (items.length) {
    const outlinesRef = ref();
    const [first, last] = level(items, outlinesRef);
    objects[`obj:${outlinesRef}`] = { value: { '/Type': '/Outlines', '/First': first, '/Last': last, '/Count': visible(items) } };
    root['/Outlines'] = outlinesRef;
  } else {
    delete root['/Outlines'];
    if (root['/PageMode'] === '/UseOutlines') delete root['/PageMode'];
  }
  objects[`obj:${rootRef}`] = { value: root };
  const update = path.join(o.workDir, `qpdf-structure-${process.hrtime.bigint()}.json`);
  await writeFile(update, JSON.stringify({ qpdf: [{ jsonversion: 2 }, objects] }));
  // The old outline's objects are no longer referenced; qpdf writes only what the trailer reaches.
  await qpdf([input, out, `--update-from-json=${update}`], o);
}

/**
 * `qpdf in --pages . <pages> -- out`: the given pages (1-based, in order, repeats allowed) with the
 * document's metadata and forms. The outline is kept for the pages that stay (an item goes to the first
 * copy of its page); items of pages left out are dropped instead of pointing nowhere.
 */
export async function selectPages(
  input: string,
  pages: number[],
  out: string,
  o: QpdfOptions & { workDir: string },
): Promise<{ bookmarks: number; droppedBookmarks: number }> {
  const { outline } = await readStructure(input, o);
  const selected = outline.length ? path.join(o.workDir, `selected-${process.hrtime.bigint()}.pdf`) : out;
  await qpdf([input, '--pages', '.', toRange(pages), '--', selected], o);
  if (!outline.length) return { bookmarks: 0, droppedBookmarks: 0 };
  const position = new Map<number, number>();
  for (const [i, p] of pages.entries()) if (!position.has(p)) position.set(p, i + 1);
  const kept = remapOutlines(outline, (p) => position.get(p) ?? null);
  await writeOutlines(selected, kept, out, o);
  const bookmarks = countOutlineItems(kept);
  return { bookmarks, droppedBookmarks: countOutlineItems(outline) - bookmarks };
}

/**
 * `input` written to `out` with a new outline (pages are positions in `input`) and/or the attached files
 * of other PDFs: what qpdf's merge and split leave behind. One of the two must be given.
 */
export async function addStructure(
  input: string,
  out: string,
  add: { outline?: OutlineItem[]; attachments?: { file: string; prefix?: string }[] },
  o: QpdfOptions & { workDir: string },
): Promise<void> {
  const attachments = add.attachments ?? [];
  let current = input;
  if (add.outline?.length) {
    const next = attachments.length ? path.join(o.workDir, `outlined-${process.hrtime.bigint()}.pdf`) : out;
    await writeOutlines(current, add.outline, next, o);
    current = next;
  }
  if (attachments.length) await copyAttachments(current, attachments, out, o);
}
