import { z } from 'zod';
import { defineTool } from '../../../core/tool.js';
import { qpdf, resolveRange, toRange } from '../../../engines/qpdf.js';
import { openPdf, pdfOutput, PDF_ACCEPT } from '../_shared/pdf-input.js';

export default defineTool({
  id: 'rotate-pdf',
  section: 'pdf',
  group: 'document',
  summary: 'Rotate all or selected pages by 90, 180 or 270 degrees.',
  description:
    "Adds the angle (clockwise) to each selected page's /Rotate; content is not re-rendered. range uses qpdf syntax (1-3,z, r1, 1-z:even).",
  input: { kind: 'file', accept: PDF_ACCEPT },
  settings: z.object({
    angle: z.literal([90, 180, 270]).default(90).describe('Rotation angle, clockwise.'),
    range: z.string().max(2000).default('1-z').describe("Pages to rotate (all by default), qpdf page-range syntax, e.g. '1-5,8,10-z'."),
  }),
  needs: { engines: ['qpdf'] },
  output: 'PDF',
  examples: ['scan.pdf --angle 180 -o upright.pdf', 'scan.pdf --angle 90 --range 2,4 -o fixed.pdf'],
  async run(ctx, { files }, s) {
    const pdf = await openPdf(ctx, files[0]!);
    const range = s.range.replace(/\s+/g, '') || '1-z';
    const pages = [...new Set(resolveRange(range, pdf.pages))].sort((a, b) => a - b);
    const out = ctx.out('pdf', '-rotated');
    await qpdf([`--rotate=+${s.angle}:${toRange(pages)}`, pdf.path, out], { signal: ctx.signal });
    return { outputs: [pdfOutput(out)], data: { angle: s.angle, rotatedPages: pages } };
  },
});
