import path from 'node:path';
import { z } from 'zod';
import { defineTool } from '../../../core/tool.js';
import { redact } from '../../../engines/mupdf.js';
import { flattenAnnotations } from '../../../engines/qpdf.js';
import { keepEncryption, openPdf, pdfOutput, PDF_ACCEPT } from '../_shared/pdf-input.js';

export default defineTool({
  id: 'redact-pdf',
  section: 'pdf',
  group: 'document',
  summary: 'Permanently remove every occurrence of given text terms.',
  description:
    'MuPDF finds each term in the text of every page and applies true redactions: the glyphs are removed from the content streams ' +
    '(not covered), a black box is drawn where they were, and image pixels under the box are blanked. Document-information ' +
    'fields containing a term are cleared. When a form field or annotation holds a term, all of them are first flattened into the page ' +
    '(the form stops being interactive) so their text is redacted as well. data lists the matches per page. Text drawn as images or outlines (scans) is not found; run ocr-pdf first.',
  input: { kind: 'file', accept: PDF_ACCEPT },
  settings: z.object({
    terms: z.array(z.string().min(1).max(200)).min(1).max(50).describe('Text strings to redact.'),
    caseSensitive: z.boolean().default(false).describe('Case-sensitive matching.'),
  }),
  needs: { engines: ['qpdf', 'mupdf'] },
  output: 'PDF (redacted)',
  examples: ['contract.pdf --terms "Jane Doe,555-0100" -o redacted.pdf'],
  async run(ctx, { files }, s) {
    const pdf = await openPdf(ctx, files[0]!, { decrypt: true });
    const out = ctx.out('pdf', '-redacted');
    ctx.progress(10, 'redacting');
    let r = await redact(pdf.path, out, s.terms, s.caseSensitive, ctx.workDir, pdf.name, ctx.signal);
    let flattened = false;
    if (r.annotationHits > 0) {
      // A term sits in a form field or an annotation: bake them all into the page content (their
      // values then become page text), drop the interactive form, and redact that instead.
      ctx.progress(50, 'flattening forms');
      const flat = path.join(ctx.workDir, 'flattened.pdf');
      await flattenAnnotations(pdf.path, flat, { signal: ctx.signal });
      r = await redact(flat, out, s.terms, s.caseSensitive, ctx.workDir, pdf.name, ctx.signal);
      flattened = true;
    }
    const total = r.pages.reduce((a, p) => a + p.matches, 0);
    await keepEncryption(ctx, pdf, out);
    return { outputs: [pdfOutput(out)], data: { matches: total, pages: r.pages, clearedInfo: r.clearedInfo, flattenedForms: flattened } };
  },
});
