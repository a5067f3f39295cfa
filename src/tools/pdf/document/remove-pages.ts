import { z } from 'zod';
import { KilnError } from '../../../core/errors.js';
import { defineTool } from '../../../core/tool.js';
import { resolveRange } from '../../../engines/qpdf.js';
import { selectPages } from '../../../engines/qpdf-structure.js';
import { openPdf, pdfOutput, PDF_ACCEPT } from '../_shared/pdf-input.js';

export default defineTool({
  id: 'remove-pages',
  section: 'pdf',
  group: 'document',
  summary: 'Delete selected pages from a PDF.',
  description: 'pages in qpdf syntax: 2,4-6, z (last page), r2 (second to last), 1-z:even.',
  input: { kind: 'file', accept: PDF_ACCEPT },
  settings: z.object({
    pages: z.string().trim().min(1).max(2000).describe("Pages to remove, qpdf page-range syntax, e.g. '1-5,8,10-z' (z = last page)."),
  }),
  needs: { engines: ['qpdf'] },
  output: 'PDF',
  examples: ['in.pdf --pages 1,z -o trimmed.pdf'],
  async run(ctx, { files }, s) {
    const pdf = await openPdf(ctx, files[0]!);
    const remove = new Set(resolveRange(s.pages.replace(/\s+/g, ''), pdf.pages, 'pages'));
    const keep = Array.from({ length: pdf.pages }, (_, i) => i + 1).filter((p) => !remove.has(p));
    if (keep.length === 0)
      throw new KilnError('VALIDATION_ERROR', `pages "${s.pages}" selects all ${pdf.pages} pages; a PDF needs at least one page.`, {
        details: [{ path: 'pages', message: 'removes every page' }],
      });
    const out = ctx.out('pdf', '-removed');
    const { bookmarks } = await selectPages(pdf.path, keep, out, { signal: ctx.signal, workDir: ctx.workDir });
    return { outputs: [pdfOutput(out)], data: { removedPages: [...remove].sort((a, b) => a - b), pages: keep.length, bookmarks } };
  },
});
