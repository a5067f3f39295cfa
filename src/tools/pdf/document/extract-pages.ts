import { z } from 'zod';
import { defineTool } from '../../../core/tool.js';
import { resolveRange } from '../../../engines/qpdf.js';
import { selectPages } from '../../../engines/qpdf-structure.js';
import { openPdf, pdfOutput, PDF_ACCEPT } from '../_shared/pdf-input.js';

export default defineTool({
  id: 'extract-pages',
  section: 'pdf',
  group: 'document',
  summary: 'Copy selected pages into a new PDF.',
  description: 'range in qpdf syntax: 1-5,8,10-z (z = last page), r1 (last), r3-r1 (last three), 5-1 (reversed), 1-z:odd.',
  input: { kind: 'file', accept: PDF_ACCEPT },
  settings: z.object({
    range: z.string().trim().min(1).max(2000).describe("Pages to extract, qpdf page-range syntax, e.g. '1-5,8,10-z' (z = last page)."),
  }),
  needs: { engines: ['qpdf'] },
  output: 'PDF',
  examples: ['in.pdf --range 1-2,z -o extract.pdf'],
  async run(ctx, { files }, s) {
    const pdf = await openPdf(ctx, files[0]!);
    const range = s.range.replace(/\s+/g, '');
    const pages = resolveRange(range, pdf.pages);
    const out = ctx.out('pdf', '-extract');
    const { bookmarks } = await selectPages(pdf.path, pages, out, { signal: ctx.signal, workDir: ctx.workDir });
    return { outputs: [pdfOutput(out)], data: { pages, bookmarks } };
  },
});
