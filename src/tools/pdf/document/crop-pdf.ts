import { z } from 'zod';
import { KilnError } from '../../../core/errors.js';
import { defineTool } from '../../../core/tool.js';
import { loadPdf, savePdf } from '../../../engines/pdf-lib.js';
import { keepEncryption, openPdf, pdfOutput, PDF_ACCEPT } from '../_shared/pdf-input.js';

export default defineTool({
  id: 'crop-pdf',
  section: 'pdf',
  group: 'document',
  summary: 'Crop every page by a uniform margin.',
  description:
    "Shrinks each page's crop box (what viewers show and print) by margin points on every edge; the content outside stays in the file.",
  input: { kind: 'file', accept: PDF_ACCEPT },
  settings: z.object({
    margin: z.number().min(0).max(2000).default(20).describe('Margin removed from each edge, in points (1/72 inch).'),
  }),
  needs: { engines: ['qpdf'] },
  output: 'PDF',
  examples: ['scan.pdf --margin 36 -o cropped.pdf'],
  async run(ctx, { files }, s) {
    const pdf = await openPdf(ctx, files[0]!, { decrypt: true });
    const doc = await loadPdf(pdf.path, pdf.name, pdf.pages);
    const m = s.margin;
    const boxes: { page: number; width: number; height: number }[] = [];
    for (const [i, page] of doc.getPages().entries()) {
      const b = page.getCropBox();
      if (2 * m >= Math.min(b.width, b.height)) {
        throw new KilnError(
          'VALIDATION_ERROR',
          `margin ${m} pt leaves nothing of page ${i + 1} (${Math.round(b.width)}×${Math.round(b.height)} pt); it must be under ${Math.floor(Math.min(b.width, b.height) / 2)}.`,
          {
            details: [{ path: 'margin', message: 'larger than half the page' }],
          },
        );
      }
      page.setCropBox(b.x + m, b.y + m, b.width - 2 * m, b.height - 2 * m);
      boxes.push({ page: i + 1, width: b.width - 2 * m, height: b.height - 2 * m });
      if (ctx.signal.aborted) break;
    }
    const out = ctx.out('pdf', '-cropped');
    await savePdf(doc, out);
    await keepEncryption(ctx, pdf, out);
    return { outputs: [pdfOutput(out)], data: { margin: m, pages: boxes.length, firstPage: boxes[0] } };
  },
});
