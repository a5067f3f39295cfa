import { z } from 'zod';
import { defineTool } from '../../../core/tool.js';
import { flattenAnnotations } from '../../../engines/qpdf.js';
import { keepEncryption, openPdf, pdfOutput, PDF_ACCEPT } from '../_shared/pdf-input.js';

export default defineTool({
  id: 'flatten-pdf',
  section: 'pdf',
  group: 'document',
  summary: 'Bake form fields and annotations into the page content.',
  description:
    "qpdf first generates appearance streams for form fields that lack them (so a filled value shows as typed), then draws every annotation's " +
    'appearance into the page content and removes the annotations and the interactive form: what was visible stays visible and nothing stays editable.',
  input: { kind: 'file', accept: PDF_ACCEPT },
  settings: z.object({}),
  needs: { engines: ['qpdf'] },
  output: 'PDF',
  examples: ['filled-form.pdf -o flat.pdf'],
  async run(ctx, { files }) {
    const pdf = await openPdf(ctx, files[0]!, { decrypt: true });
    const out = ctx.out('pdf', '-flattened');
    await flattenAnnotations(pdf.path, out, { signal: ctx.signal });
    await keepEncryption(ctx, pdf, out);
    return { outputs: [pdfOutput(out)], data: { pages: pdf.pages } };
  },
});
