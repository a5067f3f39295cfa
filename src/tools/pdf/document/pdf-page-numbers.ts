import { z } from 'zod';
import { defineTool } from '../../../core/tool.js';
import { drawAnchoredText, fontFor, loadPdf, savePdf } from '../../../engines/pdf-lib.js';
import { keepEncryption, openPdf, pdfOutput, PDF_ACCEPT } from '../_shared/pdf-input.js';

export default defineTool({
  id: 'pdf-page-numbers',
  section: 'pdf',
  group: 'document',
  summary: 'Add page numbers to every page.',
  description: 'Writes 1, 2, 3… on every page (Helvetica, black, 0.4 inch from the edge), upright as the page is displayed.',
  input: { kind: 'file', accept: PDF_ACCEPT },
  settings: z.object({
    position: z.enum(['bl', 'bc', 'br', 'tl', 'tc', 'tr']).default('bc').describe('Number placement.'),
    fontSize: z.int().min(6).max(24).default(10).describe('Font size in points.'),
  }),
  needs: { engines: ['qpdf'] },
  output: 'PDF',
  examples: ['report.pdf -o numbered.pdf', 'report.pdf --position br --font-size 12'],
  async run(ctx, { files }, s) {
    const pdf = await openPdf(ctx, files[0]!, { decrypt: true });
    const doc = await loadPdf(pdf.path, pdf.name, pdf.pages);
    const font = await fontFor(doc, '0123456789');
    const pages = doc.getPages();
    for (const [i, page] of pages.entries()) {
      await drawAnchoredText(page, String(i + 1), { font, size: s.fontSize, anchor: s.position, margin: 28 });
      if (i % 20 === 0) ctx.progress((i / pages.length) * 90, `page ${i + 1}/${pages.length}`);
      if (ctx.signal.aborted) break;
    }
    const out = ctx.out('pdf', '-numbered');
    await savePdf(doc, out);
    await keepEncryption(ctx, pdf, out);
    return { outputs: [pdfOutput(out)], data: { pages: pages.length } };
  },
});
