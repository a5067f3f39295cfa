import { z } from 'zod';
import { defineTool } from '../../../core/tool.js';
import { qpdf } from '../../../engines/qpdf.js';
import { openPdf, pdfOutput, PDF_ACCEPT } from '../_shared/pdf-input.js';

export default defineTool({
  id: 'linearize-pdf',
  section: 'pdf',
  group: 'document',
  summary: 'Linearize a PDF for fast web view.',
  description: 'qpdf rewrites the file linearized ("fast web view"): the first page can be shown before the whole file has downloaded.',
  input: { kind: 'file', accept: PDF_ACCEPT },
  settings: z.object({}),
  needs: { engines: ['qpdf'] },
  output: 'PDF (linearized)',
  examples: ['big.pdf -o web.pdf'],
  async run(ctx, { files }) {
    const pdf = await openPdf(ctx, files[0]!);
    const out = ctx.out('pdf', '-linearized');
    await qpdf(['--linearize', pdf.path, out], { signal: ctx.signal });
    return { outputs: [pdfOutput(out)], data: { linearized: true, pages: pdf.pages } };
  },
});
