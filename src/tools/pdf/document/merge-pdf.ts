import { z } from 'zod';
import { defineTool } from '../../../core/tool.js';
import { qpdf } from '../../../engines/qpdf.js';
import { openPdf, pdfOutput, PDF_ACCEPT } from '../_shared/pdf-input.js';

export default defineTool({
  id: 'merge-pdf',
  section: 'pdf',
  group: 'document',
  summary: 'Combine up to 20 PDFs into one, in upload order.',
  description: 'qpdf copies the pages of each PDF, in the order given, into one document; pages are streamed from disk, never rasterized.',
  input: { kind: 'files', accept: PDF_ACCEPT, min: 2, max: 20 },
  settings: z.object({}),
  needs: { engines: ['qpdf'] },
  batch: false,
  output: 'PDF',
  examples: ['a.pdf b.pdf c.pdf -o merged.pdf'],
  async run(ctx, { files }) {
    // Every input is checked (encryption, page count) before the merge; two qpdf checks at a time keep
    // both cores busy instead of paying 20 process starts one after another.
    const checked = new Array<{ path: string; pages: number }>(files.length);
    let next = 0;
    let done = 0;
    await Promise.all(
      [0, 1].map(async () => {
        while (next < files.length) {
          const i = next++;
          checked[i] = await openPdf(ctx, files[i]!);
          ctx.progress(++done * (40 / files.length), `checked ${done}/${files.length}`);
        }
      }),
    );
    const pages = checked.reduce((a, p) => a + p.pages, 0);
    // Owner-password-only PDFs open without a password; qpdf reads them directly.
    const sources = checked.map((p) => p.path);
    const out = ctx.out('pdf', '-merged');
    ctx.progress(50, 'merging');
    // Up to 20 large files: qpdf streams them, but give it more time than a single-file operation.
    await qpdf(['--empty', '--pages', ...sources.flatMap((s) => [s, '1-z']), '--', out], { signal: ctx.signal, timeoutMs: 600_000 });
    return { outputs: [pdfOutput(out)], data: { files: files.length, pages } };
  },
});
