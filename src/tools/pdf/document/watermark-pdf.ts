import { z } from 'zod';
import { defineTool } from '../../../core/tool.js';
import { drawAnchoredText, fontFor, loadPdf, savePdf } from '../../../engines/pdf-lib.js';
import { keepEncryption, openPdf, pdfOutput, PDF_ACCEPT } from '../_shared/pdf-input.js';

export default defineTool({
  id: 'watermark-pdf',
  section: 'pdf',
  group: 'document',
  summary: 'Stamp a text watermark on every page.',
  description:
    'Draws the text (Helvetica Bold, grey) over every page at position, rotated and translucent; it stays real text, upright as the page is displayed.',
  input: { kind: 'file', accept: PDF_ACCEPT },
  settings: z.object({
    text: z.string().min(1).max(200).describe('Watermark text.'),
    position: z.enum(['tl', 'tc', 'tr', 'l', 'c', 'r', 'bl', 'bc', 'br']).default('c').describe('Placement on the page.'),
    fontSize: z.int().min(6).max(72).default(48).describe('Font size in points.'),
    opacity: z.number().min(0.05).max(1).default(0.3).describe('Opacity.'),
    rotation: z.number().min(-180).max(180).default(45).describe('Rotation in degrees, counter-clockwise.'),
  }),
  needs: { engines: ['qpdf'] },
  output: 'PDF',
  examples: ['contract.pdf --text CONFIDENTIAL -o marked.pdf', 'draft.pdf --text DRAFT --position tr --rotation 0 --font-size 24'],
  async run(ctx, { files }, s) {
    const pdf = await openPdf(ctx, files[0]!, { decrypt: true });
    const doc = await loadPdf(pdf.path, pdf.name, pdf.pages);
    const font = await fontFor(doc, s.text, true);
    const pages = doc.getPages();
    for (const [i, page] of pages.entries()) {
      await drawAnchoredText(page, s.text, {
        font,
        size: s.fontSize,
        anchor: s.position,
        margin: 24,
        rotation: s.rotation,
        opacity: s.opacity,
        color: { r: 0.5, g: 0.5, b: 0.5 },
      });
      if (i % 20 === 0) ctx.progress((i / pages.length) * 90, `page ${i + 1}/${pages.length}`);
      if (ctx.signal.aborted) break;
    }
    const out = ctx.out('pdf', '-watermarked');
    await savePdf(doc, out);
    await keepEncryption(ctx, pdf, out);
    return { outputs: [pdfOutput(out)], data: { pages: pages.length } };
  },
});
