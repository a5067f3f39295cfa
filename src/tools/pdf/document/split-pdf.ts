import { mkdir, readdir, rename } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { KilnError } from '../../../core/errors.js';
import { zipFiles } from '../../../core/zip.js';
import { mapPool } from '../../../core/pool.js';
import { defineTool } from '../../../core/tool.js';
import { readDocInfo, writeDocInfo } from '../../../engines/pdf-info.js';
import { qpdf, resolveRange } from '../../../engines/qpdf.js';
import { addStructure, readStructure, remapOutlines, selectPages } from '../../../engines/qpdf-structure.js';
import { openPdf, pdfOutput, PDF_ACCEPT } from '../_shared/pdf-input.js';
import { outputFile } from '../../_shared/output.js';

export default defineTool({
  id: 'split-pdf',
  section: 'pdf',
  group: 'document',
  summary: 'Split a PDF by page range or into chunks of N pages.',
  description:
    'mode range keeps the pages of `range` (qpdf syntax: 1-5,8,10-z, r1 = last page, 1-z:odd) in one PDF; mode every cuts the PDF into parts of everyN pages, returned as a ZIP of part-1.pdf, part-2.pdf, …',
  input: { kind: 'file', accept: PDF_ACCEPT },
  settings: z.object({
    mode: z.enum(['range', 'every']).default('range').describe('Split mode.'),
    range: z
      .string()
      .max(2000)
      .optional()
      .describe("Pages to keep (mode range), qpdf page-range syntax, e.g. '1-5,8,10-z' (z = last page)."),
    everyN: z.int().min(1).max(500).optional().describe('Chunk size in pages (mode every).'),
  }),
  check: (s) => {
    if (s.mode === 'range' && !s.range?.trim()) return 'split-pdf mode range needs range (e.g. 1-3,z).';
    if (s.mode === 'every' && s.everyN === undefined) return 'split-pdf mode every needs everyN.';
  },
  implies: { everyN: { mode: 'every' } },
  needs: { engines: ['qpdf'] },
  output: 'PDF (mode range) or ZIP of PDFs (mode every)',
  examples: ['report.pdf --range 1-3,z -o first-and-last.pdf', 'report.pdf --mode every --every-n 2 -o parts.zip'],
  async run(ctx, { files }, s) {
    const pdf = await openPdf(ctx, files[0]!);
    if (s.mode === 'range') {
      const pages = resolveRange(s.range!, pdf.pages);
      const out = ctx.out('pdf', '-split');
      const { bookmarks } = await selectPages(pdf.path, pages, out, { signal: ctx.signal, workDir: ctx.workDir });
      return { outputs: [pdfOutput(out)], data: { pages: pages.length, sourcePages: pdf.pages, bookmarks } };
    }
    const n = s.everyN!;
    const dir = path.join(ctx.workDir, 'parts');
    await mkdir(dir, { recursive: true });
    ctx.progress(10, 'splitting');
    await qpdf([`--split-pages=${n}`, pdf.path, path.join(dir, 'p-%d.pdf')], { signal: ctx.signal });
    // qpdf names parts by zero-padded page ranges, so sorting by name is page order.
    const names = (await readdir(dir)).filter((x) => x.endsWith('.pdf')).sort();
    if (names.length !== Math.ceil(pdf.pages / n))
      throw new KilnError('INTERNAL', `qpdf wrote ${names.length} parts, expected ${Math.ceil(pdf.pages / n)}.`);
    // qpdf writes parts without the outline and without attached files: each part gets the bookmarks of
    // its own pages and every attachment, as extract-pages (a page selection) keeps them.
    // Nor the title, author… (the information dictionary), which extract-pages and split range keep.
    const { outline, attachments } = await readStructure(pdf.path, { signal: ctx.signal });
    // Two more short qpdf runs per part (a 3000-part split takes half a minute more), so a creator alone,
    // which nearly every PDF names and nobody looks for in a part, does not trigger them.
    const info = await readDocInfo(pdf.path, { signal: ctx.signal });
    const hasInfo = Boolean(info.title || info.author || info.subject || info.keywords);
    const parts = names.map((_, i) => ({ path: path.join(dir, `part-${i + 1}.pdf`), name: `part-${i + 1}.pdf` }));
    let done = 0;
    // Two parts at a time: each is a few short qpdf runs, mostly process start-up.
    const o = { signal: ctx.signal, workDir: ctx.workDir };
    await mapPool(names, 2, async (name, i) => {
      const from = i * n;
      const kept = remapOutlines(outline, (page) => (page > from && page <= from + n ? page - from : null));
      const attach = attachments.length ? [{ file: pdf.path }] : [];
      let current = path.join(dir, name);
      if (kept.length || attach.length) {
        const next = hasInfo ? path.join(dir, `s-${name}`) : parts[i]!.path;
        await addStructure(current, next, { outline: kept, attachments: attach }, o);
        current = next;
      }
      if (hasInfo) await writeDocInfo(current, parts[i]!.path, info, o);
      else if (current !== parts[i]!.path) await rename(current, parts[i]!.path);
      if (outline.length || attach.length || hasInfo) ctx.progress(10 + (80 * ++done) / names.length, `part ${done}/${names.length}`);
    });
    // Always a ZIP in this mode, even with one part, so callers get one shape of answer.
    const zip = ctx.out('zip', '-parts');
    await zipFiles(parts, zip);
    return {
      outputs: [outputFile(zip)],
      data: { parts: parts.length, everyN: n, sourcePages: pdf.pages },
    };
  },
});
