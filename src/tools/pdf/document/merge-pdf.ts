import { z } from 'zod';
import { mapPool } from '../../../core/pool.js';
import { defineTool } from '../../../core/tool.js';
import path from 'node:path';
import { readDocInfoAndLang, TRAILER_JSON, writeDocFields, type DocInfo, type TrailerJson } from '../../../engines/pdf-info.js';
import { parseQpdfJson, qpdf } from '../../../engines/qpdf.js';
import {
  addStructure,
  countOutlineItems,
  remapOutlines,
  STRUCTURE_JSON,
  structureOf,
  type StructureJson,
} from '../../../engines/qpdf-structure.js';
import { openPdf, pdfOutput, PDF_ACCEPT } from '../_shared/pdf-input.js';

export default defineTool({
  id: 'merge-pdf',
  section: 'pdf',
  group: 'document',
  summary: 'Combine up to 20 PDFs into one, in upload order.',
  description:
    'qpdf copies the pages of each PDF, in the order given, into one document; pages are streamed from disk, never rasterized. ' +
    'Bookmarks and attached files of every file are kept; title, author, subject, keywords and creator come from the first file that has each.',
  input: { kind: 'files', accept: PDF_ACCEPT, min: 2, max: 20 },
  settings: z.object({}),
  needs: { engines: ['qpdf'] },
  batch: false,
  output: 'PDF',
  examples: ['a.pdf b.pdf c.pdf -o merged.pdf'],
  async run(ctx, { files }) {
    // Every input is checked (encryption, page count) before the merge; two files at a time keep both
    // cores busy instead of paying 60 process starts one after another. Three qpdf runs a file: the check,
    // one JSON read of its bookmarks, attachments and trailer, one of its /Info and catalog.
    let done = 0;
    const checked = await mapPool(files, 2, async (file) => {
      const pdf = await openPdf(ctx, file);
      const j = parseQpdfJson<StructureJson & TrailerJson>(
        (await qpdf(['--json', ...STRUCTURE_JSON, ...TRAILER_JSON, pdf.path], { signal: ctx.signal })).stdout,
        'the document structure',
      );
      const structure = structureOf(j);
      const { info, lang } = await readDocInfoAndLang(pdf.path, { signal: ctx.signal }, j);
      ctx.progress(++done * (40 / files.length), `checked ${done}/${files.length}`);
      return { ...pdf, ...structure, info, lang };
    });
    const pages = checked.reduce((a, p) => a + p.pages, 0);
    // Owner-password-only PDFs open without a password; qpdf reads them directly.
    const sources = checked.map((p) => p.path);
    const out = ctx.out('pdf', '-merged');
    ctx.progress(50, 'merging');
    // qpdf's --empty merge keeps no outline: each file's bookmarks follow, moved to where its pages landed.
    let offset = 0;
    const outline = checked.flatMap((c) => {
      const shift = offset;
      offset += c.pages;
      return remapOutlines(c.outline, (p) => p + shift);
    });
    // Attached files are not part of any page: --empty --pages leaves them behind. A file whose
    // attachment names clash with an earlier file's gets its own prefix ("2-notes.txt").
    const seen = new Set<string>();
    const attachments = checked.flatMap((c, i) => {
      if (!c.attachments.length) return [];
      const clash = c.attachments.some((k) => seen.has(k));
      for (const k of c.attachments) seen.add(clash ? `${i + 1}-${k}` : k);
      return [{ file: c.path, prefix: clash ? `${i + 1}-` : undefined }];
    });
    // Up to 20 large files: qpdf streams them, but give it more time than a single-file operation.
    const o = { signal: ctx.signal, timeoutMs: 600_000, workDir: ctx.workDir };
    // --empty starts a document without an information dictionary: the merged file had no title at all.
    // Each field comes from the first file that has it (what PDFBox's merger, behind Stirling-PDF, does).
    const info: DocInfo = {};
    for (const c of checked) for (const [k, v] of Object.entries(c.info) as [keyof DocInfo, string][]) info[k] ??= v;
    const more = outline.length > 0 || attachments.length > 0;
    const hasInfo = Object.keys(info).length > 0;
    // The language too, of the first file that declares one; written in the same pass as the fields.
    const lang = checked.find((c) => c.lang)?.lang;
    const fields = hasInfo || lang !== undefined;
    const merged = more || fields ? path.join(ctx.workDir, 'merged.pdf') : out;
    await qpdf(['--empty', '--pages', ...sources.flatMap((s) => [s, '1-z']), '--', merged], o);
    ctx.progress(85, 'bookmarks and attachments');
    const structured = fields ? path.join(ctx.workDir, 'structured.pdf') : out;
    if (more) await addStructure(merged, structured, { outline, attachments }, o);
    if (fields) await writeDocFields(more ? structured : merged, out, { info: hasInfo ? info : undefined, lang }, o);
    return {
      outputs: [pdfOutput(out)],
      data: { files: files.length, pages, bookmarks: countOutlineItems(outline), attachments: seen.size },
    };
  },
});
