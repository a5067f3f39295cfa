import { rename } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { KilnError } from '../../../core/errors.js';
import { defineTool } from '../../../core/tool.js';
import { getPdfLib, loadPdf, savePdf } from '../../../engines/pdf-lib.js';
import { syncPdfXmp, type XmpField } from '../../../engines/pdf-xmp.js';
import { engineStatus } from '../../../engines/registry.js';
import { keepEncryption, openPdf, pdfOutput, PDF_ACCEPT } from '../_shared/pdf-input.js';

type Doc = Awaited<ReturnType<typeof loadPdf>>;

function readInfo(doc: Doc) {
  return {
    title: doc.getTitle() ?? null,
    author: doc.getAuthor() ?? null,
    subject: doc.getSubject() ?? null,
    keywords: doc.getKeywords() ?? null,
    creator: doc.getCreator() ?? null,
    producer: doc.getProducer() ?? null,
    creationDate: doc.getCreationDate()?.toISOString() ?? null,
    modificationDate: doc.getModificationDate()?.toISOString() ?? null,
    pages: doc.getPageCount(),
  };
}

export default defineTool({
  id: 'pdf-metadata',
  section: 'pdf',
  group: 'document',
  summary: "Set a PDF's title, author, subject and keywords.",
  description:
    'Sets the given fields in the document information dictionary and, when the PDF has one, its XMP metadata (the title viewers show; ExifTool writes it, and the old values do not stay in the file). Omitted fields stay as they are; an empty string clears one. data has the metadata before and after.',
  input: { kind: 'file', accept: PDF_ACCEPT },
  settings: z.object({
    title: z.string().max(500).optional().describe('Document title.'),
    author: z.string().max(500).optional().describe('Document author.'),
    subject: z.string().max(500).optional().describe('Document subject.'),
    keywords: z.string().max(500).optional().describe('Keywords (comma-separated).'),
  }),
  needs: { engines: ['qpdf'] },
  output: 'PDF',
  examples: ['report.pdf --title "Annual report" --author "Ada Lovelace" -o tagged.pdf'],
  async run(ctx, { files }, s) {
    const pdf = await openPdf(ctx, files[0]!, { decrypt: true });
    const doc = await loadPdf(pdf.path, pdf.name, pdf.pages);
    const before = readInfo(doc);
    if (s.title !== undefined) doc.setTitle(s.title);
    if (s.author !== undefined) doc.setAuthor(s.author);
    if (s.subject !== undefined) doc.setSubject(s.subject);
    if (s.keywords !== undefined) doc.setKeywords([s.keywords]); // one element: kept verbatim (pdf-lib joins a list with spaces)
    const changed = (['title', 'author', 'subject', 'keywords'] as const).filter((k) => s[k] !== undefined);
    const now = new Date();
    if (changed.length) doc.setModificationDate(now);
    const out = ctx.out('pdf', changed.length ? '-metadata' : '');
    const { PDFName } = await getPdfLib();
    const hasXmp = doc.catalog.get(PDFName.of('Metadata')) !== undefined;
    if (!changed.length || !hasXmp) {
      await savePdf(doc, out);
      await keepEncryption(ctx, pdf, out);
      return { outputs: [pdfOutput(out)], data: { before, after: readInfo(doc), changed } };
    }
    const infoOnly = path.join(ctx.workDir, 'info-only.pdf');
    await savePdf(doc, infoOnly);
    const fields: Partial<Record<XmpField, string>> = Object.fromEntries(changed.map((k) => [k, s[k]!]));
    let xmpUpdated = false;
    if ((await engineStatus('exiftool')).available) {
      try {
        await syncPdfXmp(infoOnly, out, fields, now, { workDir: ctx.workDir, signal: ctx.signal });
        xmpUpdated = true;
      } catch (e) {
        if (e instanceof KilnError && e.code === 'CANCELLED') throw e;
        ctx.warn(
          `the XMP metadata could not be updated (${(e as Error).message.split('\n')[0]}): viewers that read it still show the old values`,
        );
      }
    } else ctx.warn('ExifTool is not installed: the XMP metadata, which some viewers show, keeps the old values (`kiln doctor`)');
    if (!xmpUpdated) await rename(infoOnly, out);
    await keepEncryption(ctx, pdf, out);
    return { outputs: [pdfOutput(out)], data: { before, after: readInfo(doc), changed, xmpUpdated } };
  },
});
