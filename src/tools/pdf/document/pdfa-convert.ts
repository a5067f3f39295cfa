import { rename } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { KilnError } from '../../../core/errors.js';
import { defineTool, type RunContext } from '../../../core/tool.js';
import { toPdfA2b } from '../../../engines/ghostscript.js';
import { readDocInfo, readDocInfoAndLang, writeDocInfo, type DocInfo, type InfoField } from '../../../engines/pdf-info.js';
import { syncPdfXmp } from '../../../engines/pdf-xmp.js';
import { engineStatus } from '../../../engines/registry.js';
import { openPdf, pdfOutput, PDF_ACCEPT } from '../_shared/pdf-input.js';
import { keepLanguage, warnLostStructure } from '../_shared/structure-loss.js';
import { readStructure } from '../../../engines/qpdf-structure.js';

/**
 * Puts back the title, author, subject, keywords and creator that Ghostscript left out. Ghostscript 10.0
 * discards the whole information dictionary in PDF/A mode when any of its strings is UTF-16 ("cannot be
 * represented in XMP for PDF/A1"), which is how pdf-lib, Word and most tools write every string, so an
 * archived copy came out "Untitled". PDF/A needs the dictionary and the XMP packet to agree, so both are
 * written (the dates Ghostscript set in both are kept); without ExifTool neither is, and a warning says so.
 */
async function keepDocInfo(ctx: RunContext, before: DocInfo, out: string): Promise<string[]> {
  const after = await readDocInfo(out, { signal: ctx.signal });
  const lost = (Object.keys(before) as InfoField[]).filter((k) => after[k] !== before[k]);
  if (!lost.length) return [];
  if (!(await engineStatus('exiftool')).available) {
    ctx.warn(`the document's ${lost.join(', ')} were dropped by Ghostscript; ExifTool (\`kiln doctor\`) is needed to write them back`);
    return [];
  }
  const fields: DocInfo = Object.fromEntries(lost.map((k) => [k, before[k]!]));
  const withInfo = path.join(ctx.workDir, 'pdfa-info.pdf');
  const done = path.join(ctx.workDir, 'pdfa-xmp.pdf');
  await writeDocInfo(out, withInfo, fields, { signal: ctx.signal, workDir: ctx.workDir });
  await syncPdfXmp(withInfo, done, fields, undefined, { signal: ctx.signal, workDir: ctx.workDir });
  await rename(done, out);
  return lost;
}

export default defineTool({
  id: 'pdfa-convert',
  section: 'pdf',
  group: 'document',
  summary: 'Convert to archival PDF/A-2.',
  description:
    'Ghostscript writes PDF/A-2b: XMP identification (pdfaid:part 2, conformance B), an sRGB output intent, every font embedded, colours in RGB; ' +
    'title, author, subject, keywords and creator are kept in the information dictionary and the XMP. ' +
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
    const { info, lang } = await readDocInfoAndLang(pdf.path, { signal: ctx.signal });
    await toPdfA2b(pdf.path, out, ctx.workDir, {
      signal: ctx.signal,
      name: pdf.name,
      onPage: (p) => ctx.progress((p / pdf.pages) * 95, `page ${p}/${pdf.pages}`),
    });
    await warnLostStructure(ctx, before, out);
    await keepLanguage(ctx, lang, out);
    let restored: string[] = [];
    try {
      restored = await keepDocInfo(ctx, info, out);
    } catch (e) {
      if (e instanceof KilnError && e.code === 'CANCELLED') throw e;
      ctx.warn(`the document's title, author… could not be written back (${(e as Error).message.split('\n')[0]})`);
    }
    return {
      outputs: [pdfOutput(out)],
      data: { conformance: 'PDF/A-2b', outputIntent: 'sRGB IEC61966-2.1', pages: pdf.pages, restoredInfo: restored },
    };
  },
});
