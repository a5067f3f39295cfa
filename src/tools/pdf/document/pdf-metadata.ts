import { z } from 'zod';
import { defineTool } from '../../../core/tool.js';
import { loadPdf, savePdf } from '../../../engines/pdf-lib.js';
import { openPdf, pdfOutput, PDF_ACCEPT } from '../_shared/pdf-input.js';

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
    'Sets the given fields in the document information dictionary (omitted fields stay as they are; an empty string clears one). data has the metadata before and after.',
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
    const changed = ['title', 'author', 'subject', 'keywords'].filter((k) => s[k as keyof typeof s] !== undefined);
    if (changed.length) doc.setModificationDate(new Date());
    const out = ctx.out('pdf', changed.length ? '-metadata' : '');
    await savePdf(doc, out);
    return { outputs: [pdfOutput(out)], data: { before, after: readInfo(doc), changed } };
  },
});
