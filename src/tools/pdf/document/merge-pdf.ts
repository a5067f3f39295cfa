import { z } from 'zod';
import { defineTool } from '../../../core/tool.js';
import path from 'node:path';
import { qpdf } from '../../../engines/qpdf.js';
import { countOutlineItems, readOutlines, remapOutlines, writeOutlines, type OutlineItem } from '../../../engines/qpdf-outlines.js';
import { openPdf, pdfOutput, PDF_ACCEPT } from '../_shared/pdf-input.js';

export default defineTool({
  id: 'merge-pdf',
  section: 'pdf',
  group: 'document',
  summary: 'Combine up to 20 PDFs into one, in upload order.',
  description: 'qpdf copies the pages of each PDF, in the order given, into one document; pages are streamed from disk, never rasterized.',
  input: { kind: 'files', accept: PDF_ACCEPT, min: 2, max: 20 },
  settings: z.object({}),
  needs: { engines: ['qpdf'] },
  batch: false,
  output: 'PDF',
  examples: ['a.pdf b.pdf c.pdf -o merged.pdf'],
  async run(ctx, { files }) {
    // Every input is checked (encryption, page count) before the merge; two qpdf checks at a time keep
    // both cores busy instead of paying 20 process starts one after another.
    const checked = new Array<{ path: string; pages: number; outline: OutlineItem[] }>(files.length);
    let next = 0;
    let done = 0;
    await Promise.all(
      [0, 1].map(async () => {
        while (next < files.length) {
          const i = next++;
          const pdf = await openPdf(ctx, files[i]!);
          checked[i] = { ...pdf, outline: await readOutlines(pdf.path, { signal: ctx.signal }) };
          ctx.progress(++done * (40 / files.length), `checked ${done}/${files.length}`);
        }
      }),
    );
    const pages = checked.reduce((a, p) => a + p.pages, 0);
    // Owner-password-only PDFs open without a password; qpdf reads them directly.
    const sources = checked.map((p) => p.path);
    const out = ctx.out('pdf', '-merged');
    ctx.progress(50, 'merging');
    // Up to 20 large files: qpdf streams them, but give it more time than a single-file operation.
    // qpdf's --empty merge keeps no outline: each file's bookmarks follow, moved to where its pages landed.
    let offset = 0;
    const outline = checked.flatMap((c) => {
      const shift = offset;
      offset += c.pages;
      return remapOutlines(c.outline, (p) => p + shift);
    });
    const merged = outline.length ? path.join(ctx.workDir, 'merged-no-outline.pdf') : out;
    await qpdf(['--empty', '--pages', ...sources.flatMap((s) => [s, '1-z']), '--', merged], { signal: ctx.signal, timeoutMs: 600_000 });
    if (outline.length) {
      ctx.progress(85, 'bookmarks');
      await writeOutlines(merged, outline, out, { signal: ctx.signal, timeoutMs: 600_000, workDir: ctx.workDir });
    }
    return { outputs: [pdfOutput(out)], data: { files: files.length, pages, bookmarks: countOutlineItems(outline) } };
  },
});
