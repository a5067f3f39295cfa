import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { stem } from '../../../core/paths.js';
import { defineTool } from '../../../core/tool.js';
import { htmlToPdf, prepareChromium } from '../../../engines/chromium.js';
import { MARKDOWN_IN, toStandaloneHtml } from '../../../engines/pandoc.js';
import { outputFile } from '../../_shared/output.js';

export default defineTool({
  id: 'markdown-to-pdf',
  section: 'files',
  group: 'document',
  summary: 'Render Markdown to a styled PDF with remote resources disabled.',
  description:
    'pandoc turns the Markdown into styled HTML (tables, highlighted code), then headless Chromium prints it to A4 PDF with ' +
    'every network request blocked.',
  input: { kind: 'file', accept: ['.md', '.markdown'] },
  settings: z.object({}),
  needs: { engines: ['pandoc', 'chromium'] },
  execution: 'long',
  output: 'PDF',
  examples: ['notes.md -o notes.pdf'],
  async run(ctx, { files }) {
    prepareChromium();
    const html = path.join(ctx.workDir, 'markdown.html');
    await toStandaloneHtml(files[0]!.path, MARKDOWN_IN, html, { workDir: ctx.workDir, signal: ctx.signal, title: stem(files[0]!.name) });
    ctx.progress(40, 'rendering');
    const out = ctx.out('pdf');
    await htmlToPdf(await readFile(html), out, { signal: ctx.signal });
    return { outputs: [outputFile(out)] };
  },
});
