import { z } from 'zod';
import { defineTool } from '../../../core/tool.js';
import { pdfToText } from '../../../engines/poppler.js';
import { openPdf, PDF_ACCEPT } from '../_shared/pdf-input.js';
import { outputFile } from '../../_shared/output.js';

export default defineTool({
  id: 'pdf-to-text',
  section: 'pdf',
  group: 'document',
  summary: 'Extract the text layer of a PDF.',
  description:
    "poppler's pdftotext, in reading order, UTF-8; pages are separated by form feeds. Scanned pages have no text layer (use ocr-pdf).",
  input: { kind: 'file', accept: PDF_ACCEPT },
  settings: z.object({}),
  needs: { engines: ['qpdf', 'poppler'] },
  output: 'text (UTF-8)',
  examples: ['report.pdf -o report.txt'],
  async run(ctx, { files }) {
    const pdf = await openPdf(ctx, files[0]!);
    const out = ctx.out('txt');
    await pdfToText(pdf.path, out, { signal: ctx.signal });
    return { outputs: [outputFile(out)], data: { pages: pdf.pages } };
  },
});
