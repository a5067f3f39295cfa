import { z } from 'zod';
import { defineTool } from '../../../core/tool.js';
import { GRAYSCALE_PARAMS, pdfwrite } from '../../../engines/ghostscript.js';
import { keepEncryption, openPdf, pdfOutput, PDF_ACCEPT } from '../_shared/pdf-input.js';
import { keepLanguage, warnLostStructure } from '../_shared/structure-loss.js';
import { readLang } from '../../../engines/pdf-info.js';
import { readStructure } from '../../../engines/qpdf-structure.js';

export default defineTool({
  id: 'grayscale-pdf',
  section: 'pdf',
  group: 'document',
  summary: 'Convert all page colors to grayscale.',
  description: 'Ghostscript rewrites the PDF with every colour (text, vectors, images) converted to DeviceGray; text stays text.',
  input: { kind: 'file', accept: PDF_ACCEPT },
  settings: z.object({}),
  needs: { engines: ['qpdf', 'ghostscript'] },
  output: 'PDF',
  examples: ['color.pdf -o gray.pdf'],
  async run(ctx, { files }) {
    const pdf = await openPdf(ctx, files[0]!, { decrypt: true });
    const out = ctx.out('pdf', '-grayscale');
    const before = await readStructure(pdf.path, { signal: ctx.signal });
    const lang = await readLang(pdf.path, { signal: ctx.signal });
    await pdfwrite(pdf.path, out, GRAYSCALE_PARAMS, {
      signal: ctx.signal,
      name: pdf.name,
      onPage: (p) => ctx.progress((p / pdf.pages) * 95, `page ${p}/${pdf.pages}`),
    });
    await warnLostStructure(ctx, before, out);
    await keepLanguage(ctx, lang, out);
    await keepEncryption(ctx, pdf, out);
    return { outputs: [pdfOutput(out)], data: { pages: pdf.pages } };
  },
});
