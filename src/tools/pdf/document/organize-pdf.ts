import { z } from 'zod';
import { defineTool } from '../../../core/tool.js';
import { resolveRange } from '../../../engines/qpdf.js';
import { selectPages } from '../../../engines/qpdf-structure.js';
import { openPdf, pdfOutput, PDF_ACCEPT } from '../_shared/pdf-input.js';

export default defineTool({
  id: 'organize-pdf',
  section: 'pdf',
  group: 'document',
  summary: 'Reorder pages with an explicit page order.',
  description:
    "order in qpdf syntax, read left to right: '3,1,2,5-z' puts page 3 first; 'z-1' reverses the document. Pages left out are dropped; a page may appear twice.",
  input: { kind: 'file', accept: PDF_ACCEPT },
  settings: z.object({
    order: z.string().trim().min(1).max(2000).describe("New page order, qpdf syntax, e.g. '3,1,2,5-z'."),
  }),
  needs: { engines: ['qpdf'] },
  output: 'PDF',
  examples: ['in.pdf --order 3,1,2,4-z -o reordered.pdf', 'in.pdf --order z-1 -o reversed.pdf'],
  async run(ctx, { files }, s) {
    const pdf = await openPdf(ctx, files[0]!);
    const order = s.order.replace(/\s+/g, '');
    const pages = resolveRange(order, pdf.pages, 'order');
    const out = ctx.out('pdf', '-organized');
    const { bookmarks } = await selectPages(pdf.path, pages, out, { signal: ctx.signal, workDir: ctx.workDir });
    const missing = Array.from({ length: pdf.pages }, (_, i) => i + 1).filter((p) => !pages.includes(p));
    return { outputs: [pdfOutput(out)], data: { order: pages, droppedPages: missing, bookmarks } };
  },
});
