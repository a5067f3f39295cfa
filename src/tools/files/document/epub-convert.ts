import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { stem } from '../../../core/paths.js';
import { defineTool } from '../../../core/tool.js';
import { guardZip } from '../../../core/zip-guard.js';
import { htmlToPdf, prepareChromium } from '../../../engines/chromium.js';
import { toDocx, toMarkdown, toStandaloneHtml } from '../../../engines/pandoc.js';
import { outputFile } from '../../_shared/output.js';

export default defineTool({
  id: 'epub-convert',
  section: 'files',
  group: 'document',
  summary: 'Convert an EPUB e-book to PDF, DOCX, HTML or Markdown.',
  description:
    'pandoc reads the EPUB (after a ZIP bomb check). HTML is one self-contained file with the images inlined; PDF is that HTML ' +
    'printed by headless Chromium with the network blocked; DOCX keeps headings, lists, tables and images; Markdown (GitHub ' +
    'flavour) keeps the text structure but not the images.',
  input: { kind: 'file', accept: ['.epub'] },
  settings: z.object({
    format: z.enum(['pdf', 'docx', 'html', 'md']).describe('Output format.'),
  }),
  needs: { engines: ['pandoc'] },
  execution: 'long',
  output: 'PDF, DOCX, HTML or Markdown',
  examples: ['book.epub --format pdf -o book.pdf'],
  async run(ctx, { files }, s) {
    const input = files[0]!;
    await guardZip(input.path, 'epub', undefined, ctx.signal);
    const job = { workDir: ctx.workDir, signal: ctx.signal };
    const out = ctx.out(s.format);
    ctx.progress(10, 'converting');
    if (s.format === 'docx') await toDocx(input.path, 'epub', out, job);
    else if (s.format === 'md') await toMarkdown(input.path, 'epub', out, job);
    else if (s.format === 'html') await toStandaloneHtml(input.path, 'epub', out, { ...job, title: stem(input.name), selfContained: true });
    else {
      prepareChromium();
      const html = path.join(ctx.workDir, 'book.html');
      await toStandaloneHtml(input.path, 'epub', html, { ...job, title: stem(input.name), selfContained: true });
      ctx.progress(50, 'rendering');
      await htmlToPdf(await readFile(html), out, { signal: ctx.signal, timeoutMs: 180_000 });
    }
    return { outputs: [outputFile(out)] };
  },
});
