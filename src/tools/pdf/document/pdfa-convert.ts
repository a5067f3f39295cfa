import { z } from 'zod';
import { defineTool } from '../../../core/tool.js';
import { toPdfA2b } from '../../../engines/ghostscript.js';
import { openPdf, pdfOutput, PDF_ACCEPT } from '../_shared/pdf-input.js';
import { warnLostStructure } from '../_shared/structure-loss.js';
import { readStructure } from '../../../engines/qpdf-structure.js';

export default defineTool({
  id: 'pdfa-convert',
  section: 'pdf',
  group: 'document',
  summary: 'Convert to archival PDF/A-2.',
  description:
    'Ghostscript writes PDF/A-2b: XMP identification (pdfaid:part 2, conformance B), an sRGB output intent, every font embedded, colours in RGB. ' +
    'No full veraPDF validation runs here; see docs/PDF.md for what is and is not checked.',
  input: { kind: 'file', accept: PDF_ACCEPT },
  settings: z.object({}),
  needs: { engines: ['qpdf', 'ghostscript'] },
  output: 'PDF/A-2b',
  examples: ['report.pdf -o archive.pdf'],
  async run(ctx, { files }) {
    const pdf = await openPdf(ctx, files[0]!, { decrypt: true });
    const out = ctx.out('pdf', '-pdfa');
    const before = await readStructure(pdf.path, { signal: ctx.signal });
    await toPdfA2b(pdf.path, out, ctx.workDir, {
      signal: ctx.signal,
      name: pdf.name,
      onPage: (p) => ctx.progress((p / pdf.pages) * 95, `page ${p}/${pdf.pages}`),
    });
    await warnLostStructure(ctx, before, out);
    return { outputs: [pdfOutput(out)], data: { conformance: 'PDF/A-2b', outputIntent: 'sRGB IEC61966-2.1', pages: pdf.pages } };
  },
});
